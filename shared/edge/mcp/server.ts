// The gateway's MCP server for one request and one agent: protocol mechanics come from the
// official SDK (both revisions, discover, caching fields); the gateway answers tools/list and
// tools/call from its use-cases, and held calls as MCP tasks (task-methods.ts) to clients that ask,
// or handed to the customer by URL elicitation (handover.ts) to clients that declare it.
import {
  type CallToolResult,
  type InputRequiredResult,
  type JSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  type ListToolsResult,
  ProtocolError,
  ProtocolErrorCode,
  type Result,
  Server,
  type ServerContext,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from '@modelcontextprotocol/server';
import { readParsedArguments } from '../../arguments/strict-json.js';
import type { CatalogTool } from '../../catalog/tool.js';
import { resultObject, resultObjectJsonSchema } from '../../result.js';
import { type CallToolDeps, visibleTools } from '../../use-cases/call-tool.js';
import type { WaitingDeps } from '../../use-cases/tasks.js';
import { gatewayInfo } from '../../version.js';
import {
  answerToolCall,
  runsCatalogTool,
  type ToolCallAnswer,
  type ToolCallFault,
  toolCallFault,
} from '../tool-call/answer.js';
import { idempotencyKeyOf } from '../tool-call/idempotency-key.js';
import { statusTool } from '../tool-call/status-tool.js';
import { toCallToolResult } from '../tool-call/tool-result.js';
import { answerRetry, handOver } from './handover.js';
import type { McpRequestContext } from './request-context.js';
import { openRequestState } from './request-state.js';
import {
  createdTask,
  registerTaskMethods,
  type TaskAnswers,
  taskAnswerFor,
  tasksCapabilities,
} from './task-methods.js';
import type { TaskDialect } from './tasks.js';
import { invalidToolsCursorMessage, toolsPage } from './tool-pages.js';

/** The use-cases' services, and where tasks/result may wait on a call's writes (absent: nowhere). */
export type McpServices = CallToolDeps & Pick<WaitingDeps, 'executionWrites'>;

export { toolCallFaultMessage } from '../../errors.js';

/**
 * A catalog tool as MCP lists it; every tool answers the result object. A catalog call may be held
 * for a person, so it may run as a task (2025-11-25 `execution.taskSupport`; the 2026-07-28 codec
 * drops the field, the extension being negotiated per request instead).
 */
const toMcpTool = (tool: CatalogTool): Tool => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: { ...tool.inputSchema, type: 'object' },
  outputSchema: resultObjectJsonSchema,
  annotations: { ...tool.annotations },
  execution: { taskSupport: 'optional' },
});

/**
 * The tools an agent is offered, a page at a time (tool-pages.ts): the status tool, then the
 * catalog tools it may see (of one system only, when a gRPC stream's server_id names one); null
 * for a cursor the gateway did not write. One home for HTTP MCP (both revisions) and gRPC.
 */
export const listToolsFor = async (
  services: McpServices,
  agent: McpRequestContext['agent'],
  systemKey: string | null = null,
  cursor: unknown = undefined,
): Promise<ListToolsResult | null> => {
  const visible = (await visibleTools(services.controlPlane, agent)).filter(
    (tool) => systemKey === null || tool.systemKey === systemKey,
  );
  const page = toolsPage(visible, cursor);
  if (page === null) return null;
  return {
    tools: [...(page.first ? [statusTool] : []), ...page.tools.map(toMcpTool)],
    ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
  };
};

/** The MCP revision answered to an initialize asking for `requested`: it, when supported, else the latest. */
export const negotiatedVersion = (requested: unknown): string =>
  typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : LATEST_PROTOCOL_VERSION;

/** How long a client may reuse a tools/list answer; short, because configuration can change. */
const toolsListTtlMs = 30_000;

export const instructions =
  'Every tool call goes through the organization policy before anything reaches its systems. ' +
  'A call answers one result object: succeeded, failed, unknown, denied, or pending_approval when a person must decide. ' +
  'Follow a pending call with get_execution_status, gently (every 30-60 s at most); never repeat the call while it waits.';

/** A tools/call's arguments: as the strict reader read them from the request's text, else as parsed. */
const toolArgumentsOf = (context: McpRequestContext, args: Record<string, unknown>) =>
  context.toolArguments ?? readParsedArguments(args);

/**
 * The answer to a tools/call without a handover or a task: a call refused by a limit (answered
 * without running, and not recorded: a flood must not cost store writes), else the tool call as
 * every transport answers it (answer.ts). One home for the SDK's handler and the plain path
 * (plain-tool-call.ts).
 */
