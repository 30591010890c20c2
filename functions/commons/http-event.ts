// API Gateway HTTP API (payload 2.0) events turned into web-standard Requests and Responses back
// into results, so handlers can use fetch-shaped libraries such as the MCP SDK's entry.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Caller } from '../../shared/auth/agent.js';
import type { PlainAnswer } from '../../shared/edge/mcp/plain-tool-call.js';
import type { McpRequestHead } from '../../shared/edge/mcp/request-head.js';
import { isRecord } from '../../shared/objects.js';
import { callerFromContext } from './caller-context.js';
import type { HttpResult } from './middleware.js';

/**
 * The caller the HTTP API's Lambda authorizer passed on (its context, under `lambda`); null when it
 * passed none. The edge builds this part of the event (API Gateway, or the local front), so its
 * shape is checked here without a schema; each value is checked where it is read.
 */
export const authorizedCallerOf = (event: APIGatewayProxyEventV2): Caller | null => {
  const context: unknown = event.requestContext;
  if (!isRecord(context) || !isRecord(context.authorizer) || !isRecord(context.authorizer.lambda)) return null;
  return callerFromContext(context.authorizer.lambda);
};

/** The event's body as bytes (API Gateway base64-encodes bodies it does not treat as text). */
export const eventBody = (event: APIGatewayProxyEventV2): Buffer | undefined => {
  if (event.body === undefined || event.body === null) return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
};

/** The size of the event's body in bytes (a text body's without copying it). */
export const eventBodyBytes = (event: APIGatewayProxyEventV2): number => {
  if (event.body === undefined || event.body === null) return 0;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').length : Buffer.byteLength(event.body, 'utf8');
};

/**
 * Whether the event's body is larger than `limitBytes`, counted only when it could be: UTF-8 spends
 * at most three bytes on one UTF-16 code unit, and base64 holds three bytes in four characters.
 */
export const eventBodyExceeds = (event: APIGatewayProxyEventV2, limitBytes: number): boolean => {
  const length = event.body?.length ?? 0;
  const mostBytes = event.isBase64Encoded ? Math.ceil(length / 4) * 3 : length * 3;
  return mostBytes > limitBytes && eventBodyBytes(event) > limitBytes;
};

/** UTF-8 as fetch's body reading decodes it; the byte order mark is dropped below, once. */
const bytesAsText = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The event's body as text, read exactly as a web Request's body would be (UTF-8, a leading byte
 * order mark dropped, what is not UTF-8 replaced by U+FFFD), without building the request's stream.
 */
export const eventBodyText = (event: APIGatewayProxyEventV2): string => {
  if (event.body === undefined || event.body === null) return '';
  const text = event.isBase64Encoded
    ? bytesAsText.decode(Buffer.from(event.body, 'base64'))
    : event.body.toWellFormed();
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
};

/** The public origin the request came in on, as the client used it. */
export const requestOrigin = (event: APIGatewayProxyEventV2): string => {
  const forwarded = event.headers['x-forwarded-proto'];
  const scheme = forwarded === 'http' ? 'http' : 'https';
  const host = event.headers.host ?? event.requestContext.domainName;
  return `${scheme}://${host}`;
};

export const toWebRequest = (
  event: APIGatewayProxyEventV2,
  body: Buffer | undefined,
  signal?: AbortSignal,
): Request => {
  const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers)) if (value !== undefined) headers.set(name, value);
  if (event.cookies && event.cookies.length > 0) headers.set('cookie', event.cookies.join('; '));
  const method = event.requestContext.http.method.toUpperCase();
  return new Request(`${requestOrigin(event)}${event.rawPath}${query}`, {
    method,
    headers,
    ...(body === undefined || method === 'GET' || method === 'HEAD' ? {} : { body: new Uint8Array(body) }),
    ...(signal === undefined ? {} : { signal }),
  });
};

/** Fetch's header value normalization: leading and trailing HTTP whitespace removed. */
const httpWhitespaceAround = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * The event as the MCP endpoint reads a request (its body read apart, as text): headers as the web
 * Request built from it would give them, and that Request (without a body) only when asked for.
 */
export const eventRequestHead = (event: APIGatewayProxyEventV2, signal?: AbortSignal): McpRequestHead => {
  let web: Request | undefined;
  return {
    method: event.requestContext.http.method.toUpperCase(),
    header(name) {
      const key = name.toLowerCase();
      const value =
        key === 'cookie' && event.cookies && event.cookies.length > 0 ? event.cookies.join('; ') : event.headers[key];
      return value === undefined ? null : value.replace(httpWhitespaceAround, '');
    },
    web() {
      web ??= toWebRequest(event, undefined, signal);
      return web;
    },
  };
};

/** A plain tools/call's answer as the Lambda result fromWebResponse makes of its web Response. */
export const fromPlainAnswer = (answer: PlainAnswer): HttpResult => ({
  statusCode: answer.status,
  headers: { 'content-type': answer.contentType },
  body: answer.body,
  isBase64Encoded: false,
});

const textTypes = /^(application\/(json|xml|[\w.+-]*\+json)|text\/)/i;

export const fromWebResponse = async (response: Response): Promise<HttpResult> => {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') cookies.push(value);
    else headers[name] = value;
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const contentType = response.headers.get('content-type') ?? '';
  const asText = bytes.length === 0 || textTypes.test(contentType);
  return {
    statusCode: response.status,
    headers,
    ...(cookies.length > 0 ? { cookies } : {}),
    body: asText ? bytes.toString('utf8') : bytes.toString('base64'),
    isBase64Encoded: !asText,
  };
};
