// The demo organization's call-tool proxy: a WebSocket endpoint at /tool/call-tool (and nothing
// else) in front of an MCP server spoken to over stdio, by default the MCP project's example server
// (server-everything). Each connection carries one call: one params message in, the tool called
// through the official MCP client, one frame out, then the connection closes.
//
//   frame 0   the tool's CallToolResult, as the server returned it (isError included)
//   frame 1   the server's JSON-RPC error, its code unchanged (-32601, -32602, …)
//   frame 1   -32700 when the params are not JSON; -32602 when they are not {name, arguments?}
//   frame 1   -32600 when no params arrive within 10 s
//   frame 1   -32000 when the MCP server cannot be started or reached (nothing was called)
//   no frame  when the call was sent but no answer came (the server died or took longer than
//             60 s): the connection closes with 1011, so the caller knows the outcome is unknown
//
// The server is started on the first call and kept for the next ones, with an environment of
// its own (the MCP client's short list: HOME, PATH, SHELL, TERM, USER, LOGNAME), so nothing
// of the process that runs the proxy (the gateway's secrets included) can be read through it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { Client, ProtocolError } from '@modelcontextprotocol/client';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/client/stdio';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { type Listening, listen } from '../../infra/local/net.js';
import { jsonRpcCodes } from '../../shared/json-rpc-codes.js';
import { encodeFrame, type FrameErrorData } from '../../shared/wire/call-tool-frame.js';

/** The credential the demo proxy asks of its callers (the demo configuration sends it). */
export const demoCallToolToken = 'demo-tools-token-5c1e';

/** The JSON-RPC code answered when the MCP server cannot be started or reached. */
export const serverUnreachableCode = jsonRpcCodes.serverError;

/** Largest params message taken. */
const maxParamsBytes = 256 * 1024;
/** How long a connection may stay open without its params. */
const paramsWaitMs = 10_000;
const noParamsMessage = 'No params arrived: send the tools/call params first.';
/** How long a call may take on the MCP server. */
const callTimeoutMs = 60_000;

export interface DemoCallToolProxyOptions {
  readonly host?: string;
  readonly port?: number;
  /** The bearer token callers must present; null takes any caller. @default demoCallToolToken */
  readonly token?: string | null;
  /** The MCP server to run. @default server-everything over stdio, with the minimal environment */
  readonly server?: StdioServerParameters;
}

export interface DemoCallToolProxy extends Listening<Server> {
  /** The base URL a call-tool system names (http://host:port); the channel is <url>/tool/call-tool. */
  readonly url: string;
}

/** server-everything, run by this Node over stdio, with nothing from this process's environment. */
export const everythingServer = (): StdioServerParameters => ({
  command: process.execPath,
  args: [createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  env: {},
  stderr: 'ignore',
});

const errorFrame = (error: FrameErrorData): Uint8Array => encodeFrame({ kind: 'error', error });

type Params = { readonly name: string; readonly arguments?: Record<string, unknown> };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The params, or the frame refusing them. */
const readParams = (text: string): Params | Uint8Array => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return errorFrame({ code: jsonRpcCodes.parseError, message: 'Parse error: the params are not JSON.' });
  }
  if (
    !isObject(value) ||
    typeof value.name !== 'string' ||
    !(value.arguments === undefined || isObject(value.arguments))
  ) {
    return errorFrame({
      code: jsonRpcCodes.invalidParams,
      message: 'Invalid params: expected {"name": <tool>, "arguments": <object>}.',
    });
  }
  return { name: value.name, ...(value.arguments === undefined ? {} : { arguments: value.arguments }) };
};

/** One MCP client for the proxy's life, (re)connected when a call needs it. */
class ServerConnection {
  private connecting: Promise<Client> | null = null;

  constructor(private readonly parameters: StdioServerParameters) {}

  client(): Promise<Client> {
    if (this.connecting === null) {
      const client = new Client({ name: 'demo-call-tool-proxy', version: '1.0.0' });
      const transport = new StdioClientTransport(this.parameters);
      // A server that exits is started again by the next call.
      transport.onclose = () => {
        if (this.connecting === attempt) this.connecting = null;
      };
      const attempt: Promise<Client> = client.connect(transport).then(() => client);
      attempt.catch(() => {
        if (this.connecting === attempt) this.connecting = null;
      });
      this.connecting = attempt;
    }
    return this.connecting;
  }

  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = null;
    await connecting?.then((client) => client.close()).catch(() => undefined);
  }
}

export const startDemoCallToolProxy = async (options: DemoCallToolProxyOptions = {}): Promise<DemoCallToolProxy> => {
  const token = options.token === undefined ? demoCallToolToken : options.token;
  const connection = new ServerConnection(options.server ?? everythingServer());
  const sockets = new Set<Duplex>();

  /** Answers one call: a frame, or null when the call went out and its outcome is unknown. */
  const answer = async (text: string): Promise<Uint8Array | null> => {
    const params = readParams(text);
    if (params instanceof Uint8Array) return params;
    let client: Client;
    try {
      client = await connection.client();
    } catch {
      return errorFrame({ code: serverUnreachableCode, message: 'The MCP server could not be reached.' });
    }
    try {
      const result = await client.request({ method: 'tools/call', params }, { timeout: callTimeoutMs });
      return encodeFrame({ kind: 'result', result: { ...result } });
    } catch (error) {
      if (error instanceof ProtocolError) {
        return errorFrame({
          code: error.code,
          message: error.message,
          ...(error.data === undefined ? {} : { data: error.data }),
        });
      }
      return null;
    }
  };

  const serve = (socket: WebSocket): void => {
    socket.on('error', () => undefined);
    const waiting = setTimeout(() => {
      socket.send(errorFrame({ code: jsonRpcCodes.invalidRequest, message: noParamsMessage }));
      socket.close(1000);
    }, paramsWaitMs);
    socket.once('close', () => clearTimeout(waiting));
    socket.once('message', (data: RawData) => {
      clearTimeout(waiting);
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      void answer(bytes.toString('utf8')).then((frame) => {
        if (socket.readyState !== socket.OPEN) return;
        if (frame === null) socket.close(1011, 'no answer from the MCP server');
        else socket.send(frame, { binary: true }, () => socket.close(1000));
      });
    });
  };

  const server = createServer((_request, response) => {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('Only WebSocket /tool/call-tool is served here.\n');
  });
  const channel = new WebSocketServer({ noServer: true, maxPayload: maxParamsBytes, perMessageDeflate: false });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: string) =>
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    if (request.url !== '/tool/call-tool') refuse('404 Not Found');
    else if (token !== null && request.headers.authorization !== `Bearer ${token}`) refuse('401 Unauthorized');
    else channel.handleUpgrade(request, socket, head, serve);
  });
  const listening = await listen(server, options.host ?? '127.0.0.1', options.port ?? 0);
  const host = options.host === undefined || options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  return {
    ...listening,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${listening.port}`,
    close: async () => {
      for (const client of channel.clients) client.terminate();
      for (const socket of sockets) socket.destroy();
      channel.close();
      await listening.close();
      await connection.close();
    },
  };
};
