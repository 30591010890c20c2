// The official MCP SDK's stateless server wrapping the same system call, with no store: one
// McpServer per request (createMcpHandler, the SDK's per-request entry for 2026-07-28), one tool
// that validates its input with zod and POSTs it to the demo ERP. Node's HTTP is bridged to the
// handler's web-standard face the way the SDK's Node adapter does (read the body, build a Request,
// write the Response back).
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { Agent, request } from 'undici';
import * as z from 'zod';
import { type Listening, listen } from '../infra/local/net.js';

export interface SdkServer extends Listening<Server> {
  readonly url: string;
}

const toWebRequest = async (incoming: IncomingMessage, origin: string): Promise<Request> => {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const method = incoming.method ?? 'GET';
  return new Request(new URL(incoming.url ?? '/', origin), {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
  });
};

const writeWebResponse = async (response: ServerResponse, web: Response): Promise<void> => {
  const body = Buffer.from(await web.arrayBuffer());
  const headers: Record<string, string> = {};
  web.headers.forEach((value, name) => {
    headers[name] = value;
  });
  response.writeHead(web.status, headers);
  response.end(body);
};

const PurchaseOrder = z.object({
  vendor_id: z.string(),
  amount: z.string(),
  currency: z.string(),
  description: z.string().optional(),
});

export const startSdkServer = async (options: { erpUrl: string; erpApiKey: string }): Promise<SdkServer> => {
  const dispatcher = new Agent();
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-sdk-server', version: '1.0.0' });
    server.registerTool(
      'erp.purchase_orders.create',
      { description: 'Create a purchase order', inputSchema: PurchaseOrder },
      async (args) => {
        const answer = await request(`${options.erpUrl}/purchase-orders`, {
          method: 'POST',
          dispatcher,
          headers: {
            accept: 'application/json',
            'x-request-id': randomUUID(),
            traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`,
            'x-api-key': options.erpApiKey,
            'content-type': 'application/json',
          },
          body: JSON.stringify(args),
        });
        const text = await answer.body.text();
        const outcome = {
          status: answer.statusCode < 300 ? 'succeeded' : 'failed',
          result: JSON.parse(text) as unknown,
        };
        return { content: [{ type: 'text', text: JSON.stringify(outcome) }], structuredContent: outcome };
      },
    );
    return server;
  });
  let origin = 'http://127.0.0.1';
  const server = createServer((incoming, response) => {
    toWebRequest(incoming, origin)
      .then((web) => handler.fetch(web))
      .then((web) => writeWebResponse(response, web))
      .catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
        else response.destroy();
      });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  origin = `http://127.0.0.1:${listening.port}`;
  return {
    ...listening,
    url: origin,
    close: async () => {
      await listening.close();
      await handler.close();
      await dispatcher.close();
    },
  };
};
