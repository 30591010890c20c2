// The pieces of the gateway's own fetch for MCP servers: which request reached a socket (so a call
// that never left is never reported as possibly sent), and answers read only up to their cap.
import type { Dispatcher } from 'undici';

/** Errors that mean nothing reached the server (no connection, or a request refused before sending). */
export const beforeSending = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_INVALID_ARG',
]);

export const codeOf = (error: unknown, depth = 0): string | undefined => {
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  if ('code' in error && typeof error.code === 'string' && /^[A-Z_]+$/.test(error.code)) return error.code;
  if ('cause' in error) return codeOf(error.cause, depth + 1);
  return undefined;
};

/** A dispatcher that notes when a request is handed to a connected socket. */
export const tracking = (base: Dispatcher, onSocket: () => void): Dispatcher =>
  base.compose((dispatch) => (options, handler) => {
    const marked = new Proxy(handler, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (property === 'onRequestStart' || property === 'onConnect') {
          return (...args: unknown[]) => {
            onSocket();
            return Reflect.apply(value, target, args);
          };
        }
        return value.bind(target);
      },
    });
    return dispatch(options, marked);
  });

/** One exchange (a tools/call, or one discovery's pages): what its requests did, and its limits. */
export interface Exchange {
  /** A request of it reached a socket. */
  sent: boolean;
  /** Bytes of answer read so far, across its requests. */
  read: number;
  readonly limit: number;
  tooLarge: boolean;
  readonly signal: AbortSignal;
}

/** The part of a response body the counting reads (undici's and the platform's streams both have it). */
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
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
};
