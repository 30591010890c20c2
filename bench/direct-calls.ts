// Direct calls (erp.purchase_orders.create for 250: the policy runs it at once, a write): the
// gateway's own cost in latency mode and its throughput at fixed concurrency, each judged as a ratio
// to the minimal server over three runs (floor-ratios.ts), and the store requests one call makes.
import type { Bed } from './bed.js';
import {
  floorRow,
  type JudgedRatio,
  judgedRatio,
  judgedRuns,
  type RatioTarget,
  ratioRow,
  spreadText,
} from './floor-ratios.js';
import type { Target } from './load.js';
import type { Measured, StoreUse } from './measured.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { median, ms, perSecond, quantile, ratio, rotated, signedMs } from './stats.js';

const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));

export interface LatencyFigures {
  /** Median of the round medians. */
  readonly p50: number;
  /** Over every timed call of every round. */
  readonly p99: number;
  readonly roundMedians: readonly number[];
  readonly samples: number;
  readonly failures: number;
  readonly firstFailure: string | null;
  /**
   * CPU time of this process's main thread per call, median of the rounds: the server side of each
   * call (the target, the store, the ERP), the load generator being on a thread of its own.
   */
  readonly cpuPerCall: number;
}

const noFigures: LatencyFigures = {
  p50: Number.NaN,
  p99: Number.NaN,
  roundMedians: [],
  samples: 0,
  failures: 0,
  firstFailure: null,
  cpuPerCall: Number.NaN,
};

/** Latency mode: rounds in which each target runs its calls on one keep-alive connection in turn. */
export const latencyRounds = async (
  bed: Bed,
  targets: readonly Target[],
  options: {
    rounds: number;
    count: number;
    warmup: number;
    /** Untimed calls per target before the first round, then `primed` (if given) before timing. */
    primer: number;
    primed?: () => Promise<void>;
  },
): Promise<(target: Target) => LatencyFigures> => {
  const collected = new Map(
    targets.map((target) => [
      target.name,
      {
        roundMedians: [] as number[],
        pooled: [] as number[],
        cpu: [] as number[],
        failures: 0,
        firstFailure: null as string | null,
      },
    ]),
  );
  if (options.primer > 0) {
    for (const target of targets) await bed.load.run({ kind: 'latency', target, warmup: 0, count: options.primer });
    bed.erp.reset();
  }
  await options.primed?.();
  for (let round = 0; round < options.rounds; round += 1) {
    const progress: string[] = [];
    for (const target of rotated(targets, round)) {
      const cpuBefore = process.threadCpuUsage();
      const result = await bed.load.run({ kind: 'latency', target, warmup: options.warmup, count: options.count });
      const cpu = process.threadCpuUsage(cpuBefore);
      // The demo ERP keeps every call it received; dropping them keeps its memory flat.
      bed.erp.reset();
      const entry = collected.get(target.name);
      if (entry === undefined) continue;
      entry.cpu.push((cpu.user + cpu.system) / 1000 / (options.warmup + options.count));
      entry.roundMedians.push(median(result.samples));
      entry.pooled.push(...result.samples);
      entry.failures += result.failures;
      entry.firstFailure ??= result.firstFailure;
      progress.push(`${target.name} ${ms(median(result.samples))}`);
    }
    line(`round ${round + 1}/${options.rounds}, p50: ${progress.join(', ')}`);
  }
  const figures = new Map(
    [...collected].map(([name, entry]): [string, LatencyFigures] => [
      name,
      {
        p50: median(entry.roundMedians),
        p99: quantile(entry.pooled, 0.99),
        roundMedians: entry.roundMedians,
        samples: entry.pooled.length,
        failures: entry.failures,
        firstFailure: entry.firstFailure,
        cpuPerCall: median(entry.cpu),
      },
    ]),
  );
  for (const [name, entry] of figures) {
    if (entry.failures > 0) line(`!! ${name}: ${entry.failures} bad answers; the first: ${entry.firstFailure ?? ''}`);
  }
  return (target) => figures.get(target.name) ?? noFigures;
};

/** Each target's latency figures, a row each, with what the server behind it does. */
export const printLatency = (measured: readonly (readonly [Target, LatencyFigures])[]): void => {
  table([
    ['target', 'p50', 'p99', 'CPU/call', 'calls', 'what it does'],
    ...measured.map(([target, figures]) => [
      target.name,
      ms(figures.p50),
      ms(figures.p99),
      ms(figures.cpuPerCall),
      String(figures.samples),
      target.description,
    ]),
  ]);
};

