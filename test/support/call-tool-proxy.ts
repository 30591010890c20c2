// A /tool/call-tool proxy on loopback whose behaviour each test sets: it answers a given frame (or
// bytes that are not one), drops the connection, never answers, answers only when released,
// starts a frame it never finishes, or refuses the upgrade. It records every connection (the
// upgrade's headers and each message exactly as it arrived) so tests check what the gateway sent.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { listen } from '../../infra/local/net.js';
import { encodeFrame, type FrameErrorData } from '../../shared/wire/call-tool-frame.js';

export type ProxyBehaviour =
  /** Frame 0 with this CallToolResult. */
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  /** Frame 1 with this JSON-RPC error. */
  | { readonly kind: 'error'; readonly error: FrameErrorData }
  /** These bytes as one binary message (an unknown tag, a body that is not JSON…). */
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  /** Several binary messages, one after another. */
  | { readonly kind: 'frames'; readonly frames: readonly Uint8Array[] }
  /** A text message instead of a binary one. */
  | { readonly kind: 'text'; readonly text: string }
  /** A binary message of this many bytes (frame 0, padded), to exceed a size cap. */
  | { readonly kind: 'huge'; readonly bytes: number }
  /** Drop the connection (no close frame) once the params arrived. */
  | { readonly kind: 'drop' }
  /** Close the connection properly, without answering. */
  | { readonly kind: 'close' }
  /** Never answer; the connection stays open until the other side gives up. */
  | { readonly kind: 'hang' }
  /** Answer this frame only when the test calls release(). */
  | { readonly kind: 'late'; readonly answer: ProxyBehaviour }
  /** Start a binary frame announcing more bytes than ever come. */
  | { readonly kind: 'endless' }
  /** Write bytes that are not WebSocket framing at all. */
  | { readonly kind: 'not-websocket' }
  /** Refuse the upgrade with this HTTP status (and a body of prose with a secret in it). */
  | { readonly kind: 'refuse'; readonly status: number };

/** One connection, as the proxy saw it. */
export interface ProxyConnection {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** Each message's text (the params), in order. */
  readonly messages: string[];
  /** Whether each message came as binary. */
  readonly binary: boolean[];
}

export interface CallToolProxy {
  /** The proxy's base URL (http://127.0.0.1:<port>); the channel is <url>/tool/call-tool. */
  readonly url: string;
  readonly connections: ProxyConnection[];
  /** Sets what the proxy does with each next connection, by default or by what it was sent. */
  behave(behaviour: ProxyBehaviour | ((params: string) => ProxyBehaviour)): void;
  /** Sends the answers held by `late` behaviours. */
  release(): void;
  /** Waits until this many connections have ended (bounded). */
  ended(count: number): Promise<void>;
  /** Forgets the connections recorded so far. */
  reset(): void;
  close(): Promise<void>;
}

/** Prose an upstream might send; none of it may ever reach an agent. */
export const upstreamProse = 'Traceback: db password=hunter2-upstream at /srv/tools/secret.py';

const frameOf = (behaviour: ProxyBehaviour): Uint8Array | null => {
  switch (behaviour.kind) {
    case 'result':
      return encodeFrame({ kind: 'result', result: behaviour.result });
    case 'error':
      return encodeFrame({ kind: 'error', error: behaviour.error });
    case 'bytes':
      return behaviour.bytes;
    case 'huge': {
      const bytes = new Uint8Array(behaviour.bytes).fill(0x20);
      bytes.set(encodeFrame({ kind: 'result', result: { content: [] } }));
      return bytes;
    }
    default:
      return null;
  }
};

export const startCallToolProxy = async (): Promise<CallToolProxy> => {
  const connections: ProxyConnection[] = [];
  let choose: (params: string) => ProxyBehaviour = () => ({ kind: 'result', result: { content: [] } });
  let held: (() => void)[] = [];
  let endedCount = 0;
  const endWaiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Duplex>();

  const noteEnded = () => {
    endedCount += 1;
    for (const waiter of endWaiters.filter((entry) => entry.count <= endedCount)) {
      endWaiters.splice(endWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const act = (socket: WebSocket, raw: Duplex, behaviour: ProxyBehaviour): void => {
    const frame = frameOf(behaviour);
    if (frame !== null) {
      socket.send(frame, { binary: true }, () => socket.close(1000));
      return;
    }
    switch (behaviour.kind) {
      case 'frames':
        for (const bytes of behaviour.frames) socket.send(bytes, { binary: true });
        socket.close(1000);
        return;
      case 'text':
        socket.send(behaviour.text, { binary: false }, () => socket.close(1000));
        return;
      case 'drop':
        socket.terminate();
        return;
      case 'close':
        socket.close(1000);
        return;
      case 'late':
        held.push(() => {
          if (socket.readyState === socket.OPEN) act(socket, raw, behaviour.answer);
        });
        return;
      case 'endless':
        // A binary frame announcing 60 000 bytes, then only ten of them.
        raw.write(Buffer.from([0x82, 126, 0xea, 0x60, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
        return;
      case 'not-websocket':
        raw.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
        return;
      default:
        return;
    }
  };

  const server: Server = createServer((_request, response) => response.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (request: IncomingMessage, raw: Duplex, head: Buffer) => {
    const record: ProxyConnection = {
      path: request.url ?? '',
      headers: request.headers,
      messages: [],
      binary: [],
    };
    connections.push(record);
    // Refusals are decided before the params exist: by the default behaviour.
    const first = choose('');
    if (request.url !== '/tool/call-tool' || first.kind === 'refuse') {
      const status = first.kind === 'refuse' ? first.status : 404;
      raw.end(`HTTP/1.1 ${status} Refused\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${upstreamProse}`);
      noteEnded();
      return;
    }
    wss.handleUpgrade(request, raw, head, (socket) => {
      socket.on('error', () => undefined);
      socket.on('close', noteEnded);
      socket.on('message', (data: RawData, isBinary: boolean) => {
        const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
        record.messages.push(text);
        record.binary.push(isBinary);
        if (record.messages.length === 1) act(socket, raw, choose(text));
      });
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    connections,
    behave: (behaviour) => {
      choose = typeof behaviour === 'function' ? behaviour : () => behaviour;
    },
    release: () => {
      const pending = held;
      held = [];
      for (const answer of pending) answer();
    },
    ended: (count) =>
      new Promise<void>((resolve, reject) => {
        if (endedCount >= count) {
          resolve();
          return;
        }
        const timer = setTimeout(() => reject(new Error(`Only ${endedCount} of ${count} connections ended`)), 30_000);
        endWaiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    reset: () => {
      connections.splice(0);
      held = [];
      endedCount = 0;
    },
    close: async () => {
      for (const client of wss.clients) client.terminate();
      for (const socket of sockets) socket.destroy();
      wss.close();
      await listening.close();
    },
  };
};
