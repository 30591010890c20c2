// Nothing lost: every open call brought forward, by the local runtime when it starts and by the
// reconciler in AWS on a schedule. Pending calls past their time expire, lost approval runs start
// again, decisions whose push was lost are handed over (or run here), and abandoned claims settle.
import type { ApprovalRuns } from '../approvals/approval-runs.js';
import { errorText } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import type { GatewayMetrics } from '../metrics.js';
import { approvalTimeoutSeconds } from './approval-time.js';
import { expireApproval } from './held-call-steps.js';
import { keyOf, openExecutions, pushDecision } from './held-calls.js';
import { type ApprovedRunDeps, claimGraceMs, runApproved, settleAbandonedClaim } from './run-once.js';

export interface RecoveryDeps extends ApprovedRunDeps {
  readonly approvalRuns: ApprovalRuns;
  /**
   * Where a held call left without an approval run is counted, and the unknown outcomes not yet
   * settled (alarms watch both). @default none
   */
  readonly metrics?: Pick<GatewayMetrics, 'approvalRunLost' | 'unsettledOutcomes'> | null;
}

/**
 * How often recovery starts a held call's approval run again after runs that ended before they
 * registered: a run that keeps failing there fails for a reason a restart does not fix.
 */
export const maxApprovalRunRestarts = 3;

/** How long a decision may wait for its approval run before recovery runs it itself. */
export const signalGraceMs = 60_000;
/** How long a held call may wait for its approval run to register before recovery starts it. */
export const registerGraceMs = 60_000;

export interface RecoveryReport {
  /** Pending calls whose approval run was (re)started. */
  readonly resumed: number;
  /** Of those, the runs started under a new name because the call's last run had ended. */
  readonly restarted: number;
  /** Pending calls left without a running approval run (counted in the metrics: see approvalRunLost). */
  readonly lost: number;
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
  let restarted = 0;
  let lost = 0;
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
          const run = await resumeApprovalRun(deps, execution, now);
          if (run.kind === 'started') resumed += 1;
          if (run.kind === 'started' && run.restarts > execution.approval_run_restarts) restarted += 1;
          if (run.kind === 'lost') lost += 1;
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
  return { resumed, restarted, lost, expired, executed, settled };
};

/**
 * Publishes how many unknown outcomes wait for an operator to settle them (one count of the store's
 * partition of them), so the UnknownOutcomes figure stays up until the last one is settled: by the
 * reconciler on each pass, and on a timer by the local runtime. Returns the count.
 */
export const publishUnsettledOutcomes = async (deps: Pick<RecoveryDeps, 'store' | 'metrics'>): Promise<number> => {
  const count = await deps.store.countUnsettled();
  deps.metrics?.unsettledOutcomes(count);
  return count;
};

type ResumedRun =
  | { readonly kind: 'started'; readonly restarts: number }
  /** A run of the call runs already, or the call left pending meanwhile: nothing to start. */
  | { readonly kind: 'in_hand' }
  | { readonly kind: 'lost' };

/**
 * Gives a held call that has no registered approval run a running one. A run that ended under the
 * call's current name (Step Functions never takes a name twice) is started again under the next
 * one, the restart recorded on the call first, up to maxApprovalRunRestarts times; past that, or
 * when a start is refused, the call is lost to approvers: logged and counted for the alarm.
 */
const resumeApprovalRun = async (deps: RecoveryDeps, execution: Execution, now: number): Promise<ResumedRun> => {
  let restarts = execution.approval_run_restarts;
  try {
    for (;;) {
      const found = await deps.approvalRuns.start({
        execution_id: execution.execution_id,
        agent_id: execution.agent_id,
        timeout_seconds: approvalTimeoutSeconds(execution, now),
        restarts,
      });
      if (found === 'started') return { kind: 'started', restarts };
      if (found === 'running') return { kind: 'in_hand' };
      if (restarts >= maxApprovalRunRestarts) {
        return approvalRunLost(deps, execution, `its approval run ended before registering ${restarts + 1} times`);
      }
      restarts += 1;
      const recorded = await deps.store.annotate(keyOf(execution), 'pending_approval', {
        approval_run_restarts: restarts,
      });
      if (recorded.kind !== 'applied') return { kind: 'in_hand' };
    }
  } catch (error) {
    return approvalRunLost(deps, execution, `its approval run could not be started: ${errorText(error)}`);
  }
};

const approvalRunLost = (deps: RecoveryDeps, execution: Execution, reason: string): ResumedRun => {
  deps.log.warn('a held call has no approval run: approvers are not told of it; the next pass tries again', {
    execution_id: execution.execution_id,
    reason,
    expires_at: execution.expires_at,
  });
  deps.metrics?.approvalRunLost();
  return { kind: 'lost' };
};
