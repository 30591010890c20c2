// The benchmark's arithmetic, apart from anything timed: the cost table's dollars from known
// usage and prices, and the memory figure's growth fit.
import { describe, expect, it } from 'vitest';
import {
  biggestLine,
  type CallUsage,
  costLines,
  followedAsTask,
  gbSeconds,
  markdownCostTable,
  readUnits,
  taskFollowingRequests,
  totalPerMillion,
  writeUnits,
} from '../../bench/costs.js';
import { flatBytesPer10kCalls, growthPer10kCalls } from '../../bench/memory-growth.js';
import { unitPrices } from '../../bench/prices.js';
import { leastSquaresSlope } from '../../bench/stats.js';
import { verifies } from '../support/requirements.js';

/** A held call that was approved, in round figures. */
const approved: CallUsage = {
  name: 'held, approved',
  // 1024 MB for 99.2 ms bills as 100 ms: 0.1 GB-s; 512 MB for 10 ms: 0.005 GB-s.
  invocations: [
    { fn: 'mcp', memoryMb: 1024, durationMs: 99.2 },
    { fn: 'held-call-steps', memoryMb: 512, durationMs: 10 },
  ],
  apiRequests: 3,
  // 2 writes of a 1500-byte record: 2 KB each, and again for the by-agent index.
  writeUnits: writeUnits({ writes: 2, reads: 1, itemBytes: 1500 }),
  readUnits: readUnits({ writes: 2, reads: 1, itemBytes: 1500 }),
  transitions: 3,
  kmsRequests: 1,
  events: 1,
};

const dollarsOf = (usage: CallUsage) =>
  Object.fromEntries(costLines(usage, unitPrices).map((line) => [line.item, line.dollarsPerMillion]));

describe('the AWS cost table', () => {
  it(verifies('perf.cost-table', 'bills Lambda per GB-second with the duration rounded up to the millisecond'), () => {
    expect(gbSeconds({ fn: 'mcp', memoryMb: 1024, durationMs: 99.2 })).toBeCloseTo(0.1, 12);
    expect(gbSeconds({ fn: 'mcp', memoryMb: 512, durationMs: 1.01 })).toBeCloseTo(0.001, 12);
  });

  it(verifies('perf.cost-table', 'counts store units from the writes, reads and record size'), () => {
    expect(writeUnits({ writes: 2, reads: 0, itemBytes: 1500 })).toBe(8);
    expect(writeUnits({ writes: 3, reads: 0, itemBytes: 1024 })).toBe(6);
    expect(readUnits({ writes: 0, reads: 2, itemBytes: 4097 })).toBe(4);
    expect(readUnits({ writes: 0, reads: 1, itemBytes: 1500 })).toBe(1);
  });

  it(verifies('perf.cost-table', 'prices a million calls line by line at the unit prices'), () => {
    const dollars = dollarsOf(approved);
    // 105 000 GB-s × $0.0000133334
    expect(dollars['lambda-duration']).toBeCloseTo(1.400007, 6);
    expect(dollars['lambda-requests']).toBeCloseTo(0.4, 9);
    expect(dollars['api-requests']).toBeCloseTo(3, 9);
    // 8 million WRU at $0.625 a million; 1 million RRU at $0.125
    expect(dollars['dynamodb-writes']).toBeCloseTo(5, 9);
    expect(dollars['dynamodb-reads']).toBeCloseTo(0.125, 9);
    // 3 million transitions at $0.025 a thousand
    expect(dollars['step-functions']).toBeCloseTo(75, 9);
    expect(dollars.kms).toBeCloseTo(3, 9);
    expect(dollars.eventbridge).toBeCloseTo(1, 9);
    const lines = costLines(approved, unitPrices);
    expect(totalPerMillion(lines)).toBeCloseTo(88.925007, 6);
    expect(lines.find((line) => line.item === 'lambda-duration')?.perMillion).toBeCloseTo(105_000, 6);
  });

  it(verifies('perf.cost-table', 'names the biggest line and writes the table as Markdown'), () => {
    const lines = costLines(approved, unitPrices);
    expect(biggestLine(lines)?.item).toBe('step-functions');
    const direct: CallUsage = {
      ...approved,
      name: 'direct read',
      invocations: [{ fn: 'mcp', memoryMb: 1024, durationMs: 10 }],
      apiRequests: 1,
      transitions: 0,
      kmsRequests: 0,
      events: 0,
    };
    const markdown = markdownCostTable([
      { usage: direct, lines: costLines(direct, unitPrices) },
      { usage: approved, lines: lines },
    ]).split('\n');
    expect(markdown[0]).toBe('| per million calls | direct read | held, approved |');
    expect(markdown[1]).toBe('| --- | ---: | ---: |');
    expect(markdown).toContain('| Step Functions state transitions | $0 | $75 |');
    expect(markdown.at(-1)).toBe('| **total** | **$6.46** | **$89** |');
    expect(biggestLine(costLines(direct, unitPrices))?.item).toBe('dynamodb-writes');
  });
});

