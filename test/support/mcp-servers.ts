// Real MCP servers for tests, on loopback: the reference server (server-everything over Streamable
// HTTP, in a child process with a minimal environment), and a small server built with the SDK whose
// tools, faults and recorded requests the test controls.
import { createServer as createHttpServer, type Server as HttpServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CallToolResult, createMcpHandler, ProtocolError, Server, type Tool } from '@modelcontextprotocol/server';
import { type ReferenceMcpServer, startReferenceMcpServer } from '../../examples/reference-mcp/server.js';

/** A port free right now on loopback. */
export const freePort = async (): Promise<number> => {
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

export type EverythingServer = ReferenceMcpServer;

/** server-everything over Streamable HTTP on loopback, as the demo starts it (its environment only PORT). */
export const startEverythingServer = (port = 0): Promise<EverythingServer> => startReferenceMcpServer({ port });

/** One request the fault server received: its headers and its JSON-RPC body. */
export interface RecordedRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export type ToolBehaviour =
  | { readonly kind: 'result'; readonly result: CallToolResult }
  | { readonly kind: 'rpc-error'; readonly code: number; readonly message: string }
  /** Never answers (until the server closes). */
  | { readonly kind: 'hang' }
  /** Waits for the test to open the gate. */
  | { readonly kind: 'gate'; readonly result: CallToolResult };

export interface FaultServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** What tools/list answers (raw tools: anything a server might send). */
  tools: unknown[];
  /** Tools per tools/list page (the rest behind a cursor). */
  pageSize: number;
  /**
   * A GET on the endpoint opens a stream of the server's own messages that never ends an event
   * (up to 64 MB, then it stops), instead of being refused as the stateless server refuses it.
   */
  endlessStream: boolean;
  /** How many GET streams were asked of the endpoint. */
  readonly streamsOpened: number;
  /** Requests to the token endpoint: their Authorization header and form. */
  readonly tokenRequests: { authorization: string | undefined; form: Record<string, string> }[];
  /** How each tool (by name) answers; a tool without one echoes its arguments as text. */
  readonly behaviours: Map<string, ToolBehaviour>;
  /** tools/call requests of a tool in progress now, and the most there ever were at once. */
  inFlight(tool: string): { now: number; most: number };
  /** Lets every gated call answer (from now on). */
  openGate(): void;
  /** Settles when this many tools/call requests of a tool are in progress at once. */
  untilInFlight(tool: string, count: number): Promise<void>;
  /** Stops answering (the port is closed) and starts again on the same port. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
};

/** An MCP server (both revisions, stateless, JSON answers) whose tools and faults the test sets. */
export const startFaultServer = async (options: { readonly port?: number } = {}): Promise<FaultServer> => {
  const requests: RecordedRequest[] = [];
  const behaviours = new Map<string, ToolBehaviour>();
  const counts = new Map<string, { now: number; most: number }>();
  const inFlight = (tool: string) => {
    let count = counts.get(tool);
    if (count === undefined) {
      count = { now: 0, most: 0 };
      counts.set(tool, count);
    }
    return count;
  };
  const gate = newGate();
  const tokenRequests: FaultServer['tokenRequests'] = [];
  const hung: (() => void)[] = [];
  const watchers: { tool: string; count: number; resolve: () => void }[] = [];
  const state = {
    pageSize: 1_000,
    endlessStream: false,
    streamsOpened: 0,
    tools: [
      {
        name: 'lookup',
        description: 'Looks something up.',
        inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
        annotations: { readOnlyHint: true },
      },
      {
        name: 'update',
        description: 'Changes something.',
        inputSchema: { type: 'object', properties: { value: { type: 'string' } } },
      },
    ] as unknown[],
  };
  const build = () => {
    const server = new Server({ name: 'fault-server', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async (request) => {
      const start = Number(request.params?.cursor ?? '0');
      const end = start + state.pageSize;
      return {
        tools: state.tools.slice(start, end) as Tool[],
        ...(end < state.tools.length ? { nextCursor: String(end) } : {}),
      };
    });
    server.setRequestHandler('tools/call', async (request): Promise<CallToolResult> => {
      const name = request.params.name;
      const behaviour = behaviours.get(name);
      const count = inFlight(name);
      count.now += 1;
      count.most = Math.max(count.most, count.now);
      for (const watcher of [...watchers]) {
        if (watcher.tool === name && count.now >= watcher.count) {
          watchers.splice(watchers.indexOf(watcher), 1);
          watcher.resolve();
        }
      }
      try {
        if (behaviour === undefined) {
          return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] };
        }
        switch (behaviour.kind) {
          case 'result':
            return behaviour.result;
          case 'rpc-error':
            throw new ProtocolError(behaviour.code, behaviour.message);
          case 'hang':
            await new Promise<void>((resolve) => hung.push(resolve));
            return { content: [] };
          case 'gate':
            await gate.promise;
            return behaviour.result;
        }
      } finally {
        count.now -= 1;
      }
    });
    return server;
  };
  const handler = createMcpHandler(build, { legacy: 'stateless', responseMode: 'json' });
  const http: HttpServer = createHttpServer(async (incoming, outgoing) => {
    const body = await readBody(incoming);
    const base = `http://127.0.0.1:${port}`;
    // The OAuth side: protected-resource metadata, the authorization server's, and its token endpoint.
    if (incoming.url === '/.well-known/oauth-protected-resource/mcp') {
      outgoing.writeHead(200, { 'content-type': 'application/json' });
      outgoing.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [base] }));
      return;
    }
    if (incoming.url === '/.well-known/oauth-authorization-server') {
      outgoing.writeHead(200, { 'content-type': 'application/json' });
      outgoing.end(
        JSON.stringify({
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          response_types_supported: ['code'],
          grant_types_supported: ['client_credentials'],
        }),
      );
      return;
    }
    if (incoming.url === '/token') {
      tokenRequests.push({
        authorization: incoming.headers.authorization,
        form: Object.fromEntries(new URLSearchParams(body)),
      });
      outgoing.writeHead(200, { 'content-type': 'application/json' });
      outgoing.end(
        JSON.stringify({
          access_token: `issued-token-${tokenRequests.length}`,
          token_type: 'Bearer',
          expires_in: 3600,
        }),
      );
      return;
    }
    if (incoming.url?.startsWith('/.well-known/') === true) {
      outgoing.writeHead(404).end();
      return;
    }
    if (incoming.method === 'GET' && incoming.url === '/mcp') state.streamsOpened += 1;
    if (incoming.method === 'GET' && incoming.url === '/mcp' && state.endlessStream) {
      outgoing.writeHead(200, { 'content-type': 'text/event-stream' });
      outgoing.write('data: ');
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      for (let sent = 0; sent < 64 && !outgoing.destroyed; sent += 1) {
        if (outgoing.write(chunk)) continue;
        await new Promise((resolve) => {
          outgoing.once('drain', resolve);
          outgoing.once('close', resolve);
        });
      }
      outgoing.end();
      return;
    }
    requests.push({ headers: { ...incoming.headers }, body });
    const headers = new Headers();
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    try {
      const response = await handler.fetch(
        new Request(`http://127.0.0.1${incoming.url ?? '/'}`, {
          method: incoming.method ?? 'GET',
          headers,
          ...(incoming.method === 'POST' ? { body } : {}),
        }),
      );
      outgoing.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      outgoing.end(Buffer.from(await response.arrayBuffer()));
    } catch {
      outgoing.writeHead(500).end();
    }
  });
  const listen = (port: number) => new Promise<void>((resolve) => http.listen(port, '127.0.0.1', () => resolve()));
  let port = options.port ?? 0;
  await listen(port);
  port = (http.address() as AddressInfo).port;
  const stop = async () => {
    for (const release of hung.splice(0)) release();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  const fault: FaultServer = {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    get tools() {
      return state.tools;
    },
    set tools(value) {
      state.tools = value;
    },
    get pageSize() {
      return state.pageSize;
    },
    set pageSize(value) {
      state.pageSize = value;
    },
    get endlessStream() {
      return state.endlessStream;
    },
    set endlessStream(value) {
      state.endlessStream = value;
    },
    get streamsOpened() {
      return state.streamsOpened;
    },
    tokenRequests,
    behaviours,
    inFlight,
    openGate: () => gate.open(),
    untilInFlight: (tool, count) =>
      inFlight(tool).now >= count
        ? Promise.resolve()
        : new Promise((resolve) => watchers.push({ tool, count, resolve })),
    stop,
    restart: () => listen(port),
    close: stop,
  };
  return fault;
};

const newGate = (): { promise: Promise<void>; open: () => void } => {
  const gate: { open: () => void } = { open: () => undefined };
  const promise = new Promise<void>((resolve) => {
    gate.open = resolve;
  });
  return { promise, open: () => gate.open() };
};
