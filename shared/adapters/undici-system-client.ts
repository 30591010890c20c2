// Calls systems with undici: no redirects followed (undici's request() never follows them), one
// total deadline from the first attempt to connect to the last byte read, and the answer read only
// up to the size cap (the connection is destroyed there). Whether the request reached the socket
// is tracked, so a call that never left the gateway is never reported as possibly sent.
import { Agent, type Dispatcher, request } from 'undici';
import type { OutboundRequest, OutboundResult, SystemClient } from '../invoke/system-client.js';
import { beforeSending, codeOf, tracking } from './socket-tracking.js';

const httpMethods: readonly Dispatcher.HttpMethod[] = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'];
const isHttpMethod = (method: string): method is Dispatcher.HttpMethod => httpMethods.some((known) => known === method);

const timedOut = Symbol('timed out');

export class UndiciSystemClient implements SystemClient {
  private readonly pool: Dispatcher;

  constructor(dispatcher?: Dispatcher) {
    this.pool = dispatcher ?? new Agent();
  }

  async send(outbound: OutboundRequest): Promise<OutboundResult> {
    if (!isHttpMethod(outbound.method)) throw new Error(`Unsupported HTTP method ${outbound.method}.`);
    const method = outbound.method;
    let sent = false;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof timedOut>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve(timedOut);
      }, outbound.deadlineMs);
    });
    try {
      const pending = request(outbound.url, {
        method,
        headers: outbound.headers,
        body: outbound.body,
        signal: controller.signal,
        dispatcher: tracking(this.pool, () => {
          sent = true;
        }),
      });
      // The losing side of the race must not surface as an unhandled rejection.
      pending.catch(() => undefined);
      let response: Dispatcher.ResponseData | typeof timedOut;
      try {
        response = await Promise.race([pending, deadline]);
      } catch (error) {
        const code = codeOf(error);
        const reached = sent && !(code !== undefined && beforeSending.has(code));
        return controller.signal.aborted
          ? { kind: 'timeout', sent: reached }
          : { kind: 'connection_failed', sent: reached };
      }
      if (response === timedOut) return { kind: 'timeout', sent };
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
        return controller.signal.aborted ? { kind: 'timeout', sent: true } : { kind: 'connection_failed', sent: true };
      }
      const contentType = response.headers['content-type'];
      return {
        kind: 'response',
        status: response.statusCode,
        contentType: typeof contentType === 'string' ? contentType : null,
        body: Buffer.concat(chunks),
      };
    } finally {
      clearTimeout(timer);
    }
  }
}
