// A tool call answered the same whatever carries it (MCP over HTTP, both of its paths; a gRPC
// stream; the /tool/call-tool channel): each request of an agent passes its rate and concurrency
// gate here and gives its place back here; a call runs the status tool or the catalog call; a fault
// is logged once and answered in the gateway's own words. The transports only read their envelope
// and write the answer back in it (a JSON-RPC result or error, a gRPC frame, a channel frame).
import type { StrictArguments } from '../../arguments/strict-json.js';
import { readParsedArguments } from '../../arguments/strict-json.js';
import type { AgentIdentity } from '../../auth/agent.js';
import { faultText, toolCallFaultMessageOf } from '../../errors.js';
import { jsonRpcCodes } from '../../json-rpc-codes.js';
import { limitsNow } from '../../limits/agent-limits.js';
import type { LimitRefusal, RequestCost, RequestGate } from '../../limits/request-gate.js';
import type { ResultObject } from '../../result.js';
import { type CallRequestContext, type CallToolDeps, callToolAnswer } from '../../use-cases/call-tool.js';
import { executionStatusAnswer } from '../../use-cases/get-execution-status.js';
import { statusToolName } from './status-tool.js';

/** The transports a call arrives by, as the log line names them. */
export type ToolCallTransport = 'mcp' | 'grpc' | 'call-tool';

/** An agent's gate as a transport holds it: null where the platform applies its own limits. */
export interface AgentGate {
  readonly gate: RequestGate | null;
  /** Told when an agent starts being refused (once per run of refusals), for a log line. */
  readonly onLimited?: ((agent: AgentIdentity, refusal: LimitRefusal) => void) | undefined;
}

/**
 * Serves one request of `agent` under its gate: admitted, `serve` runs with no refusal and the
 * place is given back when it is done, however it ends; refused, `serve` runs with the limit's
 * refusal (a tool call answers it as its result object, anything else as the transport's error).
 * Every request counts, tools/list and unreadable ones included, charged its size in bytes.
 */
export const underAgentGate = async <T>(
  deps: Pick<CallToolDeps, 'controlPlane'>,
  use: AgentGate,
  agent: AgentIdentity,
  cost: RequestCost,
  serve: (refusal: LimitRefusal | null) => Promise<T>,
): Promise<T> => {
  if (use.gate === null) return serve(null);
  const admission = use.gate.admit(agent.id, await limitsNow(deps.controlPlane, agent), cost);
  if (admission.kind === 'refused') {
    if (admission.first) use.onLimited?.(agent, admission.refusal);
    return serve(admission.refusal);
  }
  try {
    return await serve(null);
  } finally {
    admission.release();
  }
};

/** One tools/call as its transport read it. */
export interface ToolCall {
  readonly agent: AgentIdentity;
  readonly name: string;
  /** The arguments as parsed. */
  readonly args: Record<string, unknown>;
  /** The arguments as the strict reader read them from the request's own text; null: from `args`. */
  readonly toolArguments: StrictArguments | null;
  /** Trace context, and where a gRPC stream's call came from. */
  readonly request: CallRequestContext;
  readonly transport: ToolCallTransport;
}

/** A call that failed inside the gateway: the JSON-RPC internal error, in the gateway's own words. */
export interface ToolCallFault {
  readonly kind: 'fault';
  readonly code: typeof jsonRpcCodes.internalError;
  readonly message: string;
}

/** A call's result object, and the approval receipt its call was sent with (null when none). */
export type ToolCallAnswer =
  | { readonly kind: 'result'; readonly result: ResultObject; readonly receipt: string | null }
  | ToolCallFault;

/** Whether a call runs a catalog tool (not the status tool): only such a call can be handed over or become a task. */
export const runsCatalogTool = (name: string): boolean => name !== statusToolName;

/**
 * A failure met while answering a call (the store refused a write, a bug): logged here, once, and
 * answered with the one fault text, which says nothing of the fault itself (the store's or a
 * system's words never reach the agent).
 */
export const toolCallFault = (
  deps: Pick<CallToolDeps, 'log'>,
  call: { readonly agent: AgentIdentity; readonly tool: string | null; readonly transport: ToolCallTransport },
  error: unknown,
): ToolCallFault => {
  deps.log.warn('tools/call failed', {
    agent_id: call.agent.id,
    tool: call.tool === null ? null : call.tool.slice(0, 200),
    transport: call.transport,
    error: faultText(error),
  });
  return { kind: 'fault', code: jsonRpcCodes.internalError, message: toolCallFaultMessageOf(error) };
};

/** Answers one admitted tool call: the status tool or the catalog call, its result object or its fault. Never throws. */
export const answerToolCall = async (deps: CallToolDeps, call: ToolCall): Promise<ToolCallAnswer> => {
  try {
    const answer =
      call.name === statusToolName
        ? await executionStatusAnswer(deps, call.agent, call.args)
        : await callToolAnswer(
            deps,
            call.agent,
            call.name,
            call.toolArguments ?? readParsedArguments(call.args),
            call.request,
          );
    return { kind: 'result', ...answer };
  } catch (error) {
    return toolCallFault(deps, { agent: call.agent, tool: call.name, transport: call.transport }, error);
  }
};