export const toolCallAnswer = (
  services: McpServices,
  context: McpRequestContext,
  name: string,
  args: Record<string, unknown>,
  params: unknown,
): Promise<ToolCallAnswer> => {
  if (context.refusal !== null) {
    return Promise.resolve({ kind: 'result', result: resultObject(context.refusal), receipt: null });
  }
  return answerToolCall(services, {
    agent: context.agent,
    name,
    args,
    toolArguments: context.toolArguments,
    request: { traceparent: context.traceparent, ...idempotencyKeyOf(params) },
    transport: 'mcp',
  });
};

/** A fault as the SDK answers it: the JSON-RPC internal error, in the gateway's own words. */
const protocolErrorOf = (fault: ToolCallFault): ProtocolError => new ProtocolError(fault.code, fault.message);

/** The server's identity, as initialize and every 2026-07-28 result's _meta carry it. */
export const serverIdentity = { name: gatewayInfo.name, title: gatewayInfo.title, version: gatewayInfo.version };

/**
 * The SDK's Server, with one seam: a tools/call answered by a task (CreateTaskResult) bypasses
 * the SDK's CallToolResult check, which knows no task shape (the SDK has no server-side tasks).
 * The handler leaves the task answer under the request's id; everything else is the SDK's.
 */
class GatewayServer extends Server {
  readonly taskAnswers: TaskAnswers = new Map();

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return wrapped;
    return async (request, ctx) => {
      const answer = await wrapped(request, ctx);
      return taskAnswerFor(this.taskAnswers, request.id) ?? answer;
    };
  }
}

export const buildMcpServer = (
  services: McpServices,
  context: McpRequestContext,
  /** The revision this request is served in: it decides the tasks dialect. */
  dialect: TaskDialect,
): Server => {
  const { agent } = context;
  const server = new GatewayServer(
    { ...serverIdentity },
    {
      capabilities: { tools: { listChanged: false }, ...tasksCapabilities },
      instructions,
      // The list depends on who asks, so only this caller may reuse it.
      cacheHints: {
        'tools/list': { ttlMs: toolsListTtlMs, cacheScope: 'private' },
        'server/discover': { ttlMs: 300_000, cacheScope: 'private' },
      },
      // A requestState opens only for this agent and before its expiry; anything else is the
      // SDK's one -32602 answer, the reason going to the log (url-elicitation.ts).
      requestState: {
        verify: (state) => openRequestState(services.sealer, agent.id, state, services.clock.now()),
      },
    },
  );

  server.setRequestHandler('tools/list', async (request): Promise<ListToolsResult> => {
    const listed = await listToolsFor(services, agent, null, request.params?.cursor);
    if (listed === null) throw new ProtocolError(ProtocolErrorCode.InvalidParams, invalidToolsCursorMessage);
    return listed;
  });

  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const { name, arguments: args = {} } = request.params;
    try {
      // A catalog call (not refused, not the status tool) may be a retry of one handed to the
      // customer, or be handed over itself; a task-augmented request (2025-11-25) asked for a task
      // and gets one, never a handover.
      const catalogCall = context.refusal === null && runsCatalogTool(name);
      const handover = catalogCall && request.params.task === undefined ? { dialect, context, ctx } : null;
      const retried =
        handover === null ? null : await answerRetry(services, agent, handover, name, toolArgumentsOf(context, args));
      if (retried !== null) return retried;
      const answer = await toolCallAnswer(services, context, name, args, request.params);
      if (answer.kind === 'fault') throw protocolErrorOf(answer);
      const { result } = answer;
      if (!catalogCall) return toCallToolResult(result, answer.receipt);
      const handed = handover === null ? null : await handOver(services, agent, handover, result);
      if (handed !== null) return handed;
      const task = await createdTask(
        services,
        agent,
        dialect,
        { asked: request.params.task !== undefined, ctx },
        result,
      );
      if (task !== null) server.taskAnswers.set(ctx.mcpReq.id, task);
      return toCallToolResult(result);
    } catch (error) {
      // A deliberate protocol error (the handover's -32042, a refused requestState, a fault already
      // logged) goes as it is; any other failure of the handover or the task is a fault.
      if (error instanceof ProtocolError) throw error;
      throw protocolErrorOf(toolCallFault(services, { agent, tool: name, transport: 'mcp' }, error));
    }
  });

  registerTaskMethods(server, services, agent, dialect);

  return server;
};
