// The MCP endpoint as a web-standard request handler: DNS-rebinding checks and the body cap in
// front, then the SDK's stateless entry (both revisions, JSON responses, no sessions) serving a
// server built for the authenticated agent.
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AgentIdentity } from '../auth/agent.js';
import { buildMcpServer, type McpServices } from './server.js';

/** Largest MCP request body accepted, in bytes. */
export const maxRequestBodyBytes = 256 * 1024;

export interface McpEndpointOptions {
  /** Host header names accepted (port-agnostic); null accepts any (the edge already routed by host). */
  readonly allowedHostnames: readonly string[] | null;
  /** Origin hostnames accepted from browsers; requests without an Origin header always pass. */
  readonly allowedOrigins: readonly string[];
  /** Called with faults the SDK reports out of band (for logging). */
  readonly onError?: (error: Error) => void;
}

export interface McpEndpoint {
  handle(request: Request, agent: AgentIdentity): Promise<Response>;
  close(): Promise<void>;
}

const AgentExtra = z.object({
  id: z.string(),
  groups: z.array(z.string()),
  customerId: z.string().nullable(),
});

export const jsonRpcErrorResponse = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });

export const bodyTooLargeResponse = (): Response =>
  jsonRpcErrorResponse(413, -32600, `The request body is larger than ${maxRequestBodyBytes} bytes.`);

export const createMcpEndpoint = (services: McpServices, options: McpEndpointOptions): McpEndpoint => {
  const sdk = createMcpHandler(
    ({ authInfo }) => buildMcpServer(services, AgentExtra.parse(authInfo?.extra?.agent)),
    {
      legacy: 'stateless',
      responseMode: 'json',
      maxRequestBodySize: maxRequestBodyBytes,
      ...(options.onError === undefined ? {} : { onerror: options.onError }),
    },
  );
  const allowedHostnames = options.allowedHostnames === null ? null : [...options.allowedHostnames];
  const allowedOrigins = [...options.allowedOrigins];

  return {
    async handle(request, agent) {
      const refused =
        (allowedHostnames === null ? undefined : hostHeaderValidationResponse(request, allowedHostnames)) ??
        originValidationResponse(request, allowedOrigins);
      if (refused !== undefined) return refused;
      const declaredLength = Number(request.headers.get('content-length') ?? '0');
      if (declaredLength > maxRequestBodyBytes) return bodyTooLargeResponse();
      return sdk.fetch(request, {
        authInfo: { token: '', clientId: agent.id, scopes: [], extra: { agent: { ...agent, groups: [...agent.groups] } } },
      });
    },
    close: () => sdk.close(),
  };
};
