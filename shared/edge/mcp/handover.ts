// Where URL elicitation meets tools/call: a held call handed to the customer (2026-07-28
// input_required, 2025-11-25 the -32042 error) and the client's retry answered from the call
// already recorded. Everything else about tools/call stays in server.ts.
import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import type { StrictArguments } from '../../arguments/strict-json.js';
import type { AgentIdentity } from '../../auth/agent.js';
import type { ResultObject } from '../../result.js';
import type { Sealer } from '../../sealing.js';
import {
  type HandoverDeps,
  type Resumed,
  resumeByArguments,
  resumeByState,
} from '../../use-cases/customer-handover.js';
import { findOwnCall } from '../../use-cases/tasks.js';
import { executionCallToolResult } from '../tool-call/tool-result.js';
import type { McpRequestContext } from './request-context.js';
import { RequestState } from './request-state.js';
import type { TaskDialect } from './tasks.js';
import {
  customerStepOf,
  declaresUrlElicitation2026,
  inputRequiredFor,
  invalidRequestState,
  urlElicitationRequired,
  userWithdrew,
} from './url-elicitation.js';

export interface HandoverServices extends HandoverDeps {
  readonly sealer: Sealer;
}

/** The request as far as the handover cares: its revision, what the transport learned, the SDK's context. */
export interface HandoverRequest {
  readonly dialect: TaskDialect;
  readonly context: McpRequestContext;
  readonly ctx: ServerContext;
}

const declares = (request: HandoverRequest): boolean =>
  request.dialect === '2026-07-28' ? declaresUrlElicitation2026(request.ctx) : request.context.urlElicitation2025;

/**
 * A retry of a call handed over earlier, answered from the record; null when this request is not
 * one (then the call is made as usual). 2026-07-28: the request carries a requestState (already
 * opened by the SDK's verify hook); one that names no call of this very request is refused.
 * 2025-11-25: the agent's newest matching call held for the customer (customer-handover.ts).
 * Still waiting for the customer: handed over again, unless the user declined or dismissed the link.
 */
export const answerRetry = async (
  services: HandoverServices,
  agent: AgentIdentity,
  request: HandoverRequest,
  name: string,
  args: StrictArguments,
): Promise<CallToolResult | InputRequiredResult | null> => {
  let resumed: Resumed;
  if (request.dialect === '2026-07-28') {
    const minted = request.ctx.mcpReq.requestState();
    if (minted === undefined) return null;
    const state = RequestState.safeParse(minted);
    if (!state.success) throw invalidRequestState();
    resumed = await resumeByState(services, agent, state.data, name, args);
    if (resumed.kind === 'no_such_call') throw invalidRequestState();
  } else {
    if (!request.context.urlElicitation2025) return null;
    resumed = await resumeByArguments(services, agent, name, args);
    if (resumed.kind === 'no_such_call') return null;
  }
  if (resumed.kind === 'customer_step_over') return executionCallToolResult(resumed.execution);
  const step = customerStepOf(resumed.execution);
  if (step === null || userWithdrew(request.ctx.mcpReq.inputResponses)) {
    return executionCallToolResult(resumed.execution);
  }
  if (request.dialect === '2025-11-25') throw urlElicitationRequired(step);
  return inputRequiredFor(services.sealer, step);
};

/**
 * A call just held for the customer, handed over to a client that declared URL elicitation:
 * 2026-07-28 returns the input_required result, 2025-11-25 throws the -32042 error (the call is
 * recorded and held already). Null for every other call and client: the plain result.
 */
export const handOver = async (
  services: HandoverServices,
  agent: AgentIdentity,
  request: HandoverRequest,
  result: ResultObject,
): Promise<InputRequiredResult | null> => {
  if (result.approval_url === null || result.execution_id === null || !declares(request)) return null;
  const execution = await findOwnCall(services, agent, result.execution_id);
  const step = execution === undefined ? null : customerStepOf(execution);
  if (step === null) return null;
  if (request.dialect === '2025-11-25') throw urlElicitationRequired(step);
  return inputRequiredFor(services.sealer, step);
};
