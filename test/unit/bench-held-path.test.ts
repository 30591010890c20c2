// The benchmark's trace of a held reply, read on real loopback HTTP: a stand-in runtime answers /mcp
// after the requests a hold makes (the pending place, then the record and the run start together,
// the run's own first write beside them), against a stand-in store that holds each answer as long
// as it is told to.
import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { HeldPathTrace } from '../../bench/held-path.js';
import { verifies } from '../support/requirements.js';

const listening = async (server: Server): Promise<number> => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};

const drained = async (message: IncomingMessage): Promise<void> => {
  message.resume();
  await once(message, 'end');
};

/** How long the stand-in store holds each operation's answer, in ms. */
const holdFor: Record<string, number> = { UpdateItem: 30, PutItem: 20, StartExecution: 40 };

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/**
 * Calls `then` once at least `ms` have passed on performance.now()'s clock since `from`: a timer can
 * fire early by that clock on a busy event loop, so it is set again for what is left.
 */
const after = (from: number, ms: number, then: () => void): void => {
  const left = from + ms - performance.now();
  if (left <= 0) then();
  else setTimeout(() => after(from, ms, then), Math.ceil(left));
};

const standIns = async () => {
  const store = createServer((incoming, answer) => {
    const arrived = performance.now();
    const operation = String(incoming.headers['x-amz-target']).split('.').pop() ?? '';
    void drained(incoming).then(() => after(arrived, holdFor[operation] ?? 0, () => answer.end('{}')));
  });
  servers.push(store);
  const storePort = await listening(store);
  const send = (operation: string) =>
    new Promise<void>((resolve, reject) => {
      const sent = request(
        { port: storePort, host: '127.0.0.1', method: 'POST', headers: { 'x-amz-target': `Service.${operation}` } },
        (answer) => void drained(answer).then(resolve, reject),
      );
      sent.on('error', reject);
      sent.end('{}');
    });
  /** What the stand-in runtime does for one /mcp request (the full hold unless told otherwise). */
  let hold = async () => {
    await send('UpdateItem');
    // The run's first step writes the record again while the reply still waits: not the place.
    await Promise.all([send('PutItem'), send('StartExecution'), send('UpdateItem')]);
  };
  const runtime = createServer((incoming, answer) => {
    void drained(incoming)
      .then(() => hold())
      .then(() => answer.end('{"status":"pending_approval"}'));
  });
  servers.push(runtime);
  const runtimePort = await listening(runtime);
  const call = (path = '/mcp') =>
    new Promise<void>((resolve, reject) => {
      const sent = request({ port: runtimePort, host: '127.0.0.1', method: 'POST', path }, (answer) => {
        void drained(answer).then(resolve, reject);
      });
      sent.on('error', reject);
      sent.end('{}');
    });
  return {
    runtimePort,
    call,
    holdWith: (steps: () => Promise<void>) => {
      hold = steps;
    },
    send,
  };
};

describe("the bench's held-reply trace", () => {
  it(
    verifies('perf.held-reply-path', 'marks the place, then the record and run start together, then the reply'),
    async () => {
      const { runtimePort, call } = await standIns();
      const trace = new HeldPathTrace(runtimePort);
      try {
        await call();
        await call();
      } finally {
        trace.close();
      }
      expect(trace.paths).toHaveLength(2);
      for (const path of trace.paths) {
        expect(path.placeSent).toBeGreaterThanOrEqual(0);
        // No key claimed (settings.join_pending_calls off): none marked.
        expect(path.keySent).toBeNull();
        // Each wait lasts at least as long as the store held its answer.
        expect(path.placeAnswered - path.placeSent).toBeGreaterThanOrEqual(holdFor.UpdateItem ?? 0);
        expect(path.recordSent).toBeGreaterThanOrEqual(path.placeAnswered);
        // Together: the later of the two answers, the run start's.
        expect(path.recordAnswered - path.recordSent).toBeGreaterThanOrEqual(holdFor.StartExecution ?? 0);
        expect(path.replied).toBeGreaterThanOrEqual(path.recordAnswered);
      }
    },
  );

  it(
    verifies('perf.held-reply-path', "marks the call's key before the place, and the record only after the place"),
    async () => {
      const { runtimePort, call, holdWith, send } = await standIns();
      // The gateway claims the held call's key (a PutItem) before it takes the place.
      holdWith(async () => {
        await send('PutItem');
        await send('UpdateItem');
        await Promise.all([send('PutItem'), send('StartExecution')]);
      });
      const trace = new HeldPathTrace(runtimePort);
      try {
        await call();
      } finally {
        trace.close();
      }
      expect(trace.paths).toHaveLength(1);
      const [path] = trace.paths;
      expect(path?.keySent).toBeGreaterThanOrEqual(0);
      expect((path?.keyAnswered ?? 0) - (path?.keySent ?? 0)).toBeGreaterThanOrEqual(holdFor.PutItem ?? 0);
      expect(path?.placeSent).toBeGreaterThanOrEqual(path?.keyAnswered ?? Number.POSITIVE_INFINITY);
      // The record is the PutItem after the place, not the key's.
      expect(path?.recordSent).toBeGreaterThanOrEqual(path?.placeAnswered ?? Number.POSITIVE_INFINITY);
      expect(path?.replied).toBeGreaterThanOrEqual(path?.recordAnswered ?? Number.POSITIVE_INFINITY);
    },
  );

  it(
    verifies('perf.held-reply-path', 'counts only calls to /mcp on its runtime that made all three requests'),
    async () => {
      const { runtimePort, call, holdWith, send } = await standIns();
      const trace = new HeldPathTrace(runtimePort);
      const elsewhere = new HeldPathTrace(runtimePort + 1);
      try {
        // Another path on the same runtime, and a call refused at its place (no record, no run).
        await call('/console');
        holdWith(() => send('UpdateItem'));
        await call();
        expect(trace.paths).toHaveLength(0);
        holdWith(async () => {
          await send('UpdateItem');
          await Promise.all([send('PutItem'), send('StartExecution')]);
        });
        await call();
      } finally {
        trace.close();
        elsewhere.close();
      }
      expect(trace.paths).toHaveLength(1);
      expect(elsewhere.paths).toHaveLength(0);
    },
  );

  it(verifies('perf.held-reply-path', 'stops marking once closed'), async () => {
    const { runtimePort, call } = await standIns();
    const trace = new HeldPathTrace(runtimePort);
    trace.close();
    await call();
    expect(trace.paths).toHaveLength(0);
  });
});
