// The approval runs port. An approval run is one execution of the approval state machine
// (infra/state-machine/) for one held call: named by the execution id (so starting it twice is
// harmless), it waits on a task token for the decision, then runs the call or ends. Its steps are
// shared/use-cases/held-call-steps.ts, invoked through functions/held-call-steps.ts.

export interface ApprovalRunStart {
  readonly execution_id: string;
  readonly agent_id: string;
  /** How long the approval run waits for a decision before the call expires. */
  readonly timeout_seconds: number;
}

export type ApprovalRunOutcome = 'approved' | 'rejected' | 'closed';

export interface ApprovalRuns {
  start(input: ApprovalRunStart): Promise<void>;
  /** Hands a decision to the waiting approval run; false when nothing waits on that token any more. */
  signal(taskToken: string, outcome: ApprovalRunOutcome): Promise<boolean>;
}
