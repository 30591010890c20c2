// The local Step Functions endpoint, spoken to with the AWS SDK's own client: the repo's ASL runs
// with local task functions, and the API answers as Step Functions does (AWS JSON protocol, its
// error names), so the gateway's adapter needs no local special case.
//
// Long: each API action and error name is its own case.
import {
  DescribeExecutionCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newLocalAwsCredentials } from '../../infra/local/aws-signature.js';
import { localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { type LocalStepFunctions, startLocalStepFunctions } from '../../infra/local/step-functions.js';
import { approvalDefinition, approvalDefinitionPath } from '../../infra/state-machine/definition.js';
import { StepFunctionsApprovalRuns } from '../../shared/adapters/step-functions-approval-runs.js';
import { RecordNotYetWritten } from '../../shared/use-cases/held-call-steps.js';
import { eventually } from '../support/approval-org.js';
import { signedAwsCall, unsignedAwsCall } from '../support/aws-requests.js';
import { verifies } from '../support/requirements.js';

const functionArn = 'arn:aws:lambda:local:000000000000:function:test-workflow';

interface Invocation {
  readonly action: string;
  readonly execution_id: string;
  readonly task_token?: string;
  readonly timeout_seconds?: number;
}

let sfn: LocalStepFunctions;
let client: SFNClient;
const invocations: Invocation[] = [];
/** What the register task does besides recording its call (a test may hand the decision back at once). */
let onRegister: (invocation: Invocation) => Promise<void> = async () => undefined;

beforeAll(async () => {
  sfn = await startLocalStepFunctions({
    host: '127.0.0.1',
    port: 0,
    stateMachineName: 'test-approvals',
    definition: approvalDefinition({ Partition: 'aws', HeldCallStepsFunction: functionArn }),
    functions: new Map([
      [
        functionArn,
        async (payload: unknown) => {
          const invocation = payload as Invocation;
          invocations.push(invocation);
          if (invocation.action === 'register') await onRegister(invocation);
          return { status: invocation.action === 'execute' ? 'succeeded' : 'expired' };
        },
      ],
    ]),
    onError: () => undefined,
  });
  client = new SFNClient(localAwsClientConfig(sfn.endpoint, sfn.credentials));
});
afterAll(async () => {
  client?.destroy();
  await sfn?.close();
});
afterEach(() => {
  onRegister = async () => undefined;
});

const start = (name: string, timeoutSeconds = 60) =>
  client.send(
    new StartExecutionCommand({
      stateMachineArn: sfn.stateMachineArn,
      name,
      input: JSON.stringify({
        Payload: { execution_id: name, agent_id: 'procurement-agent', timeout_seconds: timeoutSeconds },
      }),
    }),
  );

const registered = (name: string) =>
  eventually(
    async () => invocations.find((invocation) => invocation.action === 'register' && invocation.execution_id === name),
    (found) => found !== undefined,
  );

const describeExecution = (name: string) =>
  client.send(
    new DescribeExecutionCommand({
      executionArn: sfn.stateMachineArn.replace(':stateMachine:', ':execution:').concat(`:${name}`),
    }),
  );

const finished = (name: string) =>
  eventually(
    () => describeExecution(name),
    (execution) => execution.status !== 'RUNNING',
  );

const errorName = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
  } catch (error) {
    return error instanceof Error ? error.name : String(error);
  }
  return 'no error';
};

