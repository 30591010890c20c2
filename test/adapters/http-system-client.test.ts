// The node:http adapter against a real HTTP server on 127.0.0.1: no redirect followed, one total
// deadline, the answer read only up to the size cap, whether a failed call may have been sent, and
// which kept-alive connections are taken again.
//
// Long: each way a server can misbehave is its own small server here.
import {
  type ClientRequestArgs,
  createServer,
  Agent as HttpAgent,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createTlsServer, Agent as HttpsAgent } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import { buildRequest } from '../../shared/invoke/call.js';
import type { OutboundRequest, OutboundResult } from '../../shared/invoke/system-client.js';
import { verifies } from '../support/requirements.js';
import { aSystem, aTool, httpTargetOf } from '../support/systems.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** The client's end of the connection it came on. */
  readonly remotePort: number | undefined;
}

/** Every request the server received, by path. */
const seen: Seen[] = [];
const hitsOn = (path: string): number => seen.filter((request) => request.url === path).length;

/** When the server saw the socket of the last request to a path close. */
const socketClosed = new Map<string, Promise<number>>();

/** Servers must stop by themselves: no handler writes for longer than this. */
// The hanging routes end themselves only after every test's own timeout, so a connection that
// closes within a test was closed by the client. No assertion here measures time: a deadline that
// was not kept leaves the call hanging, and the test fails by timing out.
const serverSafetyMs = 120_000;

const chunk = Buffer.alloc(16 * 1024, 'x');

const routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void> = {
  '/orders/PO%201': (_req, res) => {
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'x-system': 'erp' });
    res.end('{"id":"PO 1","status":"created"}');
  },
  '/redirect': (_req, res) => {
    res.writeHead(302, { location: '/redirect-target', 'content-type': 'text/plain' });
    res.end('Moved');
  },
  '/redirect-target': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"followed":true}');
  },
  '/endless': (_req, res) => {
    // Writes until the client goes away (or the safety limit), never ending the body.
    let stopped = false;
    let written = 0;
    const safety = setTimeout(() => res.destroy(), serverSafetyMs);
    res.on('close', () => {
      stopped = true;
      clearTimeout(safety);
    });
    res.on('error', () => {});
    res.writeHead(200, { 'content-type': 'application/json' });
    const pump = (): void => {
      while (!stopped && written < 64 * 1024 * 1024) {
        written += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
    };
    pump();
  },
  '/drip': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('[');
    const drip = setInterval(() => res.write(' '), 50);
    const safety = setTimeout(() => res.destroy(), serverSafetyMs);
    res.on('close', () => {
      clearInterval(drip);
      clearTimeout(safety);
    });
  },
  '/silent': (_req, res) => {
    const safety = setTimeout(() => res.destroy(), serverSafetyMs);
    res.on('close', () => clearTimeout(safety));
  },
  '/reset': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
    res.write('{"partial":"');
    setTimeout(() => res.socket?.destroy(), 30);
  },
  '/echo': (req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, body }));
  },
};

const exactRoute = /^\/exact\/(\d+)\/(\d+)$/;

const handle = (req: IncomingMessage, res: ServerResponse): void => {
  const chunks: Buffer[] = [];
  req.on('data', (data: Buffer) => chunks.push(data));
  req.on('end', () => {
    const url = req.url ?? '';
    const body = Buffer.concat(chunks).toString('utf8');
    seen.push({ method: req.method ?? '', url, headers: req.headers, body, remotePort: req.socket.remotePort });
    socketClosed.set(url, new Promise((resolve) => req.socket.once('close', () => resolve(performance.now()))));
    const exact = exactRoute.exec(url);
    if (exact !== null) {
      const size = Number(exact[1]);
      res.writeHead(Number(exact[2]), { 'content-type': 'application/json', 'content-length': String(size) });
      res.end(Buffer.alloc(size, 'a'));
      return;
    }
    const route = routes[url];
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    route(req, res, body);
  });
};

let server: Server;
let base: string;
const client = new HttpSystemClient();

const portOf = (listening: Server): number => {
  const address = listening.address();
  if (address === null || typeof address === 'string') throw new Error('The server has no TCP address.');
  return (address satisfies AddressInfo).port;
};

const listen = (target: Server): Promise<void> =>
  new Promise((resolve) => target.listen(0, '127.0.0.1', () => resolve()));

const closeServer = (target: Server): Promise<void> =>
  new Promise((resolve) => {
    target.closeAllConnections();
    target.close(() => resolve());
  });

