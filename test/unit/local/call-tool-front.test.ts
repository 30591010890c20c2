// The /tool/call-tool fronts in one process, on loopback, over the use-case bench: what the
// runtime's process cannot show from outside. Open connections per agent are bounded, a client
// gone before its answer loses nothing, each call logs one line without its arguments, and a stop
// lets the call in flight answer, closes the waiting connections 1001 and takes nothing new.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLocalAuthorizer } from '../../../infra/local/authorizer.js';
import { createCallToolFront } from '../../../infra/local/call-tool-front.js';
import { type HttpFront, startHttpFront } from '../../../infra/local/http-front.js';
import type { ControlPlane } from '../../../shared/control-plane/control-plane.js';
import type { OutboundRequest } from '../../../shared/invoke/system-client.js';
import { limitsNow } from '../../../shared/limits/agent-limits.js';
import { RequestGate } from '../../../shared/limits/request-gate.js';
import { ResultObject } from '../../../shared/result.js';
import { decodeFrame } from '../../../shared/wire/call-tool-frame.js';
import { verifies } from '../../support/requirements.js';
import { created201, procurementAgent, tools, type UseCaseBed, useCaseBed } from '../../support/use-case-bed.js';

const agents = [
  {
    id: procurementAgent.id,
    token: 'procurement-token',
    tokenFromEnvironment: false,
    subject: null,
    groups: ['procurement'],
    customer: null,
  },
  {
    id: 'other-agent',
    token: 'other-token',
    tokenFromEnvironment: false,
    subject: null,
    groups: ['procurement'],
    customer: null,
  },
];

interface Bench {
  readonly bed: UseCaseBed;
  readonly front: HttpFront;
  readonly url: string;
  readonly infos: { message: string; attributes: Record<string, unknown> }[];
  /** Resolves when the system has received its first call. */
  readonly arrived: Promise<OutboundRequest>;
  /** Lets the system answer every call (held until then). */
  release(): void;
}

const fronts: HttpFront[] = [];
const clients: WebSocket[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.terminate();
  for (const front of fronts.splice(0)) await front.close();
});

const startBench = async (): Promise<Bench> => {
  const bed = await useCaseBed();
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrive: (request: OutboundRequest) => void = () => undefined;
  const arrived = new Promise<OutboundRequest>((resolve) => {
    arrive = resolve;
  });
  // The configuration holds the agents the local tokens name, as the runtime's does.
  const configured = bed.deps.controlPlane;
  const controlPlane: ControlPlane = {
    current: async () => {
      const state = await configured.current();
      if (state.snapshot === null) return state;
      const snapshot = { ...state.snapshot, config: { ...state.snapshot.config, agents } };
      return state.kind === 'active' ? { kind: 'active', snapshot } : { ...state, snapshot };
    },
  };
  const services = {
    ...bed.deps,
    controlPlane,
    systems: {
      send: async (request: OutboundRequest) => {
        bed.sent.push(request);
        arrive(request);
        await released;
        return created201;
      },
    },
  };
  const infos: Bench['infos'] = [];
  const authorize = createLocalAuthorizer({
    agents: () => agents,
    anonymousAgent: null,
  });
  const channel = createCallToolFront({
    services,
    gate: new RequestGate(bed.clock),
    authorize,
    allowedHostnames: ['127.0.0.1', 'localhost'],
    allowedOrigins: ['127.0.0.1', 'localhost'],
    publicUrl: null,
    log: {
      info: (message, ...attributes) => infos.push({ message, attributes: Object.assign({}, ...attributes) }),
      warn: () => undefined,
    },
    // Long enough that no connection here is closed for silence.
    paramsWaitMs: 600_000,
  });
  const front = await startHttpFront({
    host: '127.0.0.1',
    port: 0,
    routes: [],
    authorize,
    publicUrl: null,
    onError: () => undefined,
    channel,
  });
  fronts.push(front);
  return { bed, front, url: `ws://127.0.0.1:${front.port}/tool/call-tool`, infos, arrived, release };
};

type Opened = { readonly ws: WebSocket; readonly frames: Uint8Array[]; readonly closed: Promise<number> };

