// The benchmark's cold-start floors apart from anything timed: the order fresh processes start in
// round by round, the rows that judge a figure against its floor, and what the floor's bundle loads
// (what every function needs before its first answer, and nothing of the gateway's).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { floorRow, overFloorRow } from '../../bench/floor-ratios.js';
import { median, ms, rotated } from '../../bench/stats.js';
import { bundleFunction, coldStartInputs } from '../../infra/bundling/bundle-function.js';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';

describe('the rounds of fresh processes', () => {
  const probes = ['bare start', 'floor', 'mcp', 'console'] as const;

  it(verifies('perf.import-floor', 'starts the first round in the order given'), () => {
    expect(rotated(probes, 0)).toEqual(['bare start', 'floor', 'mcp', 'console']);
  });

  it(verifies('perf.import-floor', 'rotates the order each round, so each process takes every place once'), () => {
    const rounds = [0, 1, 2, 3].map((round) => rotated(probes, round));
    expect(rounds[1]).toEqual(['floor', 'mcp', 'console', 'bare start']);
    for (let place = 0; place < probes.length; place += 1) {
      expect(new Set(rounds.map((round) => round[place]))).toEqual(new Set(probes));
    }
    // Every round starts each process once, and the next cycle repeats the first.
    for (const round of rounds) expect([...round].sort()).toEqual([...probes].sort());
    expect(rotated(probes, 4)).toEqual(rounds[0]);
  });

  it(
    verifies('perf.first-call-floor', 'alternates the function and the floor, the function first in the first round'),
    () => {
      const sides = ['function', 'floor'] as const;
      expect([0, 1, 2].map((round) => rotated(sides, round))).toEqual([
        ['function', 'floor'],
        ['floor', 'function'],
        ['function', 'floor'],
      ]);
      expect(rotated([], 3)).toEqual([]);
    },
  );
});

describe('a figure judged against its floor', () => {
  it(
    verifies(['perf.import-floor', 'perf.first-call-floor'], 'reads as the ratio, the absolute times as context'),
    () => {
      expect(overFloorRow('import', { measuredMs: 291, floorMs: 240 }, 1.3)).toEqual({
        what: 'import',
        measured: '1.21× (291 ms vs 240 ms floor)',
        target: '≤ 1.3×',
        mark: 'pass',
      });
      expect(overFloorRow('first call', { measuredMs: 800.4, floorMs: 500 }, 1.5)).toEqual({
        what: 'first call',
        measured: '1.60× (800 ms vs 500 ms floor)',
        target: '≤ 1.5×',
        mark: 'OVER',
      });
    },
  );

  it(
    verifies('perf.import-floor', 'passes at the bound itself and below 1 (a function lighter than the floor)'),
    () => {
      expect(overFloorRow('import', { measuredMs: 130, floorMs: 100 }, 1.3).mark).toBe('pass');
      expect(overFloorRow('import', { measuredMs: 131, floorMs: 100 }, 1.3).mark).toBe('OVER');
      expect(overFloorRow('import', { measuredMs: 56, floorMs: 225 }, 1.3).measured).toBe(
        '0.25× (56 ms vs 225 ms floor)',
      );
    },
  );

  it(verifies('perf.first-call-floor', 'judges nothing when the floor is not positive or not measured'), () => {
    for (const floorMs of [0, -3, Number.NaN]) {
      const row = overFloorRow('first call', { measuredMs: 400, floorMs }, 1.5);
      expect(row.mark).toBe('not measured');
      expect(row.measured.startsWith('n/a (400 ms vs ')).toBe(true);
    }
  });

  it(verifies('perf.import-floor', "says the floor's own figure as a floor, judged by nothing"), () => {
    expect(floorRow('floor', ms(224.6, 0))).toEqual({
      what: 'floor',
      measured: '225 ms',
      target: 'floor',
      mark: 'info',
    });
    expect(floorRow('floor', ms(4.567, 2)).measured).toBe('4.57 ms');
  });

  it(verifies('perf.import-floor', 'takes the median of the rounds, the middle pair averaged'), () => {
    expect(median([300, 240, 260])).toBe(260);
    expect(median([300, 240, 260, 250])).toBe(255);
  });
});

describe("the floor's bundle", () => {
  let out: string | undefined;
  afterAll(async () => {
    if (out !== undefined) await rm(out, { recursive: true, force: true });
  });

  it(verifies(
    ['perf.import-floor', 'perf.first-call-floor'],
    "loads at cold start the runtime's DynamoDB clients, Powertools and its own few lines, nothing else",
  ), async () => {
    out = await mkdtemp(join(tmpdir(), 'gateway-bench-floor-'));
    const bundle = await bundleFunction('cold-start-floor', join(out, 'floor'), {
      cedar: false,
      entry: projectPath('bench', 'cold-start-floor.ts'),
    });
    const loaded = coldStartInputs(bundle).map(({ path }) => path);
    expect(loaded).toContain('gateway-required:@aws-sdk/client-dynamodb');
    expect(loaded).toContain('gateway-required:@aws-sdk/lib-dynamodb');
    expect(loaded.some((path) => path.includes('node_modules/@aws-lambda-powertools/logger/'))).toBe(true);
    expect(loaded.some((path) => path.includes('node_modules/@aws-lambda-powertools/metrics/'))).toBe(true);
    const own = new Set([
      'bench/cold-start-floor.ts',
      'bench/floor-plan.ts',
      'functions/commons/logger.ts',
      'shared/adapters/emf-names.ts',
    ]);
    const allowed = (path: string) =>
      own.has(path) ||
      /^gateway-required:(node:[a-z_]+|@aws-sdk\/(client-dynamodb|lib-dynamodb))$/.test(path) ||
      /node_modules\/(@aws-lambda-powertools\/(logger|metrics|commons)|@aws\/lambda-invoke-store)\//.test(path);
    expect(loaded.filter((path) => !allowed(path))).toEqual([]);
  }, 60_000);
});
