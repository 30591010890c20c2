// The WebSocket transport of /tool/call-tool: an upgrade admitted (then bounded per agent), one
// message in, one binary frame out, then the close. A second message is never run; a connection
// that sends nothing gets the params-missing frame.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { maxChannelParamsBytes, paramsMissingFrame } from '../../shared/edge/call-tool/serve.js';
import { errorText, limitRefusals } from '../../shared/errors.js';
import { jsonRpcCodes } from '../../shared/json-rpc-codes.js';
import { limitsNow } from '../../shared/limits/agent-limits.js';
import { channelCapOf } from '../../shared/limits/channel-caps.js';
import type { Log } from '../../shared/log.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';
import { type ChannelAdmission, headerValue, jsonAnswer } from './call-tool-admission.js';
import { refuseUpgrade } from './upgrade-refusal.js';

/**
 * What the WebSocket layer takes before it cuts a message (close 1009): a little above the params
 * cap, so a message just over the cap still gets the -32600 frame.
 */
const maxChannelMessageBytes = maxChannelParamsBytes + 64 * 1024;

/** A WebSocket message's bytes, in whichever of its forms ws hands it over. */
export const bytesOf = (data: RawData): Buffer =>
  Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);

interface WebSocketTransportParts {
  readonly services: CallToolDeps;
  readonly log: Log;
  /** How long a connection may stay open without its params. */
  readonly waitMs: number;
  readonly admitRequest: (request: IncomingMessage, boundUrl: string) => Promise<ChannelAdmission>;
  /** Runs the params as the agent and gives the frame to send. */
  readonly answer: (agent: AgentIdentity, bytes: Buffer, traceparent: string | null) => Promise<Uint8Array>;
  /** Keeps a call running past its connection, for a stop to wait on. */
  readonly track: (work: Promise<void>) => void;
  readonly stopping: () => boolean;
}

interface WebSocketTransport {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, boundUrl: string): void;
  /** Closes the connections still waiting for their params (1001): they lose nothing. */
  closeWaiting(): void;
  /** Lets closing handshakes finish a moment, then ends every connection left. */
  close(): Promise<void>;
}

type SocketState = { state: 'waiting' | 'running' | 'done' };

/** Open WebSocket connections per agent, counted from the upgrade until the socket closes. */
const socketPlaces = () => {
  const openByAgent = new Map<string, number>();
  return {
    /** Takes one of the agent's places until the socket closes; false when none is left. */
    take: (agent: AgentIdentity, allowed: number, socket: Duplex): boolean => {
      const open = openByAgent.get(agent.id) ?? 0;
      if (open >= allowed) return false;
      openByAgent.set(agent.id, open + 1);
      socket.once('close', () => {
        const left = (openByAgent.get(agent.id) ?? 1) - 1;
        if (left > 0) openByAgent.set(agent.id, left);
        else openByAgent.delete(agent.id);
      });
      return true;
    },
  };
};

/** One connection: its one message run as the agent, its frame sent, then the close. */
const serveSocket = (
  parts: WebSocketTransportParts,
  sockets: Map<WebSocket, SocketState>,
  connection: { readonly ws: WebSocket; readonly agent: AgentIdentity; readonly traceparent: string | null },
) => {
  const { ws, agent, traceparent } = connection;
  const { log, waitMs } = parts;
  const entry: SocketState = { state: 'waiting' };
  sockets.set(ws, entry);
  /** A second message came before the answer: it is not run, and the close says why. */
  let extra = false;
  const timer = setTimeout(() => {
    if (entry.state !== 'waiting') return;
    entry.state = 'done';
    log.info('tools/call over /tool/call-tool', {
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
    parts.track(
      parts.answer(agent, bytesOf(data), traceparent).then((frame) => {
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
    log.info('a /tool/call-tool connection was closed for a protocol error', {
      agent_id: agent.id,
      error: error.message.slice(0, 200),
    }),
  );
  ws.once('close', () => {
    clearTimeout(timer);
    sockets.delete(ws);
  });
};

/** Lets closing handshakes under way finish a moment, so their close codes arrive; then ends the rest. */
const closeSockets = async (sockets: Map<WebSocket, SocketState>, wss: WebSocketServer) => {
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
};

export const createWebSocketTransport = (parts: WebSocketTransportParts): WebSocketTransport => {
  const { log } = parts;
  /** Open connections and where each is: waiting for its params, running its call, or done. */
  const sockets = new Map<WebSocket, SocketState>();
  const places = socketPlaces();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxChannelMessageBytes,
    // Text messages are checked as UTF-8 here, like binary ones, so both get the -32700 frame.
    skipUTF8Validation: true,
    perMessageDeflate: false,
  });

  const upgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer, boundUrl: string) => {
    if (parts.stopping()) {
      await refuseUpgrade(
        socket,
        jsonAnswer(503, 'Service Unavailable: the gateway is stopping', { 'retry-after': '10' }),
      );
      return;
    }
    const admission = await parts.admitRequest(request, boundUrl);
    if (admission.kind === 'refused') {
      await refuseUpgrade(socket, admission.answer);
      return;
    }
    const { agent } = admission;
    const allowed = channelCapOf(await limitsNow(parts.services.controlPlane, agent), 'openSocketsPerAgent');
    if (!places.take(agent, allowed, socket)) {
      await refuseUpgrade(socket, jsonAnswer(429, limitRefusals.concurrent(allowed).message, { 'retry-after': '1' }));
      return;
    }
    const traceparent = headerValue(request.headers.traceparent);
    // ws answers a request that is not a valid WebSocket handshake with 400 itself.
    wss.handleUpgrade(request, socket, head, (ws) => serveSocket(parts, sockets, { ws, agent, traceparent }));
  };

  return {
    handleUpgrade: (request, socket, head, boundUrl) => {
      // A socket error before ws takes the socket (a client gone mid-handshake) is not the process's.
      socket.on('error', () => undefined);
      upgrade(request, socket, head, boundUrl).catch((error: unknown) => {
        log.warn('a /tool/call-tool upgrade failed', { error: errorText(error) });
        socket.destroy();
      });
    },
    closeWaiting: () => {
      // A connection that has sent nothing loses nothing: it is closed at once, so it starts nothing new.
      for (const [ws, entry] of sockets) {
        if (entry.state !== 'waiting') continue;
        entry.state = 'done';
        ws.close(1001, 'the gateway is stopping');
      }
    },
    close: () => closeSockets(sockets, wss),
  };
};
