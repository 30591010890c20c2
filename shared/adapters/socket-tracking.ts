// Whether a request reached a socket, for every outbound client (HTTP systems, MCP servers): a
// call that never left the gateway is never reported as possibly sent. Errors that mean nothing
// was sent, an error's code wherever undici nests it, and a dispatcher that notes the socket.
import type { Dispatcher } from 'undici';

/** Errors that mean nothing reached the system or server (no connection, or a request refused before sending). */
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
