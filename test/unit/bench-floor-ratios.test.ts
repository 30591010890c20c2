// The bench's warm figures judged against floors: rounds split into runs, the median of the runs'
// ratios with their spread, the summary rows they print, the rotated order the rounds run in, and
// the numbered bodies that make each held call one of its own.
import { describe, expect, it } from 'vitest';
import { floorRow, judgedRatio, judgedRuns, ratioRow, runsOf, targetText } from '../../bench/floor-ratios.js';
import { bodyNumberer } from '../../bench/load.js';
import { ms, perSecond, rotated } from '../../bench/stats.js';
import { verifies } from '../support/requirements.js';

const ownCostTarget = { bound: '≤', limit: 1.1, digits: 2 } as const;
const throughputTarget = { bound: '≥', limit: 0.9, digits: 1 } as const;

describe('the runs a judged ratio is the median of', () => {
  it(verifies('perf.own-cost-three-runs', 'splits the rounds into three runs of consecutive rounds'), () => {
    expect(judgedRuns).toBe(3);
    expect(runsOf([1, 2, 3, 4, 5, 6, 7, 8, 9], 3)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ]);
    // Uneven: the earlier runs a round longer; every round in exactly one run.
    expect(runsOf([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 3)).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7],
      [8, 9, 10],
    ]);
    // Fewer rounds than runs: a run per round, never an empty one.
    expect(runsOf([1, 2], 3)).toEqual([[1], [2]]);
    expect(runsOf([], 3)).toEqual([]);
  });

  it(
    verifies('perf.own-cost-three-runs', "judges the median of the runs' ratios, each run's medians over each other"),
    () => {
      // Round by round: gateway and floor in the same rounds.
      const gateway = [6.0, 6.2, 6.4, 7.0, 7.1, 7.2, 5.0, 5.5, 6.0];
      const floor = [5.0, 5.0, 5.0, 6.0, 6.0, 6.0, 5.5, 5.5, 5.5];
      const judged = judgedRatio(gateway, floor, 3);
      expect(judged.runs.map((run) => run.measured)).toEqual([6.2, 7.1, 5.5]);
      expect(judged.runs.map((run) => run.floor)).toEqual([5.0, 6.0, 5.5]);
      expect(judged.runs.map((run) => run.ratio)).toEqual([6.2 / 5.0, 7.1 / 6.0, 1]);
      // The median of 1.24, 1.183 and 1: not the ratio of the pooled medians (6.2 / 5.5 = 1.127).
      expect(judged.ratio).toBeCloseTo(7.1 / 6.0, 10);
      expect(judged.measured).toBe(6.2);
      expect(judged.floor).toBe(5.5);
    },
  );

  it(verifies('perf.own-cost-three-runs', 'prints the ratio, its floor and the spread of the runs'), () => {
    const judged = judgedRatio([6.2, 6.3, 6.1, 6.4, 6.2, 6.3], [5.9, 5.8, 5.9, 5.6, 6.0, 5.9], 3);
    const row = ratioRow("gateway's own cost", judged, ownCostTarget, ms);
    expect(row).toEqual({
      what: "gateway's own cost",
      measured: '1.07× (6.25 ms vs 5.90 ms floor; 3 runs 1.05–1.09×)',
      target: '≤ 1.10×',
      mark: 'pass',
    });
    const over = ratioRow('x', judgedRatio([6.6, 6.7, 6.8], [5.9, 5.9, 5.9], 3), ownCostTarget, ms);
    expect(over.mark).toBe('OVER');
    expect(floorRow('  floor: the minimal server', ms(5.9))).toEqual({
      what: '  floor: the minimal server',
      measured: '5.90 ms',
      target: 'floor',
      mark: 'info',
    });
  });

  it(
    verifies('perf.throughput-three-runs', 'judges throughput at least 0.9× its floor, as requests per second'),
    () => {
      expect(targetText(throughputTarget)).toBe('≥ 0.9×');
      const judged = judgedRatio([150, 160, 170], [170, 170, 170], 3);
      expect(ratioRow('throughput', judged, throughputTarget, perSecond)).toEqual({
        what: 'throughput',
        measured: '0.94× (160/s vs 170/s floor; 3 runs 0.88–1.00×)',
        target: '≥ 0.9×',
        mark: 'pass',
      });
      expect(
        ratioRow('throughput', judgedRatio([140, 150, 150], [170, 170, 170], 3), throughputTarget, perSecond).mark,
      ).toBe('OVER');
    },
  );

  it(verifies('perf.held-reply-floor', 'prints one judgement without a spread: the ratio and both p50s'), () => {
    const judged = judgedRatio([10.21], [8.43], 1);
    expect(ratioRow('held reply', judged, { bound: '≤', limit: 1.3, digits: 1 }, ms)).toEqual({
      what: 'held reply',
      measured: '1.21× (10.21 ms vs 8.43 ms floor)',
      target: '≤ 1.3×',
      mark: 'pass',
    });
  });
});

describe('the order the rounds run in', () => {
  it(verifies('perf.own-cost-three-runs', 'alternates gateway and floor: each leads every other round'), () => {
    const order = [0, 1, 2, 3].map((round) => rotated(['gateway', 'floor'], round));
    expect(order).toEqual([
      ['gateway', 'floor'],
      ['floor', 'gateway'],
      ['gateway', 'floor'],
      ['floor', 'gateway'],
    ]);
    // With more targets, each still runs once a round and leads in turn.
    const four = [0, 1, 2, 3].map((round) => rotated(['g', 'm', 's', 'b'], round));
    expect(four.map((targets) => targets[0])).toEqual(['g', 'm', 's', 'b']);
    for (const targets of four) expect([...targets].sort()).toEqual(['b', 'g', 'm', 's']);
  });
});

describe('numbered bodies', () => {
  it(verifies('perf.held-reply-floor', 'gives each held call of a load its own order, every body as long'), () => {
    const next = bodyNumberer();
    const target = { body: '{"description":"Printer paper ~~~~"}', numbered: '~~~~' };
    const bodies = [next(target), next(target), next({ body: 'plain' }), next(target)];
    expect(bodies).toEqual([
      '{"description":"Printer paper 0001"}',
      '{"description":"Printer paper 0002"}',
      'plain',
      '{"description":"Printer paper 0003"}',
    ]);
    expect(new Set(bodies.map((body) => body.length)).size).toBe(2);
  });
});
