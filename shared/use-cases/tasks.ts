// An agent's own calls seen as MCP tasks: read one, list them, withdraw one still waiting for a
// decision. Ownership is the store's key (execution id and agent), so another agent's id and an
// id that does not exist take the same path and get the same answer.
import type { ApprovalRuns } from '../approvals/approval-runs.js';
import type { AgentIdentity } from '../auth/agent.js';
import { type Clock, isoAt } from '../clock.js';
import { coded } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import { type ExecutionWrites, unseenWrites, type WriteWait } from '../executions/execution-writes.js';
import type { ExecutionPage, ExecutionStore } from '../executions/store.js';
import { isUuid } from '../ids.js';
import type { Log } from '../log.js';
import { pushDecision, settleOverdue } from './held-calls.js';

export interface OwnCallDeps {
  readonly store: ExecutionStore;
  readonly clock: Clock;
}

export interface WithdrawDeps extends OwnCallDeps {
  readonly approvalRuns: ApprovalRuns;
  readonly log: Log;
}

/** An execution id as the agent may write it (any case, spaces around): as the store keys it. */
const ownCallId = (executionId: string): string => executionId.trim().toLowerCase();

/** One of the agent's calls by its id (overdue states settled on sight); undefined when not its own. */
export const findOwnCall = async (
  deps: OwnCallDeps,
  agent: AgentIdentity,
  executionId: string,
): Promise<Execution | undefined> => {
  const id = ownCallId(executionId);
  if (!isUuid(id)) return undefined;
  const execution = await deps.store.getOwned({ execution_id: id, agent_id: agent.id });
  return execution === undefined ? undefined : settleOverdue(deps, execution);
};

export interface WaitingDeps extends OwnCallDeps {
  /** Where a call's writes can be waited on (the local runtime). @default nowhere: nothing waits */
  readonly executionWrites?: ExecutionWrites;
}

/**
 * One of the agent's calls once `isFinal` accepts it, or as it is when the wait ends: one read,
 * and where a write can be waited on (the local runtime: ExecutionWrites) one more once a write
 * made it final, the wait's limit passed or its signal ended it. Never more than two reads however
 * long it waits, and in AWS (nothing to wait on, and waiting is billed) the first read answers.
 */
export const ownCallOnceFinal = async (
  deps: WaitingDeps,
  agent: AgentIdentity,
  executionId: string,
  isFinal: (execution: Execution) => boolean,
  wait: WriteWait,
): Promise<Execution | undefined> => {
  const read = new AbortController();
  // Listening before the first read: a write landing between that read and the wait is not missed.
  const written = (deps.executionWrites ?? unseenWrites).awaitWrite(ownCallId(executionId), isFinal, {
    signal: AbortSignal.any([wait.signal, read.signal]),
    limitMs: wait.limitMs,
  });
  try {
    const execution = await findOwnCall(deps, agent, executionId);
    if (execution === undefined || isFinal(execution) || !(await written)) return execution;
    return await findOwnCall(deps, agent, executionId);
  } finally {
    read.abort();
  }
};

/** Calls listed per page of tasks/list. */
const ownCallsPageSize = 50;

/**
 * The agent's calls, newest first, a page at a time; `invalid_cursor` when the cursor is not one
 * this listing gave out (the store refuses it).
 */
export const listOwnCalls = async (
  deps: OwnCallDeps,
  agent: AgentIdentity,
  cursor: string | undefined,
): Promise<{ readonly kind: 'page'; readonly page: ExecutionPage } | { readonly kind: 'invalid_cursor' }> => {
  if (cursor === undefined)
    return { kind: 'page', page: await deps.store.listByAgent(agent.id, { limit: ownCallsPageSize }) };
  try {
    return { kind: 'page', page: await deps.store.listByAgent(agent.id, { limit: ownCallsPageSize, cursor }) };
  } catch {
    // Only a given cursor can make the listing fail this way; without one the fault propagates.
    return { kind: 'invalid_cursor' };
  }
};

export type WithdrawResult =
  /** It waited for a decision and is now rejected / withdrawn; nothing ran. */
  | { readonly kind: 'withdrawn'; readonly execution: Execution }
  /** It was decided, expired or ran already (or a decision won the race): it stays as it is. */
  | { readonly kind: 'too_late'; readonly execution: Execution }
  | { readonly kind: 'not_found' };

/**
 * Withdraws a call still waiting for a decision: pending_approval → rejected with code
 * `withdrawn`, by a conditional write (a decision or the expiry racing it wins or loses whole),
 * then tells the waiting approval run to end ('closed'). Nothing is sent to the system.
 */
export const withdrawCall = async (
  deps: WithdrawDeps,
  agent: AgentIdentity,
  executionId: string,
): Promise<WithdrawResult> => {
  const execution = await findOwnCall(deps, agent, executionId);
  if (execution === undefined) return { kind: 'not_found' };
  if (execution.status !== 'pending_approval') return { kind: 'too_late', execution };
  const now = isoAt(deps.clock);
  const withdrawn = await deps.store.transition(execution, {
    from: 'pending_approval',
    to: 'rejected',
    at: now,
    patch: { ...coded('withdrawn'), decided_at: now },
  });
  if (withdrawn.kind === 'conflict') return { kind: 'too_late', execution: withdrawn.current ?? execution };
  deps.log.info('held call withdrawn by its agent', { execution_id: execution.execution_id, agent_id: agent.id });
  await pushDecision(deps, withdrawn.execution);
  return { kind: 'withdrawn', execution: withdrawn.execution };
};
