// The warm figures judged against floors measured in the same run: the gateway and its floor run in
// alternation (each round in a rotated order), the rounds fall into consecutive runs, each run gives
// a ratio, and the judged figure is the median of the runs' ratios, printed with their spread. A
// machine twice as fast moves both sides alike, so the ratio holds on any machine; the runs say how
// much it moves on this one.
import { type Row, within } from './report.js';
import { median, ms, ratio } from './stats.js';

/** How many runs a judged ratio is the median of. */
export const judgedRuns = 3;

/** Consecutive runs of the rounds, as even as can be (the earlier ones a round longer); never an empty run. */
export const runsOf = <T>(rounds: readonly T[], runs: number): T[][] => {
  const count = Math.max(1, Math.min(runs, rounds.length));
  const shortest = Math.floor(rounds.length / count);
  const longer = rounds.length % count;
  const split: T[][] = [];
  let start = 0;
  for (let run = 0; run < count && start < rounds.length; run += 1) {
    const size = shortest + (run < longer ? 1 : 0);
    split.push(rounds.slice(start, start + size));
    start += size;
  }
  return split;
};

/** One run's figures: the medians of its rounds on either side, and their ratio. */
export interface RunRatio {
  readonly measured: number;
  readonly floor: number;
  readonly ratio: number;
}

export interface JudgedRatio {
  /** The median of the runs' ratios: the judged figure. */
  readonly ratio: number;
  /** Each run, in the order they ran. */
  readonly runs: readonly RunRatio[];
  /** The gateway's and the floor's figures over every round (medians), for context. */
  readonly measured: number;
  readonly floor: number;
}

/**
 * The gateway's round figures over its floor's (index by index: the same rounds), judged in
 * `runs` runs: each run's ratio is the median of its rounds on one side over the other's.
 */
export const judgedRatio = (measured: readonly number[], floor: readonly number[], runs: number): JudgedRatio => {
  const rounds = Math.min(measured.length, floor.length);
  const measuredRuns = runsOf(measured.slice(0, rounds), runs);
  const floorRuns = runsOf(floor.slice(0, rounds), runs);
  const ratios = measuredRuns.map((run, index): RunRatio => {
    const runMeasured = median(run);
    const runFloor = median(floorRuns[index] ?? []);
    return { measured: runMeasured, floor: runFloor, ratio: runMeasured / runFloor };
  });
  return {
    ratio: median(ratios.map((run) => run.ratio)),
    runs: ratios,
    measured: median(measured.slice(0, rounds)),
    floor: median(floor.slice(0, rounds)),
  };
};

/** A ratio's target: at most or at least `limit` times the floor, as the summary writes it. */
export interface RatioTarget {
  readonly bound: '≤' | '≥';
  readonly limit: number;
  /** Decimals the target is written with (1.10×, 0.9×). */
  readonly digits: number;
}

export const targetText = (target: RatioTarget): string => `${target.bound} ${target.limit.toFixed(target.digits)}×`;

const meets = (target: RatioTarget, value: number): boolean =>
  target.bound === '≤' ? value <= target.limit : value >= target.limit;

/** The spread of a judgement's runs: `3 runs 1.05–1.12×`, or nothing for a single run. */
export const spreadText = (runs: readonly RunRatio[]): string => {
  if (runs.length < 2) return '';
  const ratios = runs.map((run) => run.ratio);
  return `; ${runs.length} runs ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
};

/**
 * The summary row of a judged ratio: `1.08× (6.37 ms vs 5.90 ms floor; 3 runs 1.05–1.12×)`, the
 * absolute figures (in `unit`) only as context.
 */
export const ratioRow = (
  what: string,
  judged: JudgedRatio,
  target: RatioTarget,
  unit: (value: number) => string,
): Row => ({
  what,
  measured: `${ratio(judged.ratio)} (${unit(judged.measured)} vs ${unit(judged.floor)} floor${spreadText(judged.runs)})`,
  target: targetText(target),
  mark: meets(target, judged.ratio) ? 'pass' : 'OVER',
});

/** The summary row of a floor itself: what it measured, never judged. */
export const floorRow = (what: string, measured: string): Row => ({ what, measured, target: 'floor', mark: 'info' });

/**
 * A figure judged once against its floor (a fresh process's time): `1.21× (291 ms vs 240 ms
 * floor)`, within its target when at most `bound` times the floor. A floor that did not come out
 * positive judges nothing.
 */
export const overFloorRow = (
  what: string,
  times: { readonly measuredMs: number; readonly floorMs: number },
  bound: number,
  digits = 0,
): Row => {
  const over = times.floorMs > 0 ? times.measuredMs / times.floorMs : Number.NaN;
  return {
    what,
    measured: `${ratio(over)} (${ms(times.measuredMs, digits)} vs ${ms(times.floorMs, digits)} floor)`,
    target: `≤ ${bound}×`,
    mark: Number.isFinite(over) ? within(over <= bound) : 'not measured',
  };
};
