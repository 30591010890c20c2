// One JSON-RPC message of a gRPC stream, answered: the MCP methods the reference names (initialize,
// notifications/initialized, tools/list, tools/call) through the same answers as HTTP MCP (a tool
// call by shared/edge/tool-call/answer.ts, the tools list by mcp/server.ts), so a call is decided,
// run and answered alike.
import { readMessage, type StrictArguments } from '../../arguments/strict-json.js';
import type { AgentIdentity } from '../../auth/agent.js';
import type { ExecutionOrigin } from '../../executions/execution.js';
import { jsonRpcCodes } from '../../json-rpc-codes.js';
import type { RequestGate } from '../../limits/request-gate.js';
import { isRecord } from '../../objects.js';
import { resultObject } from '../../result.js';
import { gatewayInfo } from '../../version.js';
import { instructions, listToolsFor, type McpServices, negotiatedVersion } from '../mcp/server.js';
import { invalidToolsCursorMessage } from '../mcp/tool-pages.js';
import { answerToolCall, underAgentGate } from '../tool-call/answer.js';
import { idempotencyKeyOf } from '../tool-call/idempotency-key.js';
import { toCallToolResult } from '../tool-call/tool-result.js';

/** What the stream's Connect and metadata said, for every call of the stream. */
export interface StreamContext {
  readonly agent: AgentIdentity;
  /** The one system the stream sees, or null for the whole gateway. */
  readonly systemKey: string | null;
  readonly origin: ExecutionOrigin;
  /** W3C traceparent built from the Connect's trace context (null when it carried none usable). */
  readonly traceparent: string | null;
  /** The agents' rate and concurrency limits (configuration settings.limits), counted per request. */
  readonly gate: RequestGate | null;
}

type JsonRpcId = string | number | null;

const errorAnswer = (id: JsonRpcId, code: number, message: string) => ({
  jsonrpc: '2.0' as const,
  id,
  error: { code, message },
});
const resultAnswer = (id: JsonRpcId, result: unknown) => ({ jsonrpc: '2.0' as const, id, result });

/**
 * Answers one request_body: the JSON-RPC answer to send back, or null for a notification (or a
 * response sent to the gateway), which is answered by nothing.
 */
export const answerMessage = async (
  services: McpServices,
  stream: StreamContext,
  text: string,
): Promise<object | null> => {
  const read = readMessage(text);
  if (read === null) return errorAnswer(null, jsonRpcCodes.parseError, 'Parse error: the message is not valid JSON.');
  const message = read.message;
  if (Array.isArray(message)) {
    return errorAnswer(null, jsonRpcCodes.invalidRequest, 'JSON-RPC batches are not supported: send one message.');
  }
  if (!isRecord(message)) return errorAnswer(null, jsonRpcCodes.invalidRequest, 'Invalid request: not an object.');
  const rawId = message.id;
  const id: JsonRpcId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
  const hasId = 'id' in message;
  if (message.jsonrpc !== '2.0' || (hasId && id === null && rawId !== null)) {
    return errorAnswer(id, jsonRpcCodes.invalidRequest, 'Invalid request: expected a JSON-RPC 2.0 message.');
  }
  if (typeof message.method !== 'string') {
    // A response (to nothing the gateway asked) is dropped; anything else is not a message.
    if (hasId && ('result' in message || 'error' in message)) return null;
    return errorAnswer(id, jsonRpcCodes.invalidRequest, 'Invalid request: the method is missing.');
  }
  // Notifications (notifications/initialized, cancellations) are answered by nothing.
  if (!hasId) return null;
  if (id === null) return errorAnswer(null, jsonRpcCodes.invalidRequest, 'Invalid request: the id is null.');
  const params = message.params === undefined ? {} : message.params;
  if (!isRecord(params)) return errorAnswer(id, jsonRpcCodes.invalidParams, 'Invalid params: expected an object.');
  // Every request counts against the agent's limits, as on HTTP: a refused tools/call is answered
  // with the result object (denied, the limit in its message), anything else with a -32000 error.
  const method = message.method;
  return underAgentGate(
    services,
    { gate: stream.gate },
    stream.agent,
    { bytes: Buffer.byteLength(text, 'utf8') },
    (refusal) => {
      if (refusal === null) return answerRequest(services, stream, id, method, params, read.toolArguments);
      return Promise.resolve(
        method === 'tools/call'
          ? resultAnswer(id, toCallToolResult(resultObject(refusal)))
          : errorAnswer(id, jsonRpcCodes.serverError, refusal.message ?? 'A limit refused this request.'),
      );
    },
  );
};

const answerRequest = async (
  services: McpServices,
  stream: StreamContext,
  id: string | number,
  method: string,
  params: Record<string, unknown>,
  toolArguments: StrictArguments | null,
): Promise<object> => {
  switch (method) {
    case 'initialize':
      return resultAnswer(id, {
        protocolVersion: negotiatedVersion(params.protocolVersion),
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: gatewayInfo.name, title: gatewayInfo.title, version: gatewayInfo.version },
        instructions,
      });
    case 'ping':
      return resultAnswer(id, {});
    case 'tools/list': {
      const listed = await listToolsFor(services, stream.agent, stream.systemKey, params.cursor);
      return listed === null
        ? errorAnswer(id, jsonRpcCodes.invalidParams, invalidToolsCursorMessage)
        : resultAnswer(id, listed);
    }
    case 'tools/call':
      return answerStreamToolCall(services, stream, id, params, toolArguments);
    default:
      return errorAnswer(id, jsonRpcCodes.methodNotFound, `Method not found: ${method.slice(0, 100)}`);
  }
};

const answerStreamToolCall = async (
  services: McpServices,
  stream: StreamContext,
  id: string | number,
  params: Record<string, unknown>,
  toolArguments: StrictArguments | null,
): Promise<object> => {
  const { name, arguments: args = {} } = params;
  if (typeof name !== 'string')
    return errorAnswer(id, jsonRpcCodes.invalidParams, 'Invalid params: name must be a string.');
  if (!isRecord(args)) {
    return errorAnswer(id, jsonRpcCodes.invalidParams, 'Invalid params: arguments must be an object.');
  }
  const answer = await answerToolCall(services, {
    agent: stream.agent,
    name,
    args,
    toolArguments,
    request: {
      traceparent: stream.traceparent,
      origin: stream.origin,
      systemKey: stream.systemKey,
      ...idempotencyKeyOf(params),
    },
    transport: 'grpc',
  });
  return answer.kind === 'result'
    ? resultAnswer(id, toCallToolResult(answer.result, answer.receipt))
    : errorAnswer(id, answer.code, answer.message);
};