/** Opens a connection as the token's agent: the open socket, or the status the upgrade was refused with. */
const open = (
  bench: Bench,
  token: string,
): Promise<Opened | { readonly status: number; readonly retryAfter?: string }> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(bench.url, { headers: { authorization: `Bearer ${token}` } });
    clients.push(ws);
    const frames: Uint8Array[] = [];
    const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
    ws.on('message', (data) => frames.push(new Uint8Array(data as Buffer)));
    ws.on('error', () => undefined);
    ws.once('open', () => resolve({ ws, frames, closed }));
    ws.once('unexpected-response', (_request, response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined });
    });
    ws.once('close', () => reject(new Error('closed before it opened')));
  });

const opened = (outcome: Awaited<ReturnType<typeof open>>): Opened => {
  if ('status' in outcome) throw new Error(`refused with ${outcome.status}`);
  return outcome;
};

const order = (amount: string, extra: Record<string, string> = {}) =>
  JSON.stringify({ name: tools.create, arguments: { vendor: 'acme', amount, ...extra } });

const resultIn = (frames: readonly Uint8Array[]) => {
  expect(frames).toHaveLength(1);
  const frame = decodeFrame(frames[0] ?? new Uint8Array());
  if (frame.kind !== 'result') throw new Error(`expected a result frame: ${JSON.stringify(frame)}`);
  return ResultObject.parse(frame.result.structuredContent);
};

describe('connections', () => {
  it(
    verifies(
      'channel.robust',
      "holds at most the agent's concurrent_requests of open connections, refusing more with 429",
    ),
    async () => {
      const bench = await startBench();
      const { concurrentRequests } = await limitsNow(bench.bed.deps.controlPlane, procurementAgent);
      for (let index = 0; index < concurrentRequests; index += 1) opened(await open(bench, 'procurement-token'));
      expect(await open(bench, 'procurement-token')).toEqual({ status: 429, retryAfter: '1' });
      // Another agent's allowance is its own.
      const other = opened(await open(bench, 'other-token'));
      other.ws.send(JSON.stringify({ name: tools.list, arguments: {} }));
      bench.release();
      expect(await other.closed).toBe(1000);
      expect(resultIn(other.frames).status).toBe('succeeded');
    },
  );

  it(
    verifies(
      'channel.robust',
      'completes and records a call whose client went away, and logs it without its arguments',
    ),
    async () => {
      const bench = await startBench();
      const client = opened(await open(bench, 'procurement-token'));
      client.ws.send(order('250', { api_key: 'sk-live-never-logged' }));
      const request = await bench.arrived;
      client.ws.terminate();
      await client.closed;
      bench.release();
      // A stop waits for calls in flight: once it is done, the call is settled.
      await bench.front.close();
      fronts.splice(0);
      const executionId = request.headers['x-request-id'] ?? '';
      expect((await bench.bed.record(executionId)).status).toBe('succeeded');
      const lines = bench.infos.filter((line) => line.message === 'tools/call over /tool/call-tool');
      expect(lines).toHaveLength(1);
      expect(lines[0]?.attributes).toMatchObject({
        agent_id: procurementAgent.id,
        transport: 'websocket',
        tool: tools.create,
        status: 'succeeded',
        code: null,
      });
      expect(JSON.stringify(bench.infos)).not.toMatch(/sk-live|acme|250/);
    },
  );
});

describe('a clean stop', () => {
  it(
    verifies(
      'channel.clean-stop',
      'lets the call in flight answer, closes waiting connections 1001, takes nothing new',
    ),
    async () => {
      const bench = await startBench();
      const running = opened(await open(bench, 'procurement-token'));
      running.ws.send(order('250'));
      await bench.arrived;
      const waiting = opened(await open(bench, 'procurement-token'));
      const stopped = bench.front.close();
      expect(await open(bench, 'procurement-token')).toMatchObject({ status: 503 });
      bench.release();
      expect(await running.closed).toBe(1000);
      expect(resultIn(running.frames).status).toBe('succeeded');
      expect(await waiting.closed).toBe(1001);
      expect(waiting.frames).toHaveLength(0);
      await stopped;
      fronts.splice(0);
    },
  );
});
