// Calls systems with undici: no redirects followed (undici's request() never follows them), one
// total deadline, the answer read only up to the size cap (the connection is destroyed there).
import { type Dispatcher, errors, request } from 'undici';
import type { OutboundRequest, OutboundResult, SystemClient } from '../invoke/system-client.js';

/** Errors that mean nothing reached the system. */
const beforeSending = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const httpMethods: readonly Dispatcher.HttpMethod[] = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'];
const isHttpMethod = (method: string): method is Dispatcher.HttpMethod => httpMethods.some((known) => known === method);

const codeOf = (error: unknown): string | undefined => {
  if (typeof error !== 'object' || error === null) return undefined;
  if ('code' in error && typeof error.code === 'string') return error.code;
  if ('cause' in error) return codeOf(error.cause);
  return undefined;
};

export class UndiciSystemClient implements SystemClient {
  constructor(private readonly dispatcher?: Dispatcher) {}

  async send(outbound: OutboundRequest): Promise<OutboundResult> {
    if (!isHttpMethod(outbound.method)) throw new Error(`Unsupported HTTP method ${outbound.method}.`);
    const method = outbound.method;
    const signal = AbortSignal.timeout(outbound.deadlineMs);
    let response: Dispatcher.ResponseData;
    try {
      response = await request(outbound.url, {
        method,
        headers: outbound.headers,
        body: outbound.body,
        signal,
        ...(this.dispatcher === undefined ? {} : { dispatcher: this.dispatcher }),
      });
    } catch (error) {
      const code = codeOf(error);
      const sent = code === undefined || !beforeSending.has(code);
      if (signal.aborted || error instanceof errors.HeadersTimeoutError) return { kind: 'timeout', sent };
      return { kind: 'connection_failed', sent };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        size += buffer.length;
        if (size > outbound.maxResponseBytes) {
          response.body.destroy();
          return { kind: 'too_large', status: response.statusCode };
        }
        chunks.push(buffer);
      }
    } catch {
      return signal.aborted ? { kind: 'timeout', sent: true } : { kind: 'connection_failed', sent: true };
    }
    const contentType = response.headers['content-type'];
    return {
      kind: 'response',
      status: response.statusCode,
      contentType: typeof contentType === 'string' ? contentType : null,
      body: Buffer.concat(chunks),
    };
  }
}
