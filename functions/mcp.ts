// POST /mcp: the agents' MCP endpoint, and POST /tool/call-tool, the same calls as one framed
// answer. The request is authenticated by the edge (the agent authorizer in AWS, the local front
// locally); this handler identifies the agent the caller is under the configuration and hands the
// request on, or answers 401 with the challenge when the edge passed no caller.
import type { Logger } from '@aws-lambda-powertools/logger';
import { unauthorizedResponse } from '../shared/edge/mcp/auth-challenge.js';
import { createMcpEndpoint, type McpEndpoint, readsJsonBody } from '../shared/edge/mcp/endpoint.js';
import { bodyTooLargeResponse, maxRequestBodyBytes } from '../shared/edge/mcp/http-refusals.js';
import { isPlainAnswer } from '../shared/edge/mcp/plain-tool-call.js';
import { requestHeadOf } from '../shared/edge/mcp/request-head.js';
import type { McpServices } from '../shared/edge/mcp/server.js';
import { unseenWrites } from '../shared/executions/execution-writes.js';
import { jsonRpcCodes } from '../shared/json-rpc-codes.js';
import { RequestGate } from '../shared/limits/request-gate.js';
import { identifyCaller } from '../shared/use-cases/identify-caller.js';
import { agentServicesFor, serviceLogger } from './commons/aws.js';
import { channelPostPath, createChannelPost } from './commons/channel-post.js';
import { processApprovalEnvironment } from './commons/environment.js';
import {
  authorizedCallerOf,
  eventBody,
  eventBodyExceeds,
  eventBodyText,
  eventRequestHead,
  fromPlainAnswer,
  fromWebResponse,
  requestOrigin,
  toWebRequest,
} from './commons/http-event.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { functionMetrics, type InvocationMetrics, invocationMetrics } from './commons/metrics.js';
import { type HttpHandler, type HttpResult, withGatewayMiddleware } from './commons/middleware.js';
import { timeLeftMs } from './commons/time-left.js';

export interface McpFunctionDeps {
  readonly services: McpServices;
  readonly logger: Logger;
  readonly allowedHostnames: readonly string[] | null;
  readonly allowedOrigins: readonly string[];
  /** Public base URL; derived from the request when null. */
  readonly publicUrl: string | null;
  /** The per-agent gate, when another front in the process shares it. @default a gate of this function's own */
  readonly requestGate?: RequestGate;
  /** Flushed after every request. @default none */
  readonly metrics?: InvocationMetrics | null;
  /** Whether a plain tools/call is answered without the SDK's server (McpEndpointOptions). @default true */
  readonly plainToolCalls?: boolean;
}

const renderJsonRpcError = (statusCode: number, message: string): HttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: jsonRpcCodes.internalError, message } }),
});

export const createMcpFunction = (deps: McpFunctionDeps) => {
  // One gate per process for /mcp and /tool/call-tool: exact locally, per instance in Lambda (docs/adr/0015-per-agent-limits.md).
  const requestGate = deps.requestGate ?? new RequestGate(deps.services.clock);
  const endpoint: McpEndpoint = createMcpEndpoint(deps.services, {
    allowedHostnames: deps.allowedHostnames,
    allowedOrigins: deps.allowedOrigins,
    requestGate,
    onLimited: (agent, refusal) =>
      deps.logger.warn('agent refused by its limit', {
        agent_id: agent.id,
        code: refusal.code,
        limit: refusal.message,
      }),
    onError: (error) => deps.logger.warn('MCP request refused', { error: error.message }),
    ...(deps.plainToolCalls === undefined ? {} : { plainToolCalls: deps.plainToolCalls }),
  });
  const channelPost = createChannelPost({
    services: deps.services,
    gate: requestGate,
    allowedHostnames: deps.allowedHostnames,
    allowedOrigins: deps.allowedOrigins,
  });
  const handle: HttpHandler = async (event, _context, { signal }) => {
    if (event.rawPath === channelPostPath) return channelPost(event);
    if (eventBodyExceeds(event, maxRequestBodyBytes)) return fromWebResponse(bodyTooLargeResponse());
    const agent = await identifyCaller(deps.services, authorizedCallerOf(event));
    if (agent === null) {
      const tokenPresented = event.headers.authorization !== undefined;
      return fromWebResponse(unauthorizedResponse(deps.publicUrl ?? requestOrigin(event), tokenPresented));
    }
    deps.logger.appendKeys({ agent_id: agent.id });
    // A POST of JSON goes over as its text, read from the event (nothing reads it twice), and a web
    // Request is built only if the SDK serves it: a plain tools/call is answered without one.
    const answer = readsJsonBody(event.requestContext.http.method, event.headers['content-type'])
      ? await endpoint.serve(eventRequestHead(event, signal), agent, eventBodyText(event))
      : await endpoint.serve(requestHeadOf(toWebRequest(event, eventBody(event), signal)), agent);
    return isPlainAnswer(answer) ? fromPlainAnswer(answer) : fromWebResponse(answer);
  };
  return withGatewayMiddleware(handle, {
    logger: deps.logger,
    render: renderJsonRpcError,
    metrics: deps.metrics ?? null,
  });
};

/** The Lambda entry point: composed from the environment on first use. */
export const handler = lazyHandler(() => {
  const environment = processApprovalEnvironment();
  const logger = serviceLogger('mcp');
  const metrics = functionMetrics();
  // Each call's deadline is cut to what the invocation has left (API Gateway answers within 30 s).
  // Decisions and outcomes are written by other functions, and a wait would be billed: tasks/result
  // answers from its one read (docs/adr/0090-waiting-for-a-decision-costs-nothing.md).
  const services = { ...agentServicesFor(environment, logger, metrics), timeLeftMs, executionWrites: unseenWrites };
  return createMcpFunction({
    services,
    metrics: invocationMetrics(metrics, services),
    logger,
    allowedHostnames: environment.ALLOWED_HOSTS.length > 0 ? environment.ALLOWED_HOSTS : null,
    allowedOrigins: environment.ALLOWED_ORIGINS,
    publicUrl: environment.PUBLIC_URL ?? null,
  });
});
