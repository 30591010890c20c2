// Approval runs on Step Functions (the local runtime answers the same API calls). The SDK's
// module is loaded on the first run started or signalled, not when the function starts.
import type { SFNClient } from '@aws-sdk/client-sfn';
import {
  type ApprovalRunOutcome,
  type ApprovalRunStart,
  type ApprovalRunStarted,
  type ApprovalRuns,
  approvalRunName,
} from '../approvals/approval-runs.js';
import { type ClientSource, clientOf, onFirstUse } from './on-first-use.js';

const sfn = onFirstUse(() => import('./sdk/sfn.js'));

/** The default client, in the function's own region, made on first use. */
export const defaultStepFunctionsClient = onFirstUse(async () => new (await sfn()).SFNClient({}));

const nameOf = (error: unknown): string => (error instanceof Error ? error.name : '');

export class StepFunctionsApprovalRuns implements ApprovalRuns {
  constructor(
    private readonly client: ClientSource<SFNClient>,
    private readonly stateMachineArn: string,
  ) {}

  async start({ restarts, ...payload }: ApprovalRunStart): Promise<ApprovalRunStarted> {
    const [client, { StartExecutionCommand }] = await Promise.all([clientOf(this.client), sfn()]);
    const name = approvalRunName(payload.execution_id, restarts);
    try {
      await client.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name,
          // The state machine reads its input under Payload (see the ASL's AwaitDecision).
          input: JSON.stringify({ Payload: payload }),
        }),
      );
      return 'started';
    } catch (error) {
      if (nameOf(error) !== 'ExecutionAlreadyExists') throw error;
    }
    // A run of that name exists: running (the call is in hand), or ended for good under that name.
    // Only recovery meets this (the agents' fronts start runs under fresh ids), so only its role may describe.
    return (await this.running(client, name)) ? 'running' : 'ended';
  }

  private async running(client: SFNClient, name: string): Promise<boolean> {
    const { DescribeExecutionCommand } = await sfn();
    const executionArn = `${this.stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
    const { status } = await client.send(new DescribeExecutionCommand({ executionArn }));
    // PENDING_REDRIVE: a redrive an operator asked for is under way.
    return status === 'RUNNING' || status === 'PENDING_REDRIVE';
  }

  async signal(taskToken: string, outcome: ApprovalRunOutcome): Promise<boolean> {
    const [client, { SendTaskSuccessCommand }] = await Promise.all([clientOf(this.client), sfn()]);
    try {
      await client.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify({ outcome }) }));
      return true;
    } catch (error) {
      if (['TaskDoesNotExist', 'TaskTimedOut', 'InvalidToken'].includes(nameOf(error))) return false;
      throw error;
    }
  }
}
