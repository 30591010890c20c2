// Approval runs on Step Functions (the local runtime answers the same API calls). The SDK's
// module is loaded on the first run started or signalled, not when the function starts.
import type { SFNClient } from '@aws-sdk/client-sfn';
import type { ApprovalRunOutcome, ApprovalRunStart, ApprovalRuns } from '../approvals/approval-runs.js';
import { type ClientSource, clientOf, onFirstUse } from './on-first-use.js';

const sfn = onFirstUse(() => import('@aws-sdk/client-sfn'));

/** The default client, in the function's own region, made on first use. */
export const defaultStepFunctionsClient = onFirstUse(async () => new (await sfn()).SFNClient({}));

const nameOf = (error: unknown): string => (error instanceof Error ? error.name : '');

export class StepFunctionsApprovalRuns implements ApprovalRuns {
  constructor(
    private readonly client: ClientSource<SFNClient>,
    private readonly stateMachineArn: string,
  ) {}

  async start(input: ApprovalRunStart): Promise<void> {
    const [client, { StartExecutionCommand }] = await Promise.all([clientOf(this.client), sfn()]);
    try {
      await client.send(
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
