// The approval runs port. An approval run is one execution of the approval state machine
// (infra/state-machine/) for one held call: named by the execution id (so starting it twice is
// harmless), it waits on a task token for the decision, then runs the call or ends. Its steps are
// shared/use-cases/held-call-steps.ts, invoked through functions/held-call-steps.ts.
//
// A name is never used twice (Step Functions keeps a Standard execution's name for 90 days after it
// ends): a run that ended before it registered is started again by recovery under the next name.

export interface ApprovalRunStart {
  readonly execution_id: string;
  readonly agent_id: string;
  /** How long the approval run waits for a decision before the call expires. */
  readonly timeout_seconds: number;
  /** How many runs of this call recovery started again before this one (its name's suffix). @default 0 */
  readonly restarts?: number;
}

/**
 * What a start found: a new run; a run of that name already running (the call is in hand); or a
 * run of that name that ended (failed, timed out, aborted or finished), whose name cannot be used again.
 */
export type ApprovalRunStarted = 'started' | 'running' | 'ended';

export type ApprovalRunOutcome = 'approved' | 'rejected' | 'closed';

export interface ApprovalRuns {
  start(input: ApprovalRunStart): Promise<ApprovalRunStarted>;
  /** Hands a decision to the waiting approval run; false when nothing waits on that token any more. */
  signal(taskToken: string, outcome: ApprovalRunOutcome): Promise<boolean>;
}

/** The run's name: the execution id, then `<execution id>-r<n>` for the n-th restart (at most 80 characters). */
export const approvalRunName = (executionId: string, restarts = 0): string =>
  restarts === 0 ? executionId : `${executionId}-r${restarts}`;