/** The own cost's target: the gateway's p50 at most 1.10× the minimal server's (issue 35). */
export const ownCostTarget: RatioTarget = { bound: '≤', limit: 1.1, digits: 2 };
/** Throughput's: at least 0.9× the minimal server's at the same concurrency. */
export const throughputTarget: RatioTarget = { bound: '≥', limit: 0.9, digits: 1 };

export const ownCostWhat = `gateway's own cost per direct tools/call: p50 vs the minimal server, median of ${judgedRuns} runs`;
export const ownCostFloorWhat = '  floor: the minimal server (the same system call and two store writes), p50';
export const ownCpuWhat = "  main thread's CPU per call, gateway − minimal (in units of the SDK server's own cost)";
export const throughputWhat = (connections: number): string =>
  `throughput at ${connections} connections vs the minimal server (same store), median of ${judgedRuns} runs`;
export const throughputFloorWhat = (connections: number): string =>
  `  floor: the minimal server at ${connections} connections`;

/** Each run of a judged ratio, as the section prints it. */
const printRuns = (judged: JudgedRatio, unit: (value: number) => string, names: readonly [string, string]) => {
  table([
    ['run', names[0], names[1], 'ratio'],
    ...judged.runs.map((run, index) => [String(index + 1), unit(run.measured), unit(run.floor), ratio(run.ratio)]),
  ]);
  line(
    `judged: ${ratio(judged.ratio)}, the median of the ${judged.runs.length} runs' ratios${spreadText(judged.runs)}`,
  );
};

/** The readings beside the judged one: the CPU per call and the SDK's own cost, both in this run. */
const ownCostContext = (figures: (target: Target) => LatencyFigures, targets: Bed['targets']): Row => {
  const { gateway, minimal, sdk, bare } = targets;
  const ownCpu = figures(gateway).cpuPerCall - figures(minimal).cpuPerCall;
  line(`gateway − minimal, CPU per call: ${signedMs(ownCpu)}`);
  line(`minimal − bare, p50: ${signedMs(figures(minimal).p50 - figures(bare).p50)} (the two store writes)`);
  const sdkOwn = figures(sdk).p50 - figures(bare).p50;
  line(`SDK − bare, p50: ${signedMs(sdkOwn)} (the MCP SDK's stateless server alone)`);
  return {
    what: ownCpuWhat,
    measured: `${signedMs(ownCpu)} (${ratio(ownCpu / sdkOwn)}; SDK − bare ${signedMs(sdkOwn)} p50)`,
    target: 'reported',
    mark: 'info',
  };
};

export const ownCost = async (bed: Bed, plan: Plan): Promise<Row[]> => {
  heading("The gateway's own cost per direct tools/call (latency mode: one keep-alive connection per target)");
  line(
    `${plan.latencyPrimer} untimed calls per target, then ${plan.latencyRounds} interleaved rounds × ` +
      `${plan.latencyCount} timed calls per target (after ${plan.latencyWarmup} untimed), judged in ` +
      `${judgedRuns} runs of consecutive rounds; erp.purchase_orders.create for 250, a direct write`,
  );
  const { gateway, minimal, sdk, bare } = bed.targets;
  const figures = await latencyRounds(bed, [gateway, minimal, sdk, bare], {
    rounds: plan.latencyRounds,
    count: plan.latencyCount,
    warmup: plan.latencyWarmup,
    primer: plan.latencyPrimer,
  });
  printLatency([gateway, minimal, sdk, bare].map((target) => [target, figures(target)]));
  line("CPU/call: the main thread's CPU time per call (the target, the store and the ERP; the load runs apart)");
  const judged = judgedRatio(figures(gateway).roundMedians, figures(minimal).roundMedians, judgedRuns);
  printRuns(judged, ms, ['gateway p50', 'minimal p50']);
  return [
    ratioRow(ownCostWhat, judged, ownCostTarget, ms),
    floorRow(ownCostFloorWhat, ms(judged.floor)),
    ownCostContext(figures, bed.targets),
  ];
};

