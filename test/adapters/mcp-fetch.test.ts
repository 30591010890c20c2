// The fetch the MCP client speaks through, against a real HTTP server on 127.0.0.1: redirects come
// back as they are, answers stream as they arrive, an abort ends the body where it has got to, and
// a request is noted as sent on a new or a kept-alive connection.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exactResultOf, httpFetch } from '../../shared/adapters/mcp-fetch.js';
import { keepAliveAgents } from '../../shared/adapters/socket-tracking.js';
import { verifies } from '../support/requirements.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly contentLength: string | undefined;
  readonly remotePort: number | undefined;
  /** Resolves when the connection it came on closes. */
  readonly closed: Promise<void>;
}

const seen: Seen[] = [];
const lastOn = (path: string): Seen => {
  const found = seen.findLast((request) => request.url === path);
  if (found === undefined) throw new Error(`No request for ${path} reached the server.`);
  return found;
};

/** The hanging routes end themselves only after every test's own timeout (see the system client's tests). */
const serverSafetyMs = 120_000;

const routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void> = {
  '/echo': (req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-one': 'a' });
    res.end(JSON.stringify({ method: req.method, body }));
  },
  '/redirect': (_req, res) => {
    res.writeHead(307, { location: '/echo', 'content-type': 'text/plain' });
    res.end('Moved');
  },
  '/no-content': (_req, res) => {
    res.writeHead(204).end();
  },
  // One event, then nothing until the client goes away.
  '/sse': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: message\ndata: {"first":true}\n\n');
    const safety = setTimeout(() => res.destroy(), serverSafetyMs);
    res.on('close', () => clearTimeout(safety));
  },
  '/silent': (_req, res) => {
    const safety = setTimeout(() => res.destroy(), serverSafetyMs);
    res.on('close', () => clearTimeout(safety));
  },
};

let server: Server;
let base: string;
const agents = keepAliveAgents();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (data: Buffer) => chunks.push(data));
    req.on('end', () => {
      const url = req.url ?? '';
      const body = Buffer.concat(chunks).toString('utf8');
      const closed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
      seen.push({
        method: req.method ?? '',
        url,
        body,
        contentLength: req.headers['content-length'],
        remotePort: req.socket.remotePort,
        closed,
      });
      const route = routes[url];
      if (route === undefined) res.writeHead(404).end();
      else route(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The server has no TCP address.');
  base = `http://127.0.0.1:${(address satisfies AddressInfo).port}`;
});

afterAll(async () => {
  agents.http.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const post = (body: string | Uint8Array, signal?: AbortSignal) => ({
  method: 'POST',
  headers: new Headers({ 'content-type': 'application/json' }),
  body,
  signal,
});

describe("the MCP servers' fetch", () => {
  it(
    verifies('systems.mcp-fetch', 'sends string and byte bodies with their length, and notes each request as sent'),
    async () => {
      let sent = 0;
      const first = await httpFetch(agents, new URL(`${base}/echo`), post('{"a":1}'), () => {
        sent += 1;
      });
      expect(first.status).toBe(200);
      expect(first.headers.get('x-one')).toBe('a');
      expect(await first.json()).toEqual({ method: 'POST', body: '{"a":1}' });
      const firstPort = lastOn('/echo').remotePort;
      expect(sent).toBe(1);
      // The second request goes out on the connection kept from the first: no connect happens for it.
      const second = await httpFetch(agents, new URL(`${base}/echo`), post(new TextEncoder().encode('{"b":2}')), () => {
        sent += 1;
      });
      expect(await second.json()).toEqual({ method: 'POST', body: '{"b":2}' });
      expect(lastOn('/echo')).toMatchObject({ remotePort: firstPort, contentLength: '7' });
      expect(sent).toBe(2);
    },
  );

  it(verifies('systems.mcp-fetch', 'returns a redirect as it came and never follows it'), async () => {
    const before = seen.filter((request) => request.url === '/echo').length;
    const response = await httpFetch(agents, new URL(`${base}/redirect`), post('{}'));
    expect(response.status).toBe(307);
    expect(response.headers.get('location')).toBe('/echo');
    expect(await response.text()).toBe('Moved');
    expect(seen.filter((request) => request.url === '/echo').length).toBe(before);
  });

  it(verifies('systems.mcp-fetch', 'returns an answer without a body as one'), async () => {
    const response = await httpFetch(agents, new URL(`${base}/no-content`), post('{}'));
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it(
    verifies('systems.mcp-fetch', 'streams an SSE answer as it arrives, and an abort ends it and drops the connection'),
    async () => {
      const controller = new AbortController();
      const response = await httpFetch(agents, new URL(`${base}/sse`), post('{}', controller.signal));
      const reader = response.body?.getReader();
      if (reader === undefined) throw new Error('expected a body');
      // The server has not ended the answer: a fetch that waited for the end would hang here.
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('data: {"first":true}');
      controller.abort();
      await expect(reader.read()).rejects.toThrow();
      await lastOn('/sse').closed;
      // The next request does not get the dropped connection.
      await (await httpFetch(agents, new URL(`${base}/echo`), post('{}'))).text();
      expect(lastOn('/echo').remotePort).not.toBe(lastOn('/sse').remotePort);
    },
  );

  it(verifies('systems.mcp-fetch', 'an abort before any answer ends the request'), async () => {
    const controller = new AbortController();
    const pending = httpFetch(agents, new URL(`${base}/silent`), post('{}', controller.signal));
    while (!seen.some((request) => request.url === '/silent')) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    await lastOn('/silent').closed;
  });

  it(verifies('systems.mcp-fetch', 'an already aborted signal sends nothing'), async () => {
    const before = seen.length;
    await expect(httpFetch(agents, new URL(`${base}/echo`), post('{}', AbortSignal.abort()))).rejects.toThrow(/abort/i);
    expect(seen.length).toBe(before);
  });
});

describe('an answer read again exactly', () => {
  it(
    verifies('answers.exact-integers', 'finds the JSON-RPC result in a JSON body or in the SSE event that carries it'),
    () => {
      const bytes = (text: string) => [Buffer.from(text.slice(0, 7)), Buffer.from(text.slice(7))];
      const message = '{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"id":9007199254740993}}}';
      const exact = { structuredContent: { id: 9007199254740993n } };
      expect(exactResultOf(bytes(message))).toEqual(exact);
      const stream = `event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\r\n\r\nid: 2\ndata: ${message}\n\n`;
      expect(exactResultOf(bytes(stream))).toEqual(exact);
      expect(exactResultOf(bytes('data: not json\n\n'))).toBeUndefined();
    },
  );
});
