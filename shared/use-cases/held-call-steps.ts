// The steps the approval state machine runs for a held call (functions/held-call-steps.ts in AWS, the
// local Step Functions engine here): register its task token and notify the approvers, run the
// approved call once, or expire a call nobody decided.

import type { ApprovalRuns } from '../approvals/approval-runs.js';
import type { HeldCallNotice, Notifier } from '../approvals/notifier.js';
import { summarize } from '../approvals/notifier.js';
import { approvalsNeeded } from '../approvals/quorum.js';
import { isoAt } from '../clock.js';
import type { Execution } from '../executions/execution.js';
import type { ExecutionKey } from '../executions/store.js';
import { mayStillBeRecorded } from '../ids.js';
import { hiddenSecretsOf } from '../secret-pointers.js';
import { expirePending, runOutcome } from './held-calls.js';
import { type ApprovedRunDeps, runApproved } from './run-once.js';

export interface HeldCallStepsDeps extends ApprovedRunDeps {
  readonly approvalRuns: ApprovalRuns;
  readonly notifier: Notifier;
  /** The console page of one held call (the link in notifications). */
  readonly consoleUrl: (executionId: string) => string;
  /**
   * Told of a held call's record once its approvers were first told of it (the local runtime sets
   * the call's escalation timer from it, with no second read of the record); absent: nothing.
   */
  readonly noticed?: (execution: Execution) => void;
}

/**
 * A held call's record is written while its approval run starts (call-tool.ts), so the run's first
 * step may come before the record: while the record may still land (ids.ts), the step fails with
 * this error, which the state machine retries (approval.asl.json), rather than end the run.
 */
export class RecordNotYetWritten extends Error {
  constructor(executionId: string) {
    super(`The execution ${executionId} is not recorded yet.`);
    this.name = 'RecordNotYetWritten';
  }
}

export interface RegisterRequest extends ExecutionKey {
  readonly task_token: string;
}

/**
 * The approval run waits on a task token: record it (while the call is still pending) and notify
 * the approvers once. When the call was decided before the run listened (a decision during a
 * restart, or a lost signal), the decision is handed over at once. A run whose record is not written
 * yet is retried (RecordNotYetWritten); one whose record never came is closed.
 */
export const registerApproval = async (
  deps: HeldCallStepsDeps,
  request: RegisterRequest,
): Promise<{ status: Execution['status'] | 'missing' }> => {
  const registered = await deps.store.annotate(request, 'pending_approval', { task_token: request.task_token });
  if (registered.kind === 'applied') {
    await notifyOnce(deps, registered.execution);
    return { status: 'pending_approval' };
  }
  const current = registered.current;
  if (current === undefined) {
    if (mayStillBeRecorded(request.execution_id, deps.clock.now())) throw new RecordNotYetWritten(request.execution_id);
    // A record that never came (its write failed): the run ends, and nothing else is touched.
    deps.log.warn('an approval run registered for an execution that does not exist', {
      execution_id: request.execution_id,
    });
    await deps.approvalRuns.signal(request.task_token, 'closed');
    return { status: 'missing' };
  }
  await deps.approvalRuns.signal(request.task_token, runOutcome(current));
  return { status: current.status };
};

export const noticeOf = (deps: Pick<HeldCallStepsDeps, 'consoleUrl'>, execution: Execution): HeldCallNotice => ({
  execution_id: execution.execution_id,
  tool: execution.tool,
  agent_id: execution.agent_id,
  customer_id: execution.customer_id,
  staff_group: execution.decision?.step?.staff ?? null,
  customer_confirms: execution.decision?.step?.customer ?? false,
  summary: summarize(execution.arguments_json, hiddenSecretsOf(execution)),
  console_url: deps.consoleUrl(execution.execution_id),
  expires_at: execution.expires_at ?? execution.created_at,
  approvals_needed: approvalsNeeded(execution),
  escalated_to: null,
});

/**
 * Approvers hear about a held call at least once: the channels are told first, then the record
 * notes it, so a crash in between repeats the notice rather than lose it.
 */
const notifyOnce = async (deps: HeldCallStepsDeps, execution: Execution): Promise<void> => {
  if (execution.notified_at !== null) return;
  await deps.notifier.heldCall(noticeOf(deps, execution));
  deps.noticed?.(execution);
  await deps.store.annotate(execution, 'pending_approval', { notified_at: isoAt(deps.clock) }, 'notified_at');
};

/** The approval time ran out: pending becomes expired; a decision that won the race runs instead. */
export const expireApproval = async (deps: ApprovedRunDeps, key: ExecutionKey): Promise<Execution | undefined> => {
  const expired = await expirePending(deps, key);
  if (expired.kind === 'applied') {
    deps.log.info('held call expired', { execution_id: key.execution_id });
    return expired.execution;
  }
  if (expired.current?.status === 'approved') return runApproved(deps, key);
  return expired.current;
};

/** The approved call runs, once (see run-once.ts). */
export const executeApproved = (deps: ApprovedRunDeps, key: ExecutionKey): Promise<Execution | undefined> =>
  runApproved(deps, key);
