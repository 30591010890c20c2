// Nothing lost: every open call brought forward, by the local runtime when it starts and by the
// reconciler in AWS on a schedule. Pending calls past their time expire, lost approval runs start
// again, decisions whose push was lost are handed over (or run here), and abandoned claims settle.
import type { ApprovalRuns } from '../approvals/approval-runs.js';
import { approvalTimeoutSeconds } from './approval-time.js';
import { expireApproval } from './held-call-steps.js';
import { errorText, keyOf, openExecutions, pushDecision } from './held-calls.js';
import { type ApprovedRunDeps, claimGraceMs, runApproved, settleAbandonedClaim } from './run-once.js';

export interface RecoveryDeps extends ApprovedRunDeps {
  readonly approvalRuns: ApprovalRuns;
}

/** How long a decision may wait for its approval run before recovery runs it itself. */
export const signalGraceMs = 60_000;
/** How long a held call may wait for its approval run to register before recovery starts it. */
export const registerGraceMs = 60_000;

export interface RecoveryReport {
  /** Pending calls whose approval run was (re)started. */
  readonly resumed: number;
  readonly expired: number;
  /** Approved calls run (or handed to their approval run again). */
  readonly executed: number;
  /** Claims settled as interrupted. */
  readonly settled: number;
}

/**
 * Brings every open call forward. `restart`: the local runtime after a start, holding the only lock
 * on its data, so every approval run it had is gone and no one else is sending. Otherwise (the AWS
 * reconciler), approval runs may be alive: only what is overdue or lost is acted on.
 */
export const recoverOpenExecutions = async (
  deps: RecoveryDeps,
  mode: 'restart' | 'reconcile',
  background: (work: Promise<unknown>) => void = () => undefined,
): Promise<RecoveryReport> => {
  let resumed = 0;
  let expired = 0;
  let executed = 0;
  let settled = 0;
  // At local start the records are read, not the index: a crash between a record's write and its
  // index entry's leaves the index saying a call ended while its record says it is open.
  for await (const execution of openExecutions(deps.store, mode === 'restart' ? 'records' : 'index')) {
    // Each call is judged at the time it is reached: recovering thousands of calls takes a while.
    const now = deps.clock.now();
    try {
      if (execution.status === 'pending_approval') {
        const expiresAt = execution.expires_at === null ? now : Date.parse(execution.expires_at);
        const overdue = mode === 'restart' ? now >= expiresAt : now > expiresAt + claimGraceMs;
        if (overdue) {
          await expireApproval(deps, execution);
          expired += 1;
        } else if (
          mode === 'restart' ||
          (execution.task_token === null && now - Date.parse(execution.created_at) > registerGraceMs)
        ) {
          await deps.approvalRuns.start({
            execution_id: execution.execution_id,
            agent_id: execution.agent_id,
            timeout_seconds: approvalTimeoutSeconds(execution, now),
          });
          resumed += 1;
        }
      } else if (execution.claimed_at !== null) {
        const after = await settleAbandonedClaim(deps, execution, { now: mode === 'restart' });
        if (after.status !== 'approved') settled += 1;
      } else if (mode === 'restart' || now - Date.parse(execution.decided_at ?? execution.updated_at) > signalGraceMs) {
        // Approved, not yet claimed: hand it to its approval run again, or run it here.
        const handed = mode === 'reconcile' && (await pushDecision(deps, execution));
        if (!handed) background(runApproved(deps, keyOf(execution)));
        executed += 1;
      }
    } catch (error) {
      deps.log.warn('an open call could not be recovered now; the next pass retries', {
        execution_id: execution.execution_id,
        error: errorText(error),
      });
    }
  }
  return { resumed, expired, executed, settled };
};
