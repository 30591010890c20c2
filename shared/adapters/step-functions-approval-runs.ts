// Approval runs on Step Functions (the local runtime answers the same API calls).
import { SendTaskSuccessCommand, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { ApprovalRunOutcome, ApprovalRunStart, ApprovalRuns } from '../approvals/approval-runs.js';

const nameOf = (error: unknown): string => (error instanceof Error ? error.name : '');

export class StepFunctionsApprovalRuns implements ApprovalRuns {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  async start(input: ApprovalRunStart): Promise<void> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name: input.execution_id,
          // The state machine reads its input under Payload (see the ASL's AwaitDecision).
          input: JSON.stringify({ Payload: input }),
        }),
      );
    } catch (error) {
      // An approval run of that name exists: the call is already in hand.
      if (nameOf(error) !== 'ExecutionAlreadyExists') throw error;
    }
  }

  async signal(taskToken: string, outcome: ApprovalRunOutcome): Promise<boolean> {
    try {
      await this.client.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify({ outcome }) }));
      return true;
    } catch (error) {
      if (['TaskDoesNotExist', 'TaskTimedOut', 'InvalidToken'].includes(nameOf(error))) return false;
      throw error;
    }
  }
}
