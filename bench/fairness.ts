// Fairness between agents: a runtime with the demo configuration's own (default) limits, one agent
// (support) making plain direct reads one at a time, first alone, then while another agent
// (procurement) floods the gateway with 250 KB calls of thousands of unknown fields (about 8 a
// second, after a first 40 at once), each refused invalid_arguments or by its byte allowance, then
// alone again. The figure: the support agent's p50 under the flood as a ratio to its idle p50 in
// the same run. Bounded: a fixed number of timed calls per phase, each with its own deadline.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { projectPath } from '../infra/paths.js';
import type { Bed } from './bed.js';
import { startRuntime } from './demo-runtime.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { median, ms, ratio } from './stats.js';

export const fairnessWhat = "another agent's direct read p50 under a flood of 250 KB calls, against idle";
export const fairnessTarget = '≤ 2×';

const tool = 'erp.shipments.track';
/** About 250 KB of arguments: the one field the tool takes and thousands it does not. */
const floodBytes = 250_000;
const floodPerSecond = 8;
const floodAtOnce = 40;
/** Flood calls in flight at most: the sender never queues without bound. */
const floodInFlight = 64;
const callDeadlineMs = 30_000;

const bodyOf = (args: Record<string, unknown>): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: tool,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });

const headersOf = (token: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${token}`,
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': tool,
});

const floodBody = (): string => {
  const args: Record<string, string> = { tracking_number: '1Z999AA10123456784' };
  for (let index = 0, length = 0; length < floodBytes; index += 1) {
    args[`field_${index}`] = 'x'.repeat(36);
    length += `field_${index}`.length + 42;
  }
  return bodyOf(args);
};

const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));

/** One call; its time in ms and its answer's text. */
const send = async (pool: Pool, token: string, body: string): Promise<{ ms: number; text: string }> => {
  const started = performance.now();
  const response = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: headersOf(token),
    body,
    signal: AbortSignal.timeout(callDeadlineMs),
  });
  const text = await response.body.text();
  return { ms: performance.now() - started, text };
};

/** The support agent's plain reads, one at a time with a short pause: their times. */
const plainReads = async (pool: Pool, count: number): Promise<number[]> => {
  const body = bodyOf({ tracking_number: '1Z999AA10123456784' });
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const { ms: time, text } = await send(pool, 'demo-support-token', body);
    if (!text.includes('"status":"succeeded"'))
      throw new Error(`the plain read did not succeed: ${text.slice(0, 300)}`);
    times.push(time);
    await sleep(20);
  }
  return times;
};

/** Floods until stopped: what its calls were answered (code → count). */
const flood = (pool: Pool): { stop: () => Promise<Map<string, number>> } => {
  const body = floodBody();
  const answers = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let running = true;
  const one = () => {
    if (inFlight.size >= floodInFlight) return;
    const call = send(pool, 'demo-procurement-token', body).then(
      ({ text }) => {
        const code = /"code":"([a-z_]+)"/.exec(text)?.[1] ?? 'other';
        answers.set(code, (answers.get(code) ?? 0) + 1);
      },
      () => {
        answers.set('failed', (answers.get('failed') ?? 0) + 1);
      },
    );
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call));
  };
  const loop = (async () => {
    for (let index = 0; index < floodAtOnce; index += 1) one();
    while (running) {
      await sleep(1000 / floodPerSecond);
      one();
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await Promise.allSettled([...inFlight]);
      return answers;
    },
  };
};

export const fairness = async (bed: Bed, plan: Plan): Promise<Row[]> => {
  heading(`Fairness: ${fairnessWhat}`);
  // The demo configuration as shipped: its agents under the default limits.
  const runtime = await startRuntime(join(projectPath('examples'), 'gateway.config.yaml'), bed.erp.url);
  const pool = new Pool(runtime.baseUrl, { connections: floodInFlight + 2 });
  try {
    await plainReads(pool, plan.fairnessCalls); // warm-up
    const before = await plainReads(pool, plan.fairnessCalls);
    const flooding = flood(pool);
    await sleep(200);
    const under = await plainReads(pool, plan.fairnessCalls);
    const answers = await flooding.stop();
    const after = await plainReads(pool, plan.fairnessCalls);
    const idle = median([...before, ...after]);
    const busy = median(under);
    table([
      ['support agent alone, p50', ms(idle)],
      ['support agent under the flood, p50', ms(busy)],
      ['flood calls answered', [...answers].map(([code, count]) => `${code} ${count}`).join(', ')],
    ]);
    const factor = busy / idle;
    line(`ratio ${ratio(factor)} (target ${fairnessTarget})`);
    return [{ what: fairnessWhat, measured: ratio(factor), target: fairnessTarget, mark: within(factor <= 2) }];
  } finally {
    await pool.close();
    await runtime.stop();
  }
};
