// What the three sides of a held call share (the state machine's steps, the approvers' decisions
// and recovery): reading the open calls, expiring one, and handing a decision to its approval run.
//
// Every step is a single-item conditional write on the execution, so double clicks, two approvers
// at once, a decision racing the expiry timer, a restarted runtime and a lost signal each end in
// exactly one outcome. A decision is recorded first and then pushed to the approval run; if the
// push is lost, the run (when it registers) or recovery hands it over again.
import type { ApprovalRunOutcome, ApprovalRuns } from '../approvals/approval-runs.js';
import { type Clock, isoAt } from '../clock.js';
import { coded, errorText } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import { type ExecutionKey, type ExecutionStore, heldAfter, type TransitionResult } from '../executions/store.js';
import type { Log } from '../log.js';
import { claimGraceMs, settleAbandonedClaim } from './run-once.js';

export const keyOf = (execution: Pick<Execution, 'execution_id' | 'agent_id'>): ExecutionKey => ({
  execution_id: execution.execution_id,
  agent_id: execution.agent_id,
});

/** What a waiting approval run is told of a call that left pending: run it, or end. */
export const runOutcome = (execution: Execution): ApprovalRunOutcome =>
  execution.status === 'approved' ? 'approved' : 'closed';

/**
 * Every call still open, page by page: from the store's index, or from the records themselves
 * (`records`: a scan, which finds a call whose index entry a crash left behind its record).
 */
export async function* openExecutions(
  store: ExecutionStore,
  source: 'index' | 'records' = 'index',
): AsyncGenerator<Execution> {
  let cursor: string | undefined;
  do {
    const options = { limit: 100, ...(cursor === undefined ? {} : { cursor }) };
    const page = source === 'index' ? await store.listOpen(options) : await store.scanOpen(options);
    yield* page.items;
    cursor = page.next;
  } while (cursor !== undefined);
}

/** Pending becomes expired (nothing ran), by a conditional write: only if it is still pending. */
export const expirePending = (
  deps: { readonly store: ExecutionStore; readonly clock: Clock },
  key: ExecutionKey,
): Promise<TransitionResult> =>
  deps.store.transition(key, {
    from: 'pending_approval',
    to: 'expired',
    at: isoAt(deps.clock),
    patch: coded('approval_expired'),
  });

/** Hands a recorded decision to the waiting approval run; a lost push is repeated by recovery. */
export const pushDecision = async (
  deps: { readonly approvalRuns: ApprovalRuns; readonly log: Log },
  execution: Execution,
): Promise<boolean> => {
  if (execution.task_token === null) return false;
  try {
    return await deps.approvalRuns.signal(execution.task_token, runOutcome(execution));
  } catch (error) {
    deps.log.warn('the decision could not be handed to the approval run; recovery will', {
      execution_id: execution.execution_id,
      error: errorText(error),
    });
    return false;
  }
};

/**
 * After a decision was recorded (by staff or by the customer): the probe is told, the log says who
 * decided how, and the decision is handed to the waiting approval run.
 */
export const decisionRecorded = async (
  deps: {
    readonly approvalRuns: ApprovalRuns;
    readonly log: Log;
    readonly probe?: (step: 'decided', executionId: string) => void;
  },
  decided: Execution,
  message: string,
  by: Record<string, string>,
): Promise<void> => {
  deps.probe?.('decided', decided.execution_id);
  deps.log.info(message, { execution_id: decided.execution_id, outcome: decided.status, ...by });
  await pushDecision(deps, decided);
};

/**
 * A call's overdue state settled on sight: a pending call past its approval time (and a grace for
 * the approval run's own timer) expires; a claim past its deadline is settled by the claim rules.
 */
export const settleOverdue = async (
  deps: { readonly store: ExecutionStore; readonly clock: Clock },
  execution: Execution,
): Promise<Execution> => {
  if (execution.status === 'approved') return settleAbandonedClaim(deps, execution);
  if (execution.status !== 'pending_approval' || execution.expires_at === null) return execution;
  if (deps.clock.now() <= Date.parse(execution.expires_at) + claimGraceMs) return execution;
  const expired = await expirePending(deps, execution);
  return heldAfter(expired, execution);
};
