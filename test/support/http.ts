// Raw HTTP for tests that need control fetch does not give (Host headers, huge bodies).
import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  json(): unknown;
}

export const rawRequest = (
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'POST',
        headers: options.headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });

/** Headers of a well-formed MCP POST. */
export const mcpHeaders = (token: string | null, extra: Record<string, string> = {}): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...(token === null ? {} : { authorization: `Bearer ${token}` }),
  ...extra,
});

/** A 2026-07-28 request body with its per-request envelope, and the headers that revision requires. */
export const modernRequest = (
  method: string,
  params: Record<string, unknown> = {},
  id: number | string = 1,
): { body: string; headers: Record<string, string> } => ({
  body: JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        // A call's own _meta members (an idempotency key) beside the revision's.
        ...(typeof params._meta === 'object' && params._meta !== null ? params._meta : {}),
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  }),
  headers: {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
  },
});

/**
 * Sends `head` (request line and headers, without the blank line) and `body` as raw bytes over a
 * new connection, and answers the status and the response as text once the server closes it.
 */
export const rawExchange = (
  port: number,
  head: string,
  body = '',
): Promise<{ status: number; headers: string; body: string }> =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headers = '', ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(`${head}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
