// The sockets of every outbound client (HTTP systems, MCP servers): pooled per origin, and watched
// for the moment a request reaches one, so a call that never left the gateway is never reported as
// possibly sent. Errors that mean nothing was sent, and an error's code wherever it is nested.
import { type ClientRequest, Agent as HttpAgent, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/** Errors that mean nothing reached the system or server (no connection, or a request refused before sending). */
export const beforeSending = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export const codeOf = (error: unknown, depth = 0): string | undefined => {
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  if ('code' in error && typeof error.code === 'string' && /^[A-Z_]+$/.test(error.code)) return error.code;
  if ('cause' in error) return codeOf(error.cause, depth + 1);
  return undefined;
};

/** One connection pool per scheme; each keeps its sockets per origin. */
export interface Agents {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
}

// Idle sockets are closed after 4 s (or a second before the server's own keep-alive timeout, when
// it announces a shorter one), so a socket the server is about to close is rarely taken again.
const poolOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 4_000 };

export const keepAliveAgents = (): Agents => ({ http: new HttpAgent(poolOptions), https: new HttpsAgent(poolOptions) });

/**
 * A request to `url` through the pool of its scheme, not yet ended. Throws when node refuses it
 * before anything is sent (a scheme other than http and https, a header value it cannot write).
 */
export const openRequest = (url: URL, options: RequestOptions, agents: Agents): ClientRequest =>
  url.protocol === 'https:'
    ? httpsRequest(url, { ...options, agent: agents.https })
    : httpRequest(url, { ...options, agent: agents.http });

/**
 * Sends the body (if any) and ends the request. The length is always stated: node sends none of
 * its own for a DELETE or an OPTIONS, and a body without one would be read as the next request.
 */
export const endRequest = (request: ClientRequest, body: string | Uint8Array | undefined): void => {
  if (body !== undefined) {
    request.setHeader('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  }
  request.end(body);
};

/** A socket a request written to it would leave on: connected, and past the TLS handshake. */
const connected = (socket: Socket): boolean =>
  !socket.connecting && !socket.destroyed && (!(socket instanceof TLSSocket) || socket.getFinished() !== undefined);

/**
 * Calls `onSent` once the request is handed to a connected socket: a new one when it has connected
 * (and finished its TLS handshake), a kept-alive one at once. A request still waiting for a socket,
 * or on one still connecting, has sent nothing.
 */
export const whenSent = (request: ClientRequest, onSent: () => void): void => {
  request.once('socket', (socket: Socket) => {
    if (connected(socket)) {
      onSent();
      return;
    }
    socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', onSent);
  });
};