/** Rotated rounds of throughput runs, each target's rate and p50 under load per round. */
const throughputRounds = async (bed: Bed, plan: Plan, targets: readonly Target[]) => {
  const run = async (target: Target, durationMs: number) => {
    const result = await bed.load.run({ kind: 'throughput', target, connections: plan.connections, durationMs });
    bed.erp.reset();
    return result;
  };
  for (const target of targets) await run(target, plan.throughputWarmupMs);
  const rates = new Map(targets.map((target) => [target.name, [] as number[]]));
  const underLoad = new Map(targets.map((target) => [target.name, [] as number[]]));
  for (let round = 0; round < plan.throughputRounds; round += 1) {
    const progress: string[] = [];
    for (const target of rotated(targets, round)) {
      const result = await run(target, plan.throughputMs);
      if (result.failures > 0) {
        line(`!! ${target.name}: ${result.failures} bad answers; the first: ${result.firstFailure ?? ''}`);
      }
      const rate = (result.completed / result.elapsedMs) * 1000;
      rates.get(target.name)?.push(rate);
      underLoad.get(target.name)?.push(median(result.samples));
      progress.push(`${target.name} ${perSecond(rate)}`);
    }
    line(`round ${round + 1}/${plan.throughputRounds}: ${progress.join(', ')}`);
  }
  return {
    rates: (target: Target) => rates.get(target.name) ?? [],
    underLoad: (target: Target) => underLoad.get(target.name) ?? [],
  };
};

export const throughput = async (bed: Bed, plan: Plan): Promise<Row[]> => {
  const { gateway, minimal } = bed.targets;
  const targets = [gateway, minimal];
  heading(`Throughput at ${plan.connections} connections (fixed concurrency, rotated order)`);
  line(
    `warm-up ${plan.throughputWarmupMs} ms per target, then ${plan.throughputRounds} rounds × ` +
      `${plan.throughputMs} ms per target, judged in ${judgedRuns} runs of consecutive rounds; the same direct call`,
  );
  const { rates, underLoad } = await throughputRounds(bed, plan, targets);
  table([
    ['target', 'requests/s (median of rounds)', 'p50 under load'],
    ...targets.map((target) => [target.name, perSecond(median(rates(target))), ms(median(underLoad(target)))]),
  ]);
  const judged = judgedRatio(rates(gateway), rates(minimal), judgedRuns);
  printRuns(judged, perSecond, ['gateway', 'minimal']);
  return [
    ratioRow(throughputWhat(plan.connections), judged, throughputTarget, perSecond),
    floorRow(throughputFloorWhat(plan.connections), perSecond(judged.floor)),
  ];
};

export const storeRequests = async (bed: Bed, plan: Plan, measured: Measured): Promise<Row[]> => {
  heading('DynamoDB requests per direct call (counted on the wire at the store)');
  const perCall = async (target: Target) => {
    bed.watch.resetStore();
    const result = await bed.load.run({ kind: 'latency', target, warmup: 0, count: plan.storeCountCalls });
    // A write made after the answer still counts.
    await sleep(100);
    bed.erp.reset();
    if (result.failures > 0) throw new Error(`${target.name}: ${result.firstFailure ?? 'bad answers'}`);
    const operations = [...bed.watch.storeOperations()]
      .map(([operation, count]) => `${operation} ${count / plan.storeCountCalls}`)
      .join(', ');
    return {
      writes: bed.watch.storeWrites() / plan.storeCountCalls,
      reads: bed.watch.storeReads() / plan.storeCountCalls,
      operations,
    };
  };
  /** The size of the record the last call left (its JSON): what a write request unit is counted on. */
  const lastRecordBytes = async () => {
    const { items } = await bed.runtime.store.listByAgent('procurement-agent', { limit: 1 });
    return items[0] === undefined ? Number.NaN : Buffer.byteLength(JSON.stringify(items[0]));
  };
  const gateway = await perCall(bed.targets.gateway);
  const writeBytes = await lastRecordBytes();
  const read = await perCall(bed.targets.read);
  const readBytes = await lastRecordBytes();
  const minimal = await perCall(bed.targets.minimal);
  table([
    ['target', 'writes/call', 'reads/call', 'record', 'requests/call by operation'],
    [bed.targets.gateway.name, String(gateway.writes), String(gateway.reads), `${writeBytes} B`, gateway.operations],
    [bed.targets.read.name, String(read.writes), String(read.reads), `${readBytes} B`, read.operations],
    [bed.targets.minimal.name, String(minimal.writes), String(minimal.reads), '', minimal.operations],
  ]);
  line(`${plan.storeCountCalls} direct calls each, one after another; record: the call's item as JSON`);
  const use = (counted: { writes: number; reads: number }, itemBytes: number): StoreUse => ({
    writes: counted.writes,
    reads: counted.reads,
    itemBytes,
  });
  measured.store.directWrite = use(gateway, writeBytes);
  measured.store.directRead = use(read, readBytes);
  return [
    {
      what: 'DynamoDB writes per direct call',
      measured: String(gateway.writes),
      target: '≤ 2',
      mark: within(gateway.writes <= 2),
    },
  ];
};
