// The approval workflow port: one Step Functions Standard execution per held call, named by the
// execution id (so starting it twice is harmless), waiting on a task token for the decision.

export interface WorkflowStart {
  readonly execution_id: string;
  readonly agent_id: string;
  /** How long the workflow waits for a decision before the call expires. */
  readonly timeout_seconds: number;
}

export type WorkflowOutcome = 'approved' | 'rejected' | 'closed';

export interface ApprovalWorkflow {
  start(input: WorkflowStart): Promise<void>;
  /** Hands a decision to the waiting workflow; false when nothing waits on that token any more. */
  signal(taskToken: string, outcome: WorkflowOutcome): Promise<boolean>;
}
