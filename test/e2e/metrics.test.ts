// The local runtime writes the metrics the functions write in AWS: EMF lines, after each request,
// which the same parser reads as CloudWatch would; in the data folder's metrics file, not on the
// terminal, which is for people.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsFileName } from '../../infra/local/metric-lines.js';
import { ResultObject } from '../../shared/result.js';
import { type MetricPoint, parseEmfLines, sumOf, valuesOf } from '../support/emf.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

let runtime: RuntimeProcess;
let client: Client;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;

beforeAll(async () => {
  folder = await temporaryFolder('gateway-metrics-');
  runtime = await startRuntimeProcess(['--data-dir', folder.path]);
  client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
});
afterAll(async () => {
  await client?.close();
  await runtime?.stop();
  await folder?.remove();
});

const metricsFile = (): string => {
  try {
    return readFileSync(join(folder.path, metricsFileName), 'utf8');
  } catch {
    return '';
  }
};

const emfLines = (): string[] =>
  metricsFile()
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('{') && line.includes('"CloudWatchMetrics"'));

const order = (amount: string) => ({ vendor_id: 'V-100', amount, currency: 'EUR', description: 'Chairs' });

/** The points written so far, once they include what `done` looks for (a flush follows each request). */
const pointsWhen = async (done: (points: MetricPoint[]) => boolean): Promise<MetricPoint[]> => {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const points = parseEmfLines(emfLines());
    if (done(points)) return points;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return parseEmfLines(emfLines());
};

describe('metrics of the local runtime', () => {
  it(verifies('ops.metrics', 'writes EMF lines for a direct call and a held call'), async () => {
    const tool = 'erp.purchase_orders.create';
    const direct = await client.callTool({ name: tool, arguments: order('500') });
    expect(ResultObject.parse(direct.structuredContent).status).toBe('succeeded');
    const held = await client.callTool({ name: tool, arguments: order('1500') });
    expect(ResultObject.parse(held.structuredContent).status).toBe('pending_approval');

    const points = await pointsWhen(
      (found) => sumOf(found, 'Decisions', { Decision: 'held', Policy: 'large-purchase-orders' }) > 0,
    );
    expect(sumOf(points, 'Decisions', { Decision: 'run_now', Policy: 'small-purchase-orders' })).toBe(1);
    expect(sumOf(points, 'Decisions', { Decision: 'held', Policy: 'large-purchase-orders' })).toBe(1);
    expect(sumOf(points, 'Calls', { Tool: tool, AgentGroup: 'procurement', Outcome: 'succeeded' })).toBe(1);
    // The configuration was just read: far from stale.
    const staleness = valuesOf(points, 'ConfigurationStaleness');
    expect(staleness.length).toBeGreaterThan(0);
    expect(Math.max(...staleness)).toBeLessThan(50);
    for (const line of emfLines()) expect(line).not.toContain(demoTokens.procurement);
  });

  it(verifies('local.terminal-for-people', 'writes the metric lines to the data folder, none on the terminal'), () => {
    expect(emfLines().length).toBeGreaterThan(0);
    expect(runtime.output()).not.toContain('CloudWatchMetrics');
  });
});

describe('metrics of a local runtime logging warnings only', () => {
  let quiet: RuntimeProcess;
  let quietClient: Client;

  beforeAll(async () => {
    quiet = await startRuntimeProcess(['--memory', '--log-level', 'warn']);
    quietClient = await connectAgent(quiet.mcpUrl, demoTokens.procurement);
  });
  afterAll(async () => {
    await quietClient?.close();
    await quiet?.stop();
  });

  it(verifies('ops.metrics-local-level', 'writes no metric line at --log-level warn'), async () => {
    const tool = 'erp.purchase_orders.create';
    const direct = await quietClient.callTool({ name: tool, arguments: order('500') });
    expect(ResultObject.parse(direct.structuredContent).status).toBe('succeeded');
    // The call's answer came after its record was final; the flush follows the request at once, so
    // a second call answered means the first call's flush point has passed.
    const second = await quietClient.callTool({ name: tool, arguments: order('400') });
    expect(ResultObject.parse(second.structuredContent).status).toBe('succeeded');
    expect(quiet.output()).not.toContain('CloudWatchMetrics');
    // The runtime still says what it is doing at its own level: its banner came out.
    expect(quiet.output()).toContain(quiet.mcpUrl);
  });
});
