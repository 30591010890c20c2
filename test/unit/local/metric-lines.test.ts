// The local runtime's metric lines: a data folder that refuses them loses them, never a call, and
// says so once on standard error rather than dropping them in silence.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricLinesOf, metricsFileName } from '../../../infra/local/metric-lines.js';
import { verifies } from '../../support/requirements.js';
import { temporaryFolder } from '../../support/runtime-process.js';

describe('metric lines in the data folder', () => {
  let dataDir: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    dataDir = await temporaryFolder('metric-lines-');
    // A folder where the file should be: every append fails.
    await mkdir(join(dataDir.path, metricsFileName));
  });
  afterAll(async () => dataDir.remove());

  it(verifies('code.failures-logged', 'tells the first of a run of failed metric writes, and keeps going'), () => {
    const warnings: string[] = [];
    const lines = metricLinesOf('INFO', dataDir.path, (line) => void warnings.push(line));
    if (lines.to !== 'file') throw new Error(`expected the metrics file, got ${lines.to}`);
    lines.write('{"a":1}');
    lines.write('{"a":2}');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^Metric lines cannot be written to .*metrics\.jsonl \(.*\); they are dropped/);
  });
});
