// The local fronts of /tool/call-tool: a WebSocket (one message in, one binary frame out, then the
// close) and an HTTP POST (the params as the body, the frame as the answer). Both check the Host,
// the Origin and the bearer token exactly as /mcp does, count against the same per-agent gate, and
// hand the params to the channel's use-case (shared/edge/call-tool/serve.ts).
//
// Long: two transports of one channel with their checks, their bounds and their clean stop; split,
// each half would repeat the other's checks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { hostHeaderValidationResponse, originValidationResponse } from '@modelcontextprotocol/server';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import {
  answerChannelBytes,
  type ChannelAnswer,
  channelParamsWaitMs,
  maxChannelParamsBytes,
  paramsMissingFrame,
  paramsTooLargeFrame,
  postedParamsRefusal,
} from '../../shared/edge/call-tool/serve.js';
import { unauthorizedResponse } from '../../shared/edge/mcp/auth-challenge.js';
import { errorText, limitRefusals } from '../../shared/errors.js';
import { jsonRpcCodes } from '../../shared/json-rpc-codes.js';
import { limitsNow } from '../../shared/limits/agent-limits.js';
import type { RequestGate } from '../../shared/limits/request-gate.js';
import type { Log } from '../../shared/log.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';
import { identifyCaller } from '../../shared/use-cases/identify-caller.js';
import type { Authorization } from './authorizer.js';
import { isWellFormedHost } from './net.js';
import { refuseUpgrade } from './upgrade-refusal.js';

export const callToolPath = '/tool/call-tool';

/**
 * What the WebSocket layer takes before it cuts a message (close 1009): a little above the params
 * cap, so a message just over the cap still gets the -32600 frame.
 */
export const maxChannelMessageBytes = maxChannelParamsBytes + 64 * 1024;

/** The longest a call may run before a stop stops waiting for it (as /mcp's function timeout). */
const callTimeoutMs = 30_000;

export interface CallToolFrontOptions {
  readonly services: CallToolDeps;
  /** The per-agent gate /mcp counts against: the channel's calls count there too. */
  readonly gate: RequestGate;
  readonly authorize: (authorizationHeader: string | undefined) => Promise<Authorization>;
  /** Host header names accepted (port-agnostic), as /mcp's. */
  readonly allowedHostnames: readonly string[];
  /** Browser Origin hostnames accepted, as /mcp's; requests without an Origin pass. */
  readonly allowedOrigins: readonly string[];
  /** The configured public base URL the 401 challenge names; null: the address the front is bound to. */
  readonly publicUrl: string | null;
  readonly log: Log;
  /** How long a connection may stay open without its params. @default channelParamsWaitMs (10 s) */
  readonly paramsWaitMs?: number;
}

export interface CallToolFront {
  readonly path: string;
  readonly timeoutMs: number;
  /** Answers an HTTP request on the path; `boundUrl` is the front's own address. */
  handleRequest(request: IncomingMessage, response: ServerResponse, boundUrl: string): Promise<void>;
  /** Takes (or refuses) an upgrade request on the path. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, boundUrl: string): void;
  /** Takes nothing new, closes connections still waiting for their params (1001), lets calls in flight answer. */
  drain(): Promise<void>;
  /** Drains, then ends every connection left. */
  close(): Promise<void>;
}

type Transport = 'websocket' | 'http';

/** A WebSocket message's bytes, in whichever of its forms ws hands it over. */
export const bytesOf = (data: RawData): Buffer =>
  Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);

