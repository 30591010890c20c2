// The pieces of the gateway's own fetch for MCP servers: a fetch over node's HTTP client that
// follows no redirect and tells when a request reached a socket (see socket-tracking.ts), one
// exchange's record of what its requests did, and answers read only up to their cap.
import type { IncomingMessage } from 'node:http';
import { isJsonObject } from '../catalog/tool.js';
import { parseExactJson } from '../wire/exact-json.js';
import { type Agents, endRequest, openRequest, whenSent } from './socket-tracking.js';

/** One exchange (a tools/call, or one discovery's pages): what its requests did, and its limits. */
export interface Exchange {
  /** A request of it reached a socket. */
  sent: boolean;
  /** Bytes of answer read so far, across its requests. */
  read: number;
  readonly limit: number;
  tooLarge: boolean;
  readonly signal: AbortSignal;
  /**
   * The answer's bytes as they came (within the limit), kept where a number the MCP client reads
   * as a double may need its own digits again (a tools/call).
   */
  readonly kept?: Uint8Array[];
}

/** The part of a request the MCP client and the OAuth helpers give a fetch. */
export interface HttpFetchInit {
  readonly method: string;
  readonly headers: Headers;
  readonly body?: unknown;
  readonly signal?: AbortSignal | undefined;
}

/** Statuses whose response has no body (a Response refuses one). */
const bodiless = new Set([101, 204, 205, 304]);

const bodyBytes = (body: unknown): string | Uint8Array | undefined => {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('the gateway sends only string or byte bodies to MCP servers');
};

const headersOf = (response: IncomingMessage): Headers => {
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index] ?? '', raw[index + 1] ?? '');
  return headers;
};

/** The body as a web stream, read from the socket only as it is pulled; cancelling it drops the connection. */
const streamOf = (response: IncomingMessage): ReadableStream<Uint8Array> => {
  const chunks = response[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next: IteratorResult<unknown> = await chunks.next();
        if (next.done) return controller.close();
        if (next.value instanceof Uint8Array) return controller.enqueue(next.value);
      }
    },
    cancel() {
      response.destroy();
    },
  });
};

/**
 * One request, as fetch would make it with `redirect: 'manual'`: a redirect is returned as it is,
 * never followed. The body streams as it arrives (an SSE answer is read event by event); aborting
 * the signal ends the request, or the body where it has got to. `onSent` is called once the request
 * is handed to a connected socket.
 */
export const httpFetch = (agents: Agents, url: URL, init: HttpFetchInit, onSent?: () => void): Promise<Response> =>
  new Promise((resolve, reject) => {
    const signal = init.signal;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const body = bodyBytes(init.body);
    const request = openRequest(
      url,
      { method: init.method, headers: Object.fromEntries(init.headers.entries()) },
      agents,
    );
    let response: IncomingMessage | undefined;
    // Ends the request, or the body where it has got to: a reader of the body sees the abort.
    const abort = (): void => {
      response?.destroy(signal?.reason);
      request.destroy(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
    request.once('close', () => signal?.removeEventListener('abort', abort));
    if (onSent !== undefined) whenSent(request, onSent);
    request.on('error', reject);
    request.once('response', (received) => {
      response = received;
      const status = received.statusCode ?? 0;
      const answer = bodiless.has(status) ? null : streamOf(received);
      if (answer === null) received.resume();
      try {
        resolve(
          new Response(answer, { status, statusText: received.statusMessage ?? '', headers: headersOf(received) }),
        );
      } catch (error) {
        // A status a Response cannot hold (beyond 599): nothing the gateway could read.
        request.destroy();
        reject(error);
      }
    });
    endRequest(request, body);
  });

/** The part of a response body the counting reads. */
export interface BodySource {
  getReader(): {
    read(): Promise<{ readonly done: boolean; readonly value?: unknown }>;
    cancel(reason?: unknown): Promise<void>;
  };
}

/** A read body that stops at the cap (and marks its exchange too large there). */
export const countedBody = (body: BodySource | null, exchange: Exchange | undefined, cap: number) => {
  if (body === null) return null;
  const reader = body.getReader();
  let read = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await reader.read();
      if (chunk.done || !(chunk.value instanceof Uint8Array)) return controller.close();
      read += chunk.value.byteLength;
      if (exchange !== undefined) exchange.read += chunk.value.byteLength;
      if (read > cap || (exchange !== undefined && exchange.read > exchange.limit)) {
        if (exchange !== undefined) exchange.tooLarge = true;
        await reader.cancel().catch(() => undefined);
        return controller.error(new Error('the answer is larger than the size cap'));
      }
      exchange?.kept?.push(chunk.value);
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
};

/**
 * The `result` of the JSON-RPC answer in an exchange's kept bytes, read exactly (integers beyond
 * 2^53 as bigint): a JSON body, or the SSE event that carries it; undefined when none is found.
 */
export const exactResultOf = (kept: readonly Uint8Array[]): unknown => {
  const text = Buffer.concat(kept).toString('utf8');
  const trimmed = text.trim();
  // A JSON body is one message; an SSE stream holds one per event, in `data:` lines.
  const messages = trimmed.startsWith('{')
    ? [trimmed]
    : text.split(/\r\n\r\n|\n\n|\r\r/).map((event) =>
        event
          .split(/\r\n|\n|\r/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
          .join('\n'),
      );
  for (const message of messages) {
    try {
      const value = parseExactJson(message);
      if (isJsonObject(value) && Object.hasOwn(value, 'result')) return value.result;
    } catch {
      // A message that is not JSON is not the answer; a later one may be (a probe, not a failure).
    }
  }
  return undefined;
};