describe('the cost of following a held call as a task', () => {
  /** Decided after 10 minutes, polled every 5 s: each request 10 ms of a 1024 MB function and one 4 KB read. */
  const follow = {
    decisionMs: 10 * 60_000,
    pollIntervalMs: 5_000,
    request: { fn: 'mcp', memoryMb: 1024, durationMs: 10 },
    readUnits: 1,
  };

  it(
    verifies(
      'perf.cost-table-followed-task',
      'counts a tasks/get per poll interval until the decision, then one tasks/result',
    ),
    () => {
      expect(taskFollowingRequests(follow)).toBe(121);
      expect(taskFollowingRequests({ ...follow, decisionMs: 12_000 })).toBe(4);
      expect(taskFollowingRequests({ ...follow, pollIntervalMs: 30_000 })).toBe(21);
    },
  );

  it(
    verifies(
      'perf.cost-table-followed-task',
      'adds an invocation, an API request and a read per request to the held call, and names the biggest line',
    ),
    () => {
      const followed = followedAsTask(approved, follow);
      expect(followed.name).toBe('held, approved, followed as a task');
      expect(followed.invocations).toHaveLength(2 + 121);
      expect(followed).toMatchObject({ apiRequests: 124, readUnits: 1 + 121, writeUnits: 8, transitions: 3 });
      const dollars = dollarsOf(followed);
      // 124 million requests at $1 a million; 123 million invocations at $0.20.
      expect(dollars['api-requests']).toBeCloseTo(124, 9);
      expect(dollars['lambda-requests']).toBeCloseTo(24.6, 9);
      // 105 000 GB-s of the held call and 121 × 0.01 GB-s a call more.
      expect(dollars['lambda-duration']).toBeCloseTo((105_000 + 1_210_000) * 0.0000133334, 6);
      expect(dollars['dynamodb-reads']).toBeCloseTo(122 * 0.125, 9);
      expect(dollars['step-functions']).toBeCloseTo(75, 9);
      // Following costs more than holding: the API requests outgrow the transitions.
      expect(biggestLine(costLines(followed, unitPrices))?.item).toBe('api-requests');
    },
  );
});

describe("the memory figure's growth fit", () => {
  it('is the least-squares slope', () => {
    expect(
      leastSquaresSlope([
        { x: 0, y: 5 },
        { x: 1, y: 8 },
        { x: 2, y: 11 },
      ]),
    ).toBeCloseTo(3, 12);
    // Noise around a flat line fits flat.
    expect(
      leastSquaresSlope([
        { x: 0, y: 10 },
        { x: 1, y: 12 },
        { x: 2, y: 10 },
        { x: 3, y: 12 },
        { x: 4, y: 11 },
      ]),
    ).toBeCloseTo(0.2, 12);
    expect(leastSquaresSlope([{ x: 1, y: 1 }])).toBeNaN();
    expect(
      leastSquaresSlope([
        { x: 1, y: 1 },
        { x: 1, y: 2 },
      ]),
    ).toBeNaN();
  });

  it("fits the load's second half only, per 10 000 calls, for the resident size or what JavaScript keeps", () => {
    const mb = 1024 * 1024;
    // Warm-up: 100 MB more over the first 10 000 calls; then the resident size 2 MB more per
    // 10 000 calls (the store's native memory) while what JavaScript keeps stays at 60 MB.
    const samples = [
      { elapsedMs: 0, calls: 0, rssBytes: 100 * mb, reachableBytes: 40 * mb },
      { elapsedMs: 25_000, calls: 10_000, rssBytes: 200 * mb, reachableBytes: 60 * mb },
      { elapsedMs: 50_000, calls: 20_000, rssBytes: 202 * mb, reachableBytes: 60 * mb },
      { elapsedMs: 75_000, calls: 30_000, rssBytes: 204 * mb, reachableBytes: 60 * mb },
      { elapsedMs: 100_000, calls: 40_000, rssBytes: 206 * mb, reachableBytes: 60 * mb },
    ];
    expect(growthPer10kCalls(samples, 100_000)).toBeCloseTo(2 * mb, 3);
    expect(growthPer10kCalls(samples, 100_000) > flatBytesPer10kCalls).toBe(true);
    expect(growthPer10kCalls(samples, 100_000, 'reachableBytes')).toBeCloseTo(0, 6);
    const flat = samples.map((sample, index) => (index === 0 ? sample : { ...sample, rssBytes: 200 * mb }));
    expect(growthPer10kCalls(flat, 100_000)).toBeCloseTo(0, 6);
    const leaking = samples.map((sample) => ({ ...sample, reachableBytes: 60 * mb + sample.calls * 300 }));
    expect(growthPer10kCalls(leaking, 100_000, 'reachableBytes')).toBeCloseTo(3_000_000, 0);
  });
});
