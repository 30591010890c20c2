// The local runtime writes the metrics the functions write in AWS: EMF lines on its standard output,
// after each request, which the same parser reads as CloudWatch would.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResultObject } from '../../shared/result.js';
import { type MetricPoint, parseEmfLines, sumOf, valuesOf } from '../support/emf.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

let runtime: RuntimeProcess;
let client: Client;

beforeAll(async () => {
  runtime = await startRuntimeProcess(['--memory']);
  client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
});
afterAll(async () => {
  await client?.close();
  await runtime?.stop();
});

const emfLines = (): string[] =>
  runtime
    .output()
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
  it(verifies('ops.metrics', 'writes EMF lines for a direct call and a held call on its standard output'), async () => {
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