const headerValue = (value: string | string[] | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? (value[0] ?? null) : value;

const jsonAnswer = (status: number, message: string, headers: Record<string, string> = {}): Response =>
  Response.json({ message }, { status, headers });

const frameAnswer = (status: number, frame: Uint8Array): Response =>
  new Response(new Uint8Array(frame), {
    status,
    headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' },
  });

const writeAnswer = async (response: ServerResponse, answer: Response, close: boolean): Promise<void> => {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (close) headers.connection = 'close';
  const body = Buffer.from(await answer.arrayBuffer());
  response.writeHead(answer.status, headers).end(body);
};

/** What reading a POST's body gave. */
type Body =
  | { readonly kind: 'read'; readonly bytes: Buffer }
  | { readonly kind: 'too_large' }
  | { readonly kind: 'late' }
  | { readonly kind: 'failed' };

/** Reads a body up to the cap and within the wait; nothing past the cap is kept. */
const readBody = (request: IncomingMessage, waitMs: number): Promise<Body> =>
  new Promise((resolve) => {
    const declared = Number(request.headers['content-length'] ?? '0');
    if (declared > maxChannelParamsBytes) {
      resolve({ kind: 'too_large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (body: Body) => {
      clearTimeout(timer);
      request.off('data', onData);
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxChannelParamsBytes) {
        request.pause();
        finish({ kind: 'too_large' });
      } else chunks.push(chunk);
    };
    const timer = setTimeout(() => finish({ kind: 'late' }), waitMs);
    request.on('data', onData);
    request.once('end', () => finish({ kind: 'read', bytes: Buffer.concat(chunks) }));
    request.once('error', () => finish({ kind: 'failed' }));
  });

export const createCallToolFront = (options: CallToolFrontOptions): CallToolFront => {
  const waitMs = options.paramsWaitMs ?? channelParamsWaitMs;
  /** Open connections and where each is: waiting for its params, running its call, or done. */
  const sockets = new Map<WebSocket, { state: 'waiting' | 'running' | 'done' }>();
  /** Open WebSocket connections per agent, counted from the upgrade until the socket closes. */
  const openByAgent = new Map<string, number>();
  const inflight = new Set<Promise<void>>();
  let stopping = false;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxChannelMessageBytes,
    // Text messages are checked as UTF-8 here, like binary ones, so both get the -32700 frame.
    skipUTF8Validation: true,
    perMessageDeflate: false,
  });

  /** The same refusals as /mcp, in its order: a Host outside the allowed names, a browser Origin not listed. */
  const hostOrOriginRefusal = (request: IncomingMessage): Response | undefined => {
    const headers = new Headers();
    for (const name of ['host', 'origin'] as const) {
      const value = headerValue(request.headers[name]);
      if (value !== null) headers.set(name, value);
    }
    const web = new Request(`http://front.local${callToolPath}`, { headers });
    return (
      hostHeaderValidationResponse(web, [...options.allowedHostnames]) ??
      originValidationResponse(web, [...options.allowedOrigins])
    );
  };

  /** The agent the request's bearer token names, or the 401 to answer. */
  const authenticate = async (
    request: IncomingMessage,
    boundUrl: string,
  ): Promise<{ readonly agent: AgentIdentity } | { readonly refusal: Response }> => {
    const authorization = await options.authorize(headerValue(request.headers.authorization) ?? undefined);
    const agent =
      authorization.kind === 'authorized' ? await identifyCaller(options.services, authorization.caller) : null;
    if (agent !== null) return { agent };
    const tokenPresented = authorization.kind === 'refused' ? authorization.tokenPresented : true;
    return { refusal: unauthorizedResponse(options.publicUrl ?? boundUrl, tokenPresented) };
  };

  /** One line per call: who, which tool, how it ended; never its arguments. */
  const logCall = (agent: AgentIdentity, transport: Transport, answer: ChannelAnswer, startedAt: number) =>
    options.log.info('tools/call over /tool/call-tool', {
      agent_id: agent.id,
      transport,
      tool: answer.tool,
      ...answer.outcome,
      duration_ms: Date.now() - startedAt,
    });

  const answerBytes = async (
    agent: AgentIdentity,
    bytes: Buffer,
    traceparent: string | null,
    transport: Transport,
  ): Promise<Uint8Array> => {
    const startedAt = Date.now();
    const answer = await answerChannelBytes(options.services, { gate: options.gate }, { agent, bytes, traceparent });
    logCall(agent, transport, answer, startedAt);
    return answer.frame;
  };

  const track = (work: Promise<void>) => {
    const tracked = work.catch((error: unknown) =>
      options.log.warn('a /tool/call-tool call failed', { error: errorText(error) }),
    );
    inflight.add(tracked);
    void tracked.finally(() => inflight.delete(tracked));
  };

  const serveSocket = (ws: WebSocket, agent: AgentIdentity, traceparent: string | null) => {
    const entry: { state: 'waiting' | 'running' | 'done' } = { state: 'waiting' };
    sockets.set(ws, entry);
    /** A second message came before the answer: it is not run, and the close says why. */
    let extra = false;
    const timer = setTimeout(() => {
      if (entry.state !== 'waiting') return;
      entry.state = 'done';
      options.log.info('tools/call over /tool/call-tool', {
        agent_id: agent.id,
        transport: 'websocket',
        tool: null,
        error: jsonRpcCodes.invalidRequest,
        reason: 'no params',
      });
      ws.send(paramsMissingFrame(waitMs), { binary: true });
      ws.close(1000);
    }, waitMs);
    ws.on('message', (data) => {
      if (entry.state === 'done') return;
      if (entry.state === 'running') {
        // Read no further (TCP holds the rest back) until the first call's frame is sent.
        extra = true;
        ws.pause();
        return;
      }
      entry.state = 'running';
      clearTimeout(timer);
      track(
        answerBytes(agent, bytesOf(data), traceparent, 'websocket').then((frame) => {
          entry.state = 'done';
          // A client gone before its answer loses only the frame: the call is complete and recorded.
          if (ws.readyState !== ws.OPEN) return;
          if (extra) ws.resume();
          ws.send(frame, { binary: true });
          if (extra) ws.close(1008, 'one message per connection');
          else ws.close(1000);
        }),
      );
    });
    ws.on('error', (error) =>
      // Protocol errors (a message past the WebSocket cap, a malformed frame): ws closes the socket itself.
      options.log.info('a /tool/call-tool connection was closed for a protocol error', {
        agent_id: agent.id,
        error: error.message.slice(0, 200),
      }),
    );
    ws.once('close', () => {
      clearTimeout(timer);
      sockets.delete(ws);
    });
  };

  const upgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer, boundUrl: string) => {
    if (stopping) {
      await refuseUpgrade(
        socket,
        jsonAnswer(503, 'Service Unavailable: the gateway is stopping', { 'retry-after': '10' }),
      );
      return;
    }
    if (!isWellFormedHost(request.headers.host)) {
      await refuseUpgrade(
        socket,
        jsonAnswer(400, 'Bad Request: the Host header is not a host name or address (and port)'),
      );
      return;
    }
    const refused = hostOrOriginRefusal(request);
    if (refused !== undefined) {
      await refuseUpgrade(socket, refused);
      return;
    }
    const identity = await authenticate(request, boundUrl);
    if ('refusal' in identity) {
      await refuseUpgrade(socket, identity.refusal);
      return;
    }
    const { agent } = identity;
    // An open connection holds one of the agent's concurrent requests' worth of sockets: a flood
    // of silent connections is refused before it costs a WebSocket each.
    const limits = await limitsNow(options.services.controlPlane, agent);
    const open = openByAgent.get(agent.id) ?? 0;
    if (open >= limits.concurrentRequests) {
      await refuseUpgrade(
        socket,
        jsonAnswer(429, limitRefusals.concurrent(limits.concurrentRequests).message, { 'retry-after': '1' }),
      );
      return;
    }
    openByAgent.set(agent.id, open + 1);
    socket.once('close', () => {
      const left = (openByAgent.get(agent.id) ?? 1) - 1;
      if (left > 0) openByAgent.set(agent.id, left);
      else openByAgent.delete(agent.id);
    });
    const traceparent = headerValue(request.headers.traceparent);
    // ws answers a request that is not a valid WebSocket handshake with 400 itself.
    wss.handleUpgrade(request, socket, head, (ws) => serveSocket(ws, agent, traceparent));
  };

  const post = async (request: IncomingMessage, response: ServerResponse, boundUrl: string) => {
    if ((request.method ?? '').toUpperCase() !== 'POST') {
      await writeAnswer(
        response,
        jsonAnswer(405, 'Method Not Allowed: send the params with POST.', { allow: 'POST' }),
        true,
      );
      return;
    }
    const refused = hostOrOriginRefusal(request);
    if (refused !== undefined) {
      await writeAnswer(response, refused, true);
      return;
    }
    const identity = await authenticate(request, boundUrl);
    if ('refusal' in identity) {
      await writeAnswer(response, identity.refusal, true);
      return;
    }
    const unfit = postedParamsRefusal(request.headers['content-type']);
    if (unfit !== null) {
      await writeAnswer(response, frameAnswer(415, unfit), true);
      return;
    }
    const body = await readBody(request, waitMs);
    if (body.kind === 'failed') return;
    if (body.kind !== 'read') {
      // Answer, then drop the connection rather than read the rest of the upload.
      response.once('finish', () => request.destroy());
      const answer =
        body.kind === 'too_large'
          ? frameAnswer(413, paramsTooLargeFrame())
          : frameAnswer(408, paramsMissingFrame(waitMs));
      await writeAnswer(response, answer, true);
      return;
    }
    const frame = await answerBytes(identity.agent, body.bytes, headerValue(request.headers.traceparent), 'http');
    await writeAnswer(response, frameAnswer(200, frame), stopping);
  };

  const drain = async () => {
    stopping = true;
    // A connection that has sent nothing loses nothing: it is closed at once, so it starts nothing new.
    for (const [ws, entry] of sockets) {
      if (entry.state !== 'waiting') continue;
      entry.state = 'done';
      ws.close(1001, 'the gateway is stopping');
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...inflight]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, callTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
  };

  return {
    path: callToolPath,
    timeoutMs: callTimeoutMs,
    handleRequest: post,
    handleUpgrade: (request, socket, head, boundUrl) => {
      // A socket error before ws takes the socket (a client gone mid-handshake) is not the process's.
      socket.on('error', () => undefined);
      upgrade(request, socket, head, boundUrl).catch((error: unknown) => {
        options.log.warn('a /tool/call-tool upgrade failed', {
          error: errorText(error),
        });
        socket.destroy();
      });
    },
    drain,
    close: async () => {
      await drain();
      // Closing handshakes under way get a moment to finish, so their close codes arrive; then the rest ends.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...sockets.keys()].map((ws) => new Promise((resolve) => ws.once('close', resolve)))),
        new Promise((resolve) => {
          timer = setTimeout(resolve, 2_000);
        }),
      ]);
      clearTimeout(timer);
      for (const ws of sockets.keys()) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
};