beforeAll(async () => {
  server = createServer(handle);
  await listen(server);
  base = `http://127.0.0.1:${portOf(server)}`;
});

afterAll(async () => {
  await closeServer(server);
});

const outbound = (path: string, overrides: Partial<OutboundRequest> = {}): OutboundRequest => ({
  method: 'GET',
  url: `${base}${path}`,
  headers: { accept: 'application/json' },
  body: null,
  deadlineMs: 2_000,
  maxResponseBytes: 1_048_576,
  ...overrides,
});

/** Sends and measures how long the adapter took. */
const timed = async (
  request: OutboundRequest,
  through: HttpSystemClient = client,
): Promise<{ result: OutboundResult; elapsedMs: number; endedAt: number }> => {
  const started = performance.now();
  const result = await through.send(request);
  const endedAt = performance.now();
  return { result, elapsedMs: endedAt - started, endedAt };
};

/** Resolves when the client has closed the connection that asked for `path` (see serverSafetyMs). */
const clientClosed = async (path: string): Promise<void> => {
  const closed = socketClosed.get(path);
  if (closed === undefined) throw new Error(`No request for ${path} reached the server.`);
  await closed;
};

describe('the node:http system client', () => {
  it(
    verifies('invoke.outbound', 'sends the request as built and returns the status, content type and body'),
    async () => {
      const tool = aTool({
        access: 'write',
        method: 'POST',
        path: '/orders/{id}',
        fields: [
          { field: 'id', in: 'path', name: 'id' },
          { field: 'ref', in: 'header', name: 'X-Customer-Ref' },
          { field: 'sku', in: 'body', name: 'sku' },
        ],
      });
      const system = aSystem({ base_url: base, credentials: { type: 'bearer', token: 'tok-1' }, timeout: 2_000 });
      const request = buildRequest(
        httpTargetOf(tool),
        system,
        { id: 'PO 1', ref: 'C-9', sku: 'A-1' },
        {
          executionId: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55',
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        },
      );
      const { result } = await timed(request);
      expect(result).toEqual({
        kind: 'response',
        status: 201,
        contentType: 'application/json; charset=utf-8',
        body: Buffer.from('{"id":"PO 1","status":"created"}'),
      });
      const received = seen.filter((entry) => entry.url === '/orders/PO%201');
      expect(received.length).toBe(1);
      const [first] = received;
      expect(first?.method).toBe('POST');
      expect(first?.body).toBe('{"sku":"A-1"}');
      expect(first?.headers).toMatchObject({
        authorization: 'Bearer tok-1',
        'x-request-id': '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        'x-customer-ref': 'C-9',
        'content-type': 'application/json',
        accept: 'application/json',
      });
    },
  );

  it(verifies('invoke.outbound', 'sends each supported method with its body'), async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const { result } = await timed(outbound('/echo', { method, body: '{"a":1}' }));
      expect(result.kind === 'response' ? JSON.parse(result.body.toString('utf8')) : result).toEqual({
        method,
        body: '{"a":1}',
      });
    }
  });

  it(verifies('invoke.outbound', 'refuses a method it does not support before sending anything'), async () => {
    const before = seen.length;
    await expect(client.send(outbound('/echo', { method: 'TRACE' }))).rejects.toThrow('Unsupported HTTP method TRACE.');
    expect(seen.length).toBe(before);
  });

  it(verifies(['invoke.outbound', 'invoke.outcomes'], 'returns a redirect as it is and never follows it'), async () => {
    const { result } = await timed(outbound('/redirect'));
    expect(result).toEqual({ kind: 'response', status: 302, contentType: 'text/plain', body: Buffer.from('Moved') });
    expect(hitsOn('/redirect')).toBe(1);
    expect(hitsOn('/redirect-target')).toBe(0);
  });

  it(
    verifies(
      ['invoke.outbound', 'invoke.outcomes'],
      'stops reading an endless answer at the size cap and drops the connection',
    ),
    async () => {
      const { result } = await timed(outbound('/endless', { maxResponseBytes: 100_000 }));
      expect(result).toEqual({ kind: 'too_large', status: 200 });
      await clientClosed('/endless');
    },
  );

  it(verifies('invoke.outbound', 'accepts an answer of exactly the size cap'), async () => {
    const { result } = await timed(outbound('/exact/65536/200', { maxResponseBytes: 65_536 }));
    expect(result.kind).toBe('response');
    if (result.kind === 'response') {
      expect(result.status).toBe(200);
      expect(result.body.length).toBe(65_536);
      expect(result.body.equals(Buffer.alloc(65_536, 'a'))).toBe(true);
    }
  });

  it(
    verifies(['invoke.outbound', 'invoke.outcomes'], 'refuses an answer one byte over the cap, keeping its status'),
    async () => {
      const { result } = await timed(outbound('/exact/65537/500', { maxResponseBytes: 65_536 }));
      expect(result).toEqual({ kind: 'too_large', status: 500 });
    },
  );

  it(
    verifies(
      ['invoke.outbound', 'invoke.outcomes'],
      'ends a call whose answer drips past the deadline as a timeout after sending',
    ),
    async () => {
      const { result, elapsedMs } = await timed(outbound('/drip', { deadlineMs: 300 }));
      expect(result).toEqual({ kind: 'timeout', sent: true });
      expect(elapsedMs).toBeGreaterThanOrEqual(290);
      await clientClosed('/drip');
    },
  );

  it(
    verifies(['invoke.outbound', 'invoke.outcomes'], 'ends a call the server never answers as a timeout after sending'),
    async () => {
      const { result, elapsedMs } = await timed(outbound('/silent', { method: 'POST', body: '{}', deadlineMs: 250 }));
      expect(result).toEqual({ kind: 'timeout', sent: true });
      expect(hitsOn('/silent')).toBe(1);
      expect(elapsedMs).toBeGreaterThanOrEqual(240);
      await clientClosed('/silent');
    },
  );

  it(verifies('invoke.outcomes', 'reports a refused connection as connection_failed, not sent'), async () => {
    const vacant = createServer();
    await listen(vacant);
    const port = portOf(vacant);
    await closeServer(vacant);
    const { result } = await timed(
      outbound('/orders', { url: `http://127.0.0.1:${port}/orders`, method: 'POST', body: '{}', deadlineMs: 60_000 }),
    );
    // Answered as refused, not after the deadline as a timeout.
    expect(result).toMatchObject({
      kind: 'connection_failed',
      sent: false,
      cause: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it(
    verifies(
      'invoke.outcomes',
      'reports a connection reset in the middle of the body as connection_failed after sending',
    ),
    async () => {
      const { result } = await timed(outbound('/reset', { deadlineMs: 60_000 }));
      expect(result).toMatchObject({ kind: 'connection_failed', sent: true });
    },
  );

  it.each([
    ['a non-Latin-1 value', 'دبي'],
    ['a line break', 'a\r\nx-injected: 1'],
  ])(
    verifies('invoke.outcomes', 'reports a request the HTTP library refuses to send (a header with %s) as not sent'),
    async (_label, value) => {
      const before = seen.length;
      const { result } = await timed(
        outbound('/echo', { method: 'POST', headers: { 'x-customer-ref': value }, body: '{}', deadlineMs: 500 }),
      );
      expect(seen.length).toBe(before);
      expect(result).toMatchObject({ kind: 'connection_failed', sent: false });
    },
  );

  describe('over kept-alive connections', () => {
    const portOf = (path: string): number | undefined => seen.findLast((request) => request.url === path)?.remotePort;

    it(
      verifies('invoke.outcomes', 'a call on a connection kept from the call before is sent, and times out as sent'),
      async () => {
        const pooled = new HttpSystemClient();
        expect((await timed(outbound('/echo', { method: 'POST', body: '{}' }), pooled)).result.kind).toBe('response');
        // The second request leaves at once on the connected socket: no 'connect' happens for it.
        const { result } = await timed(outbound('/silent', { method: 'POST', body: '{}', deadlineMs: 250 }), pooled);
        expect(portOf('/silent')).toBe(portOf('/echo'));
        expect(result).toEqual({ kind: 'timeout', sent: true });
      },
    );

    it(verifies('invoke.outbound', 'never takes again a connection dropped at the size cap'), async () => {
      const pooled = new HttpSystemClient();
      const { result } = await timed(outbound('/exact/65537/200', { maxResponseBytes: 65_536 }), pooled);
      expect(result).toEqual({ kind: 'too_large', status: 200 });
      // Time enough for a connection whose answer were read to its end to be back in the pool.
      await Promise.race([clientClosed('/exact/65537/200'), new Promise((resolve) => setTimeout(resolve, 200))]);
      expect((await timed(outbound('/echo', { method: 'POST', body: '{}' }), pooled)).result.kind).toBe('response');
      expect(portOf('/echo')).not.toBe(portOf('/exact/65537/200'));
      await clientClosed('/exact/65537/200');
    });
  });

  describe('when connecting is slow', () => {
    // A network that never completes a connection until the tests are over: a call returns only
    // if the deadline also covers connecting.
    const pending: (() => void)[] = [];
    class SlowAgent extends HttpAgent {
      override createConnection(
        options: ClientRequestArgs,
        callback?: (err: Error | null, stream: Duplex) => void,
      ): undefined {
        pending.push(() => {
          const socket = super.createConnection(options);
          if (socket) callback?.(null, socket);
        });
        return undefined;
      }
    }
    const slowNetwork = { http: new SlowAgent(), https: new HttpsAgent() };
    const slowClient = new HttpSystemClient(slowNetwork);

    afterAll(() => {
      for (const connect of pending.splice(0)) connect();
      slowNetwork.http.destroy();
      slowNetwork.https.destroy();
    });

    it(verifies('invoke.outbound', 'the one deadline also covers connecting'), async () => {
      const { result, elapsedMs } = await timed(
        outbound('/echo', { method: 'POST', body: '{}', deadlineMs: 300 }),
        slowClient,
      );
      expect(result.kind).toBe('timeout');
      expect(elapsedMs).toBeGreaterThanOrEqual(290);
    });

    it(verifies('invoke.outcomes', 'a deadline passed while connecting is a timeout with nothing sent'), async () => {
      const before = seen.length;
      const { result } = await timed(outbound('/echo', { method: 'POST', body: '{}', deadlineMs: 300 }), slowClient);
      expect(result).toEqual({ kind: 'timeout', sent: false });
      expect(seen.length).toBe(before);
    });
  });

  describe('over TLS', () => {
    // TLS with a pre-shared key: a real handshake without a certificate to make or to keep.
    const psk = Buffer.alloc(32, 7);
    const tlsOptions = { ciphers: 'PSK-AES128-GCM-SHA256', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' } as const;
    const tlsServer = createTlsServer({ ...tlsOptions, pskCallback: () => psk }, handle);
    // Takes connections and never says a word: a TLS handshake with it never finishes.
    const mute = createTcpServer((socket: Socket) => {
      socket.on('error', () => {});
      setTimeout(() => socket.destroy(), serverSafetyMs).unref();
    });
    const agents = {
      http: new HttpAgent(),
      https: new HttpsAgent({
        ...tlsOptions,
        keepAlive: true,
        pskCallback: () => ({ psk, identity: 'gateway' }),
        checkServerIdentity: () => undefined,
      }),
    };
    const tlsClient = new HttpSystemClient(agents);
    let tlsBase: string;
    let muteBase: string;

    beforeAll(async () => {
      await Promise.all([
        new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', () => resolve())),
        new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', () => resolve())),
      ]);
      tlsBase = `https://127.0.0.1:${portOf(tlsServer)}`;
      const muteAddress = mute.address();
      if (muteAddress === null || typeof muteAddress === 'string') throw new Error('The server has no TCP address.');
      muteBase = `https://127.0.0.1:${muteAddress.port}`;
    });

    afterAll(async () => {
      agents.https.destroy();
      tlsServer.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => tlsServer.close(() => resolve())),
        new Promise<void>((resolve) => mute.close(() => resolve())),
      ]);
    });

    it(
      verifies('invoke.outcomes', 'a call over TLS is sent once the handshake is done, and times out as sent'),
      async () => {
        const echoed = await timed(
          outbound('/echo', { url: `${tlsBase}/echo`, method: 'POST', body: '{"a":1}' }),
          tlsClient,
        );
        expect(echoed.result).toMatchObject({ kind: 'response', status: 200 });
        // A new pool: the request waits for its own handshake.
        const freshPool = new HttpsAgent(agents.https.options);
        const fresh = new HttpSystemClient({ http: agents.http, https: freshPool });
        const { result } = await timed(
          outbound('/silent', { url: `${tlsBase}/silent`, method: 'POST', body: '{}', deadlineMs: 250 }),
          fresh,
        );
        freshPool.destroy();
        expect(result).toEqual({ kind: 'timeout', sent: true });
      },
    );

    it(
      verifies('invoke.outcomes', 'a deadline passed during the TLS handshake is a timeout with nothing sent'),
      async () => {
        const { result } = await timed(
          outbound('/echo', { url: `${muteBase}/echo`, method: 'POST', body: '{}', deadlineMs: 300 }),
          tlsClient,
        );
        // Connected, but nothing of the request could have been read by anyone.
        expect(result).toEqual({ kind: 'timeout', sent: false });
      },
    );
  });
});
