// Real MCP servers for tests, on loopback: the reference server (server-everything over Streamable
// HTTP, in a child process with a minimal environment), and a small server built with the SDK whose
// tools, faults and recorded requests the test controls.
import { createServer as createHttpServer, type Server as HttpServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { type CallToolResult, createMcpHandler, ProtocolError, Server, type Tool } from '@modelcontextprotocol/server';
import { type RunningProcess, startProcess } from './spawn.js';

const require = createRequire(import.meta.url);

/** The reference server's entry (its package's bin). */
export const everythingEntry = require
  .resolve('@modelcontextprotocol/server-everything/package.json')
  .replace(/package\.json$/, 'dist/index.js');

/** A port free right now on loopback. */
export const freePort = async (): Promise<number> => {
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

export interface EverythingServer {
  readonly url: string;
  readonly process: RunningProcess;
  close(): Promise<void>;
}

/** server-everything over Streamable HTTP, its environment only PORT (no secret of ours to print). */
export const startEverythingServer = async (port?: number): Promise<EverythingServer> => {
  const chosen = port ?? (await freePort());
  const running = startProcess(process.execPath, [everythingEntry, 'streamableHttp'], {
    env: { PORT: String(chosen) },
    timeoutMs: 10 * 60_000,
  });
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (running.output().includes('listening on port')) return resolve();
      setTimeout(check, 20);
    };
    running.exit.then(() => reject(new Error(`server-everything stopped: ${running.output()}`)));
    check();
  });
  return {
    url: `http://127.0.0.1:${chosen}/mcp`,
    process: running,
    close: async () => {
      running.child.kill('SIGKILL');
      await running.exit;
    },
  };
};

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
  /** How each tool (by name) answers; a tool without one echoes its arguments as text. */
  readonly behaviours: Map<string, ToolBehaviour>;
  /** tools/call requests in progress now, and the most there ever were at once. */
  readonly inFlight: { now: number; most: number };
  /** Lets every gated call answer. */
  openGate(): void;
  /** Settles when this many tools/call requests are in progress at once. */
  untilInFlight(count: number): Promise<void>;
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
  const inFlight = { now: 0, most: 0 };
  let gate: { promise: Promise<void>; open: () => void } = newGate();
  const hung: (() => void)[] = [];
  const watchers: { count: number; resolve: () => void }[] = [];
  const state = {
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
    server.setRequestHandler('tools/list', async () => ({ tools: state.tools as Tool[] }));
    server.setRequestHandler('tools/call', async (request): Promise<CallToolResult> => {
      const name = request.params.name;
      const behaviour = behaviours.get(name);
      inFlight.now += 1;
      inFlight.most = Math.max(inFlight.most, inFlight.now);
      for (const watcher of [...watchers]) {
        if (inFlight.now >= watcher.count) {
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
        inFlight.now -= 1;
      }
    });
    return server;
  };
  const handler = createMcpHandler(build, { legacy: 'stateless', responseMode: 'json' });
  const http: HttpServer = createHttpServer(async (incoming, outgoing) => {
    const body = await readBody(incoming);
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
  await listen(options.port ?? 0);
  const port = (http.address() as AddressInfo).port;
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
    behaviours,
    inFlight,
    openGate: () => {
      gate.open();
      gate = newGate();
    },
    untilInFlight: (count) =>
      inFlight.now >= count ? Promise.resolve() : new Promise((resolve) => watchers.push({ count, resolve })),
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