describe('the approval run on the local endpoint', () => {
  it(
    verifies(
      'workflow.asl-in-repo',
      'runs the repo’s ASL: a decided call takes three transitions, the task token reaches the register task',
    ),
    async () => {
      const name = 'decided-call';
      await start(name);
      const register = await registered(name);
      expect(register).toMatchObject({ action: 'register', execution_id: name, timeout_seconds: 60 });
      expect(register?.task_token?.length).toBeGreaterThan(100);
      await client.send(
        new SendTaskSuccessCommand({
          taskToken: register?.task_token ?? '',
          output: JSON.stringify({ outcome: 'approved' }),
        }),
      );
      const done = await finished(name);
      expect(done.status).toBe('SUCCEEDED');
      // The Execute task's selected result is the approval run's output.
      expect(JSON.parse(done.output ?? 'null')).toEqual({ status: 'succeeded' });
      expect(sfn.statesEntered(name)).toEqual(['AwaitDecision', 'Decided', 'Execute']);
      expect(invocations.filter((invocation) => invocation.execution_id === name).map((i) => i.action)).toEqual([
        'register',
        'execute',
      ]);
    },
  );

  it(
    verifies(
      'workflow.asl-in-repo',
      'a rejected call ends after three transitions without running; an unanswered one expires after two',
    ),
    async () => {
      await start('rejected-call');
      const register = await registered('rejected-call');
      await client.send(
        new SendTaskSuccessCommand({
          taskToken: register?.task_token ?? '',
          output: JSON.stringify({ outcome: 'closed' }),
        }),
      );
      expect((await finished('rejected-call')).status).toBe('SUCCEEDED');
      expect(sfn.statesEntered('rejected-call')).toEqual(['AwaitDecision', 'Decided', 'Closed']);

      await start('unanswered-call', 1);
      const waiting = await registered('unanswered-call');
      const expired = await finished('unanswered-call');
      expect(expired.status).toBe('SUCCEEDED');
      expect(sfn.statesEntered('unanswered-call')).toEqual(['AwaitDecision', 'Expire']);
      expect(invocations.filter((i) => i.execution_id === 'unanswered-call').map((i) => i.action)).toEqual([
        'register',
        'expire',
      ]);
      // The wait is over: its token answers as Step Functions does for a timed-out task.
      expect(
        await errorName(
          client.send(
            new SendTaskSuccessCommand({ taskToken: waiting?.task_token ?? '', output: '{"outcome":"approved"}' }),
          ),
        ),
      ).toBe('TaskTimedOut');
    },
  );

  it(
    verifies(
      'workflow.asl-in-repo',
      'the document is JSONPath-only Amazon States Language, with its wait timed by the remaining approval time',
    ),
    async () => {
      const { readFile } = await import('node:fs/promises');
      const text = await readFile(approvalDefinitionPath, 'utf8');
      expect(text).not.toMatch(/QueryLanguage|JSONata|\{%/);
      const definition = approvalDefinition({ Partition: 'aws', HeldCallStepsFunction: functionArn }) as {
        States: Record<string, Record<string, unknown>>;
      };
      expect(definition.States.AwaitDecision).toMatchObject({
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        TimeoutSecondsPath: '$.Payload.timeout_seconds',
        Catch: [{ ErrorEquals: ['States.Timeout'], Next: 'Expire' }],
      });
      expect(() => approvalDefinition({ Partition: 'aws' } as never)).toThrow(/HeldCallStepsFunction/);
    },
  );

  it(
    verifies(
      'perf.held-run-after-start-answer',
      'StartExecution is answered before the run’s first task runs; the task runs after, and once',
    ),
    async () => {
      const answer = await start('answered-first');
      // The answer is in the client's hands and the register task has not run: nothing of the run
      // was done on the way to it.
      expect(answer.executionArn).toMatch(/:answered-first$/);
      expect(invocations.filter((invocation) => invocation.execution_id === 'answered-first')).toEqual([]);
      expect((await describeExecution('answered-first')).status).toBe('RUNNING');
      await registered('answered-first');
      expect(invocations.filter((invocation) => invocation.execution_id === 'answered-first')).toHaveLength(1);
      expect(sfn.statesEntered('answered-first')).toEqual(['AwaitDecision']);
    },
  );

  it(
    verifies('workflow.local-endpoint', 'a decision handed back while the register task still runs is not lost'),
    async () => {
      onRegister = async (invocation) => {
        await client.send(
          new SendTaskSuccessCommand({ taskToken: invocation.task_token ?? '', output: '{"outcome":"approved"}' }),
        );
      };
      await start('self-signalled');
      expect((await finished('self-signalled')).status).toBe('SUCCEEDED');
      expect(sfn.statesEntered('self-signalled')).toEqual(['AwaitDecision', 'Decided', 'Execute']);
    },
  );

  it(
    verifies('workflow.local-endpoint', 'starts are idempotent by name and input; the SDK sees AWS’s error names'),
    async () => {
      const first = await start('named-once');
      const again = await start('named-once');
      expect(again.executionArn).toBe(first.executionArn);
      expect(await errorName(start('named-once', 30))).toBe('ExecutionAlreadyExists');
      // The adapter tells a run of that name still running (the call is in hand).
      const workflow = new StepFunctionsApprovalRuns(client, sfn.stateMachineArn);
      await expect(
        workflow.start({ execution_id: 'named-once', agent_id: 'procurement-agent', timeout_seconds: 30 }),
      ).resolves.toBe('running');
      expect(
        await errorName(
          client.send(
            new StartExecutionCommand({ stateMachineArn: `${sfn.stateMachineArn}-other`, name: 'x', input: '{}' }),
          ),
        ),
      ).toBe('StateMachineDoesNotExist');
      expect(
        await errorName(
          client.send(new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn, name: 'bad name!' })),
        ),
      ).toBe('ValidationException');
      expect(
        await errorName(client.send(new SendTaskSuccessCommand({ taskToken: 'no-such-token', output: '{}' }))),
      ).toBe('TaskDoesNotExist');
      expect(await workflow.signal('no-such-token', 'approved')).toBe(false);
      expect(
        await errorName(client.send(new DescribeExecutionCommand({ executionArn: `${sfn.stateMachineArn}:nothing` }))),
      ).toBe('ExecutionDoesNotExist');

      const register = await registered('named-once');
      expect(
        await errorName(
          client.send(new SendTaskSuccessCommand({ taskToken: register?.task_token ?? '', output: 'not json' })),
        ),
      ).toBe('InvalidOutput');
      // A failure handed back fails the approval run with that error.
      await client.send(
        new SendTaskFailureCommand({ taskToken: register?.task_token ?? '', error: 'Gateway.Refused', cause: 'test' }),
      );
      const failed = await finished('named-once');
      expect(failed).toMatchObject({ status: 'FAILED', error: 'Gateway.Refused' });
      expect(sfn.statesEntered('named-once')).toEqual(['AwaitDecision']);
    },
  );

  it(
    verifies(
      'deploy.approval-run-restart',
      'refuses an ended run’s name even with the same input, as AWS does; the adapter tells it ended and restarts under the next name',
    ),
    async () => {
      const workflow = new StepFunctionsApprovalRuns(client, sfn.stateMachineArn);
      const call = { execution_id: 'ends-early', agent_id: 'procurement-agent', timeout_seconds: 60 };
      await expect(workflow.start(call)).resolves.toBe('started');
      const register = await registered(call.execution_id);
      await client.send(
        new SendTaskFailureCommand({ taskToken: register?.task_token ?? '', error: 'Lambda.Unknown', cause: 'test' }),
      );
      expect((await finished(call.execution_id)).status).toBe('FAILED');
      // The very same start (name and input) is refused once the run has ended.
      expect(await errorName(start(call.execution_id))).toBe('ExecutionAlreadyExists');
      await expect(workflow.start(call)).resolves.toBe('ended');
      await expect(workflow.start({ ...call, restarts: 1 })).resolves.toBe('started');
      // The restarted run is named apart, and its steps see the call's own id (no suffix).
      const restarted = await describeExecution(`${call.execution_id}-r1`);
      expect(restarted.status).toBe('RUNNING');
      expect(JSON.parse(restarted.input ?? '{}')).toEqual({ Payload: call });
      // The same start again is the same request (AWS answers it alike); with other input, it is found running.
      await expect(workflow.start({ ...call, restarts: 1 })).resolves.toBe('started');
      await expect(workflow.start({ ...call, timeout_seconds: 50, restarts: 1 })).resolves.toBe('running');
      const registers = await eventually(
        async () => invocations.filter((i) => i.action === 'register' && i.execution_id === call.execution_id),
        (found) => found.length === 2,
      );
      await client.send(
        new SendTaskSuccessCommand({ taskToken: registers[1]?.task_token ?? '', output: '{"outcome":"closed"}' }),
      );
      expect((await finished(`${call.execution_id}-r1`)).status).toBe('SUCCEEDED');
    },
  );

  it(
    verifies(
      'perf.held-reply-concurrent',
      'a register step that finds no record yet (RecordNotYetWritten) is retried by the ASL, then waits as usual',
    ),
    async () => {
      const name = 'record-on-its-way';
      let attempts = 0;
      onRegister = async (invocation) => {
        if (invocation.execution_id !== name) return;
        attempts += 1;
        if (attempts === 1) throw new RecordNotYetWritten(name);
      };
      await start(name);
      await eventually(
        async () => attempts,
        (count) => count >= 2,
        5_000,
      );
      const again = invocations.filter((invocation) => invocation.execution_id === name);
      expect(again.map((invocation) => invocation.action)).toEqual(['register', 'register']);
      expect((await describeExecution(name)).status).toBe('RUNNING');
      await client.send(
        new SendTaskSuccessCommand({
          taskToken: again[1]?.task_token ?? '',
          output: JSON.stringify({ outcome: 'rejected' }),
        }),
      );
      expect((await finished(name)).status).toBe('SUCCEEDED');
      expect(sfn.statesEntered(name)).toEqual(['AwaitDecision', 'Decided', 'Closed']);
    },
  );

  it(
    verifies('workflow.local-endpoint', 'refuses operations it does not answer, and bodies that are not JSON'),
    async () => {
      const unknown = await signedAwsCall(sfn.endpoint, sfn.credentials, {
        service: 'states',
        target: 'AWSStepFunctions.DeleteStateMachine',
        body: '{}',
      });
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({ __type: 'UnknownOperationException' });
      const broken = await signedAwsCall(sfn.endpoint, sfn.credentials, {
        service: 'states',
        target: 'AWSStepFunctions.StartExecution',
        body: '{not json',
      });
      expect(broken.status).toBe(400);
      expect(broken.headers.get('x-amzn-errortype')).toBe('SerializationException');
    },
  );
});

