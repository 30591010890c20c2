// Calls systems with node's own HTTP client over kept-alive sockets: no redirects followed (node
// never follows them), one total deadline from the first attempt to connect to the last byte read,
// and the answer read only up to the size cap (the connection is destroyed there, so it is never
// taken again). Whether the request reached a socket is tracked, so a call that never left the
// gateway is never reported as possibly sent.
import type { ClientRequest } from 'node:http';
import { errorText } from '../errors.js';
import type { OutboundRequest, OutboundResult, SystemClient } from '../invoke/system-client.js';
import {
  type Agents,
  beforeSending,
  codeOf,
  endRequest,
  keepAliveAgents,
  openRequest,
  whenSent,
} from './socket-tracking.js';

const httpMethods: readonly string[] = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'];

export class HttpSystemClient implements SystemClient {
  constructor(private readonly agents: Agents = keepAliveAgents()) {}

  send(outbound: OutboundRequest): Promise<OutboundResult> {
    if (!httpMethods.includes(outbound.method)) {
      return Promise.reject(new Error(`Unsupported HTTP method ${outbound.method}.`));
    }
    return new Promise((resolve) => {
      let sent = false;
      let settled = false;
      let request: ClientRequest | undefined;
      const finish = (result: OutboundResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const timer = setTimeout(() => {
        finish({ kind: 'timeout', sent });
        request?.destroy();
      }, outbound.deadlineMs);
      try {
        request = openRequest(
          new URL(outbound.url),
          { method: outbound.method, headers: outbound.headers },
          this.agents,
        );
      } catch (error) {
        // Refused before anything was written: a URL, scheme or header value node cannot send.
        finish({ kind: 'connection_failed', sent: false, cause: errorText(error) });
        return;
      }
      const sending = request;
      whenSent(sending, () => {
        sent = true;
      });
      sending.on('error', (error) => {
        const code = codeOf(error);
        const before = code !== undefined && beforeSending.has(code);
        finish({ kind: 'connection_failed', sent: sent && !before, cause: errorText(error) });
      });
      sending.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > outbound.maxResponseBytes) {
            finish({ kind: 'too_large', status });
            sending.destroy();
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const contentType = response.headers['content-type'];
          finish({
            kind: 'response',
            status,
            contentType: typeof contentType === 'string' ? contentType : null,
            body: Buffer.concat(chunks),
          });
        });
        // Cut off in the middle of the body (a reset, a closed socket): it was sent.
        response.on('error', () => finish({ kind: 'connection_failed', sent: true }));
        response.on('close', () => finish({ kind: 'connection_failed', sent: true }));
      });
      endRequest(sending, outbound.body ?? undefined);
    });
  }
}
