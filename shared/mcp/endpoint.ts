// The MCP endpoint as a web-standard request handler: DNS-rebinding checks and the body cap in
// front, then the SDK serving a server built for the authenticated agent, statelessly and with
// JSON responses in both revisions: 2026-07-28 through the SDK's per-request entry, 2025-11-25
// through its streamable HTTP transport in JSON mode, one transport per request.
import {
  type AuthInfo,
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  originValidationResponse,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { readToolCallArguments } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import { McpRequestContext, requestContextOf } from './request-context.js';
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

export const jsonRpcErrorResponse = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });

export const bodyTooLargeResponse = (): Response =>
  jsonRpcErrorResponse(413, -32600, `The request body is larger than ${maxRequestBodyBytes} bytes.`);

/** 2025-era requests: a fresh server and a JSON-mode transport for this one exchange. */
const serveLegacy = async (services: McpServices, request: Request, authInfo: AuthInfo): Promise<Response> => {
  if (request.method.toUpperCase() !== 'POST') return jsonRpcErrorResponse(405, -32000, 'Method not allowed.');
  const server = buildMcpServer(services, requestContextOf(authInfo));
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: maxRequestBodyBytes,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { authInfo });
  } finally {
    await transport.close();
    await server.close();
  }
};

export const createMcpEndpoint = (services: McpServices, options: McpEndpointOptions): McpEndpoint => {
  const modern = createMcpHandler(({ authInfo }) => buildMcpServer(services, requestContextOf(authInfo)), {
    legacy: 'reject',
    responseMode: 'json',
    maxRequestBodySize: maxRequestBodyBytes,
    ...(options.onError === undefined ? {} : { onerror: options.onError }),
  });
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
      // A tool call's arguments are read from the request's own text, where duplicate keys,
      // huge integers and lone surrogates are still visible.
      let toolArguments = null;
      if (request.method === 'POST') toolArguments = readToolCallArguments(await request.clone().text());
      const authInfo = new McpRequestContext(agent, toolArguments, request.headers.get('traceparent')).toAuthInfo();
      if (await isLegacyRequest(request, undefined, { maxRequestBodySize: maxRequestBodyBytes })) {
        return serveLegacy(services, request, authInfo);
      }
      return modern.fetch(request, { authInfo });
    },
    close: () => modern.close(),
  };
};
