// Which headers an agent may fill through a header parameter, and what a header value may hold.
// The gateway owns the connection, the framing, the credentials and its own tracing headers; an
// agent's argument never sets one of them (RFC 9110 §7.6.1, RFC 9112; OpenAPI 3.x "Parameter Object").
import { receiptHeader } from '../receipts/claims.js';

/** RFC 9110 token: a header field name. `api_key` is one; `X Key` or `X:Key` are not. */
export const headerNamePattern = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Hop-by-hop headers (RFC 9110 §7.6.1, plus the historic Keep-Alive and Proxy-Connection). */
const hopByHop = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/**
 * Headers proxies write about the client they forward for (RFC 7239 and the de facto X-Forwarded-*):
 * a system may trust them for who called and from where, so an agent's argument never claims them.
 */
const forwardingHeaders = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip'];

/** Headers only the gateway's HTTP client may set: where the request goes and how it is framed. */
const transportHeaders: ReadonlySet<string> = new Set([...hopByHop, 'host', 'content-length', 'expect']);

/** Header parameters OpenAPI 3.x says are ignored: the document describes these elsewhere. */
const openApiIgnoredHeaders: ReadonlySet<string> = new Set(['accept', 'content-type', 'authorization']);

/**
 * Headers the gateway sets itself, whatever the arguments say: on every call, and the approval
 * receipt on an approved one (an agent holding an earlier receipt never sends it as its own).
 */
const gatewayHeaders: ReadonlySet<string> = new Set(['x-request-id', 'traceparent', receiptHeader]);

/**
 * What becomes of a header parameter:
 * - `send`: an input field, sent under its name;
 * - `ignored`: OpenAPI says to ignore it (Accept, Content-Type, Authorization);
 * - `gateway`: the gateway sends its own value (the credential's header, x-request-id, traceparent),
 *   so an agent's value would never arrive and is not asked for;
 * - `forbidden`: a name no agent may set (the transport's headers, the forwarding headers proxies
 *   write, Cookie) or no valid name at all.
 */
export type HeaderParameterRule = 'send' | 'ignored' | 'gateway' | 'forbidden';

export const headerParameterRule = (name: string, credentialHeader: string | null): HeaderParameterRule => {
  const lower = name.toLowerCase();
  if (!headerNamePattern.test(name)) return 'forbidden';
  if (openApiIgnoredHeaders.has(lower)) return 'ignored';
  if (transportHeaders.has(lower) || forwardingHeaders.includes(lower) || lower === 'cookie') return 'forbidden';
  if (gatewayHeaders.has(lower) || lower === credentialHeader?.toLowerCase()) return 'gateway';
  return 'send';
};

/**
 * Names a configured credential header may not take: the transport's own, and those the gateway
 * sets on every call (its value would be replaced, or would replace the gateway's).
 */
export const reservedCredentialHeaders: ReadonlySet<string> = new Set([
  ...transportHeaders,
  ...gatewayHeaders,
  'accept',
  'content-type',
]);

/** A header value an agent's argument may become: printable ASCII (space to tilde), nothing else. */
export const printableHeaderValue = (value: string): boolean => /^[\x20-\x7e]*$/.test(value);

export const headerValueMessage =
  'A value sent as an HTTP header may hold only printable ASCII (space to ~): no line breaks, tabs or other characters.';
