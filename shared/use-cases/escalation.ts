// When nobody decides: a held call whose policy names @escalate is escalated once its time has come
// and no decision was made. The escalation is recorded first, by a conditional write that applies
// only while it is unset (however many passes race, one wins), and only the winner tells the
// escalation group. The pass also counts the calls waiting per group, for the approval-load gauge.
// It runs on each reconciler pass in AWS; locally on the runtime's upkeep and on a timer per call.
import { escalatesAt, escalationGroupOf } from '../approvals/escalation.js';
import type { Notifier } from '../approvals/notifier.js';
import { approvalsNeeded } from '../approvals/quorum.js';
import type { Clock } from '../clock.js';
import { errorText } from '../errors.js';
import { approvalGroupOf } from '../executions/approval-load.js';
import type { Execution } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';
import type { Log } from '../log.js';
import type { GatewayMetrics } from '../metrics.js';
import { noticeOf } from './held-call-steps.js';
import { keyOf, openExecutions } from './held-calls.js';

export interface EscalationDeps {
  readonly store: ExecutionStore;
  readonly clock: Clock;
  readonly log: Log;
  readonly notifier: Notifier;
  /** The console page of one held call (the link in the notice). */
  readonly consoleUrl: (executionId: string) => string;
  /** Where the calls waiting per group are published. @default none */
  readonly metrics?: Pick<GatewayMetrics, 'pendingApprovals'> | null;
}

/** Whether the call waits, names an escalation not recorded yet, and is within its approval time. */
const escalationOpen = (execution: Execution, now: number): boolean =>
  execution.status === 'pending_approval' &&
  execution.escalated_at === null &&
  escalationGroupOf(execution) !== null &&
  (execution.expires_at === null || Date.parse(execution.expires_at) > now);

/**
 * Escalates one held call if its time has come: records when (only while unset) and, when this
 * write was the one that recorded it, tells the escalation group. A notice that fails is logged
 * (and counted by the notifier); the escalation stays recorded, and the group may decide anyway.
 * True when this call escalated it.
 */
export const escalateIfDue = async (deps: EscalationDeps, execution: Execution): Promise<boolean> => {
  const now = deps.clock.now();
  const at = escalatesAt(execution);
  if (at === null || at > now || !escalationOpen(execution, now)) return false;
  const recorded = await deps.store.annotate(
    keyOf(execution),
    'pending_approval',
    { escalated_at: new Date(now).toISOString() },
    'escalated_at',
  );
  if (recorded.kind !== 'applied') return false;
  const escalated = recorded.execution;
  const group = escalationGroupOf(escalated) ?? '';
  const approvals = approvalsNeeded(escalated);
  deps.log.info('held call escalated', {
    execution_id: escalated.execution_id,
    escalated_to: group,
    approvals_needed: approvals,
  });
  try {
    await deps.notifier.heldCall({ ...noticeOf(deps, escalated), staff_group: group, escalated_to: group });
  } catch (error) {
    deps.log.warn('the escalation group could not be told; the call stays escalated', {
      execution_id: escalated.execution_id,
      error: errorText(error),
    });
  }
  return true;
};

/** What one pass over the held calls found. */
export interface HeldCallsPass {
  /** Calls this pass escalated. */
  readonly escalated: number;
  /** Calls waiting for a decision, per group (approval-load.ts: the policy's group, or the customer). */
  readonly pending: ReadonlyMap<string, number>;
}

/**
 * One pass over the calls waiting for a decision: each one due escalates, and each one still to
 * escalate is shown to `upcoming` with its instant (the local runtime sets a timer for it). The
 * calls waiting per group are published. A call that cannot be escalated now is logged; the next
 * pass tries again.
 */
export const passOverHeldCalls = async (
  deps: EscalationDeps,
  upcoming: (execution: Execution, at: number) => void = () => undefined,
): Promise<HeldCallsPass> => {
  let escalated = 0;
  const pending = new Map<string, number>();
  for await (const execution of openExecutions(deps.store)) {
    if (execution.status !== 'pending_approval') continue;
    const group = approvalGroupOf(execution);
    if (group !== null) pending.set(group, (pending.get(group) ?? 0) + 1);
    try {
      if (await escalateIfDue(deps, execution)) escalated += 1;
      else if (escalationOpen(execution, deps.clock.now())) upcoming(execution, escalatesAt(execution) ?? 0);
    } catch (error) {
      deps.log.warn('a held call could not be escalated now; the next pass tries again', {
        execution_id: execution.execution_id,
        error: errorText(error),
      });
    }
  }
  for (const [group, count] of pending) deps.metrics?.pendingApprovals(group, count);
  return { escalated, pending };
};
