// One JSON-RPC message of a gRPC stream, answered: the MCP methods the reference names (initialize,
// notifications/initialized, tools/list, tools/call) through the same use-cases and result builders
// as HTTP MCP (shared/edge/mcp/server.ts, tool-result.ts), so a call is decided, run and answered alike.
import { readMessage, readParsedArguments, type StrictArguments } from '../../arguments/strict-json.js';
import type { AgentIdentity } from '../../auth/agent.js';
import { faultText, toolCallFaultMessageOf } from '../../errors.js';
import type { ExecutionOrigin } from '../../executions/execution.js';
import { jsonRpcCodes } from '../../json-rpc-codes.js';
import { limitsNow } from '../../limits/agent-limits.js';
import type { RequestGate } from '../../limits/request-gate.js';
import { isRecord } from '../../objects.js';
import { resultObject } from '../../result.js';
import { callTool } from '../../use-cases/call-tool.js';
import { getExecutionStatus } from '../../use-cases/get-execution-status.js';
import { gatewayInfo } from '../../version.js';
import { instructions, listToolsFor, type McpServices, negotiatedVersion } from '../mcp/server.js';
import { statusToolName } from '../mcp/status-tool.js';
import { invalidToolsCursorMessage } from '../mcp/tool-pages.js';
import { toCallToolResult } from '../mcp/tool-result.js';

/** JSON-RPC 2.0 error codes used on the stream. */

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
  const limits = await limitsNow(services.controlPlane, stream.agent);
  const admission = stream.gate?.admit(stream.agent.id, limits, { bytes: Buffer.byteLength(text, 'utf8') }) ?? null;
  if (admission?.kind === 'refused') {
    return message.method === 'tools/call'
      ? resultAnswer(id, toCallToolResult(resultObject(admission.refusal)))
      : errorAnswer(id, jsonRpcCodes.serverError, admission.refusal.message ?? 'A limit refused this request.');
  }
  try {
    return await answerRequest(services, stream, id, message.method, params, read.toolArguments);
  } finally {
    if (admission?.kind === 'admitted') admission.release();
  }
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
      return answerToolCall(services, stream, id, params, toolArguments);
    default:
      return errorAnswer(id, jsonRpcCodes.methodNotFound, `Method not found: ${method.slice(0, 100)}`);
  }
};

const answerToolCall = async (
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
  try {
    if (name === statusToolName) {
      return resultAnswer(id, toCallToolResult(await getExecutionStatus(services, stream.agent, args)));
    }
    const result = await callTool(services, stream.agent, name, toolArguments ?? readParsedArguments(args), {
      traceparent: stream.traceparent,
      origin: stream.origin,
      systemKey: stream.systemKey,
    });
    return resultAnswer(id, toCallToolResult(result));
  } catch (error) {
    // As on HTTP: the fault goes to the log, the caller reads the gateway's own words.
    services.log.warn('tools/call failed', {
      agent_id: stream.agent.id,
      tool: name.slice(0, 200),
      transport: 'grpc',
      error: faultText(error),
    });
    return errorAnswer(id, jsonRpcCodes.internalError, toolCallFaultMessageOf(error));
  }
};