describe('who may call the local endpoint', () => {
  it(
    verifies(
      'local.endpoints-authenticated',
      'refuses a SendTaskSuccess that is not signed with the run’s credential, even with the right task token, and the call stays waiting',
    ),
    async () => {
      const name = 'forged-approval';
      await start(name);
      const register = await registered(name);
      const call = {
        service: 'states' as const,
        target: 'AWSStepFunctions.SendTaskSuccess',
        body: JSON.stringify({
          taskToken: register?.task_token ?? '',
          output: JSON.stringify({ outcome: 'approved' }),
        }),
      };
      const other = newLocalAwsCredentials();
      const attempts = [
        await unsignedAwsCall(sfn.endpoint, call),
        // A signature with another credential, and with the right key id but another secret.
        await signedAwsCall(sfn.endpoint, other, call),
        await signedAwsCall(
          sfn.endpoint,
          { accessKeyId: sfn.credentials.accessKeyId, secretAccessKey: other.secretAccessKey },
          call,
        ),
        await unsignedAwsCall(sfn.endpoint, call, {
          authorization: `AWS4-HMAC-SHA256 Credential=${sfn.credentials.accessKeyId}/20260101/local/states/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
          'x-amz-date': '20260101T000000Z',
        }),
      ];
      for (const refused of attempts) {
        expect(refused.status).toBe(403);
        expect(await refused.json()).toMatchObject({ __type: 'UnrecognizedClientException' });
      }
      expect((await describeExecution(name)).status).toBe('RUNNING');
      expect(sfn.statesEntered(name)).toEqual(['AwaitDecision']);
      expect(invocations.filter((invocation) => invocation.execution_id === name).map((i) => i.action)).toEqual([
        'register',
      ]);
      // The runtime's own client still decides it.
      await client.send(
        new SendTaskSuccessCommand({
          taskToken: register?.task_token ?? '',
          output: JSON.stringify({ outcome: 'closed' }),
        }),
      );
      expect((await finished(name)).status).toBe('SUCCEEDED');
    },
  );

  it(verifies('local.endpoints-authenticated', 'refuses an unsigned StartExecution and starts nothing'), async () => {
    const refused = await unsignedAwsCall(sfn.endpoint, {
      service: 'states',
      target: 'AWSStepFunctions.StartExecution',
      body: JSON.stringify({
        stateMachineArn: sfn.stateMachineArn,
        name: 'unsigned-start',
        input: JSON.stringify({ Payload: { execution_id: 'unsigned-start', agent_id: 'x', timeout_seconds: 60 } }),
      }),
    });
    expect(refused.status).toBe(403);
    expect(await errorName(describeExecution('unsigned-start'))).toBe('ExecutionDoesNotExist');
  });
});
