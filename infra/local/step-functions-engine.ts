// The local Step Functions engine: runs executions of one state machine definition with
// aws-local-stepfunctions, each Task state invoking a local function by the ARN the definition
// names, and a `.waitForTaskToken` task waiting until its token is signalled. It keeps what
// DescribeExecution answers from (status, output, error, the states entered) and knows how to stop
// cleanly. Its refusals carry Step Functions' error names; the API front is step-functions.ts.
import { randomBytes } from 'node:crypto';
import { type RunOptions, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { errorText } from '../../shared/errors.js';
import { AwsJsonError } from './aws-signature.js';

/** A local Lambda function as a task calls it: the payload in, the function's result out. */
export type LocalFunction = (payload: unknown) => Promise<unknown>;

type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';

interface LocalExecution {
  readonly arn: string;
  readonly name: string;
  readonly input: string;
  readonly startDate: number;
  readonly token: string;
  status: ExecutionStatus;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  /** The states entered, in order: what Step Functions bills as state transitions. */
  readonly states: string[];
  abort(): void;
  done: Promise<void>;
}

type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;
type JsonValue = Parameters<TaskHandlers[string]>[0];

interface Waiter {
  readonly execution: string;
  /** The task's function has run (the token is recorded): the execution only waits now. */
  registered: boolean;
  resolve(output: unknown): void;
  reject(error: Error): void;
}

/** An error raised by a task: Step Functions names it by the error's name, as a Lambda's errorType. */
class TaskFailure extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/**
 * How long after answering StartExecution a run's first state begins. The service answers first
 * and invokes the first state's function some tens of milliseconds later; here the caller shares
 * this thread (the local runtime's held reply writes the call's record while its run starts), so
 * the run waits until the answer has been read and a little longer, or its first step would take
 * the thread while the caller's reply still waits on the store.
 */
const runStartDelayMs = 5;

/** Two turns of the event loop (an answer written now is read in them by a client on this thread), then the delay. */
const runStart = (): Promise<void> =>
  new Promise((resolve) => setImmediate(() => setImmediate(() => setTimeout(resolve, runStartDelayMs))));

const maxExecutions = 10_000; // remembered for DescribeExecution; running ones are never forgotten
const epochSeconds = (ms: number): number => ms / 1000;
const [region, account] = ['local', '000000000000'];

export interface EngineOptions {
  readonly stateMachineName: string;
  readonly definition: unknown;
  /** The functions tasks may invoke, by the ARN the definition names. */
  readonly functions: ReadonlyMap<string, LocalFunction>;
  readonly onError: (message: string, error: unknown) => void;
}

export class LocalStateMachineEngine {
  readonly stateMachineArn: string;
  private readonly definition: StateMachineDefinition;
  private readonly machine: StateMachine;
  private readonly executions = new Map<string, LocalExecution>();
  private readonly waiters = new Map<string, Waiter>();
  /** Tokens whose wait ended without a signal (timed out, or the execution stopped). */
  private readonly closedTokens = new Set<string>();
  private readonly aborted = new Set<string>();
  private stopping = false;

  constructor(private readonly options: EngineOptions) {
    this.stateMachineArn = `arn:aws:states:${region}:${account}:stateMachine:${options.stateMachineName}`;
    this.definition = options.definition as StateMachineDefinition;
    this.machine = new StateMachine(this.definition);
  }

  /** StartExecution: the same name and input while it runs is the same request, answered again. */
  start(request: { stateMachineArn: string; name?: string | undefined; input: string }) {
    if (request.stateMachineArn !== this.stateMachineArn) {
      throw new AwsJsonError('StateMachineDoesNotExist', `State machine does not exist: '${request.stateMachineArn}'`);
    }
    const name = request.name ?? randomBytes(16).toString('hex');
    const existing = this.executions.get(name);
    if (existing !== undefined) {
      if (existing.status === 'RUNNING' && existing.input === request.input) {
        return { executionArn: existing.arn, startDate: epochSeconds(existing.startDate) };
      }
      throw new AwsJsonError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.arn}'`);
    }
    let input: unknown;
    try {
      input = JSON.parse(request.input);
    } catch {
      throw new AwsJsonError('InvalidExecutionInput', 'The input is not valid JSON.');
    }
    const arn = `arn:aws:states:${region}:${account}:execution:${this.options.stateMachineName}:${name}`;
    const token = randomBytes(96).toString('base64url');
    const startDate = Date.now();
    const record: LocalExecution = {
      ...{ arn, name, input: request.input, startDate, token },
      status: 'RUNNING',
      states: [],
      abort: () => undefined,
      done: Promise.resolve(),
    };
    record.done = this.begin(record, input);
    this.executions.set(name, record);
    this.forgetOldest();
    return { executionArn: arn, startDate: epochSeconds(startDate) };
  }

  /** Runs a started execution once its StartExecution has been answered, as the service does (runStart). */
  private async begin(record: LocalExecution, input: unknown): Promise<void> {
    await runStart();
    const run = this.machine.run(input as Parameters<StateMachine['run']>[0], {
      overrides: { taskResourceLocalHandlers: this.taskHandlers(record.token, record.arn) },
      context: {
        Execution: {
          Id: record.arn,
          Name: record.name,
          Input: input as never,
          StartTime: new Date(record.startDate).toISOString(),
        },
        StateMachine: { Id: this.stateMachineArn, Name: this.options.stateMachineName },
        Task: { Token: record.token },
      },
      noThrowOnAbort: true,
    });
    record.abort = () => run.abort();
    await this.follow(record, run);
  }

  /** SendTaskSuccess: the waiting task ends with this output. */
  succeed(token: string, outputText: string): void {
    const waiter = this.waiterFor(token);
    let output: unknown;
    try {
      output = JSON.parse(outputText);
    } catch {
      throw new AwsJsonError('InvalidOutput', 'The output is not valid JSON.');
    }
    this.close(token);
    waiter.resolve(output);
  }

  /** SendTaskFailure: the waiting task fails with this error. */
  fail(token: string, error: string | undefined, cause: string | undefined): void {
    const waiter = this.waiterFor(token);
    this.close(token);
    waiter.reject(new TaskFailure(error ?? 'States.TaskFailed', cause ?? ''));
  }

  describe(executionArn: string) {
    const execution = this.executionByArn(executionArn);
    if (execution === undefined)
      throw new AwsJsonError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
    return {
      executionArn: execution.arn,
      stateMachineArn: this.stateMachineArn,
      name: execution.name,
      status: execution.status,
      startDate: epochSeconds(execution.startDate),
      ...(execution.stopDate === undefined ? {} : { stopDate: epochSeconds(execution.stopDate) }),
      input: execution.input,
      ...(execution.output === undefined ? {} : { output: execution.output }),
      ...(execution.error === undefined ? {} : { error: execution.error, cause: execution.cause }),
    };
  }

  statesEntered = (name: string): readonly string[] => this.executions.get(name)?.states ?? [];

  /**
   * A clean stop: executions that only wait for a decision stop (they resume at the next start,
   * with their remaining time); an execution in the middle of a step (an approved call being sent,
   * an expiry, a token being recorded) finishes that step first, so its outcome is recorded.
   */
  async drain(): Promise<void> {
    this.stopping = true;
    for (const [token, waiter] of this.waiters) if (waiter.registered) this.stopWaiting(token);
    await Promise.all([...this.executions.values()].map((execution) => execution.done));
  }

  /** Resolves when no execution is running any more. */
  async settled(): Promise<void> {
    for (;;) {
      const running = [...this.executions.values()].filter((execution) => execution.status === 'RUNNING');
      if (running.length === 0) return;
      await Promise.all(running.map((execution) => execution.done));
    }
  }

  /** Each Task state runs its function locally; the wait-for-token pattern waits on its token. */
  private taskHandlers(token: string, executionArn: string): TaskHandlers {
    const tasks = Object.entries(this.definition.States).filter(([, state]) => state.Type === 'Task');
    return Object.fromEntries(
      tasks.map(([name, state]) => {
        const resource = 'Resource' in state ? String(state.Resource) : '';
        const waits = resource.endsWith('.waitForTaskToken');
        return [name, (input: JsonValue) => this.runTask(input, waits ? { token, executionArn } : null)];
      }),
    );
  }

  private async runTask(input: JsonValue, wait: { token: string; executionArn: string } | null): Promise<JsonValue> {
    const { FunctionName, Payload } = lambdaTaskInput(input);
    const fn = this.options.functions.get(FunctionName);
    if (fn === undefined) throw new TaskFailure('Lambda.ResourceNotFoundException', `No function ${FunctionName}.`);
    if (wait === null) {
      const result = (await fn(Payload)) ?? null;
      return { StatusCode: 200, ExecutedVersion: '$LATEST', Payload: result as JsonValue };
    }
    const { token } = wait;
    // The waiter exists before the function runs: it may hand the decision back itself.
    const signalled = new Promise<unknown>((resolve, reject) => {
      this.closedTokens.delete(token);
      this.waiters.set(token, { execution: wait.executionArn, registered: false, resolve, reject });
    });
    try {
      await fn(Payload);
    } catch (error) {
      this.waiters.delete(token);
      throw error;
    }
    const waiter = this.waiters.get(token);
    if (waiter !== undefined) {
      waiter.registered = true;
      // Stopping: a wait that has just begun ends here (the call resumes at the next start).
      if (this.stopping) this.stopWaiting(token);
    }
    return (await signalled) as JsonValue;
  }

  private waiterFor(token: string): Waiter {
    const waiter = this.waiters.get(token);
    if (waiter !== undefined) return waiter;
    if (this.closedTokens.has(token)) throw new AwsJsonError('TaskTimedOut', 'Task Timed Out');
    throw new AwsJsonError('TaskDoesNotExist', 'Task Does Not Exist');
  }

  /** The token's wait is over: a later signal of it is told the task timed out. */
  private close(token: string): boolean {
    const waited = this.waiters.delete(token);
    if (waited) this.closedTokens.add(token);
    return waited;
  }

  private executionByArn = (arn: string) => [...this.executions.values()].find((candidate) => candidate.arn === arn);

  /** Ends an execution that only waits for its token: its task settles, so its timer goes too. */
  private stopWaiting(token: string): void {
    const waiter = this.waiters.get(token);
    if (waiter === undefined) return;
    const execution = this.executionByArn(waiter.execution);
    if (execution !== undefined && execution.status === 'RUNNING') {
      this.aborted.add(execution.name);
      execution.abort();
    }
    this.waiters.delete(token);
    waiter.reject(new TaskFailure('States.Aborted', 'The local Step Functions endpoint stopped.'));
  }

  /** Finished executions are kept for DescribeExecution, the oldest forgotten past a bound. */
  private forgetOldest(): void {
    if (this.executions.size <= maxExecutions) return;
    for (const [name, execution] of this.executions) {
      if (this.executions.size <= maxExecutions) break;
      if (execution.status === 'RUNNING') continue;
      this.executions.delete(name);
      this.aborted.delete(name);
    }
  }

  /** Follows a run to its end: the states it enters, how it ends, and its token's wait. */
  private async follow(record: LocalExecution, run: ReturnType<StateMachine['run']>): Promise<void> {
    const events = (async () => {
      for await (const event of run.eventLogs) {
        if (event.type === 'StateEntered') record.states.push(event.state.name);
        // The token's wait is over once its state fails or is caught (the approval time ran out).
        if (event.type === 'StateFailed' || event.type === 'StateCaught') this.close(record.token);
      }
    })();
    const aborted = () => this.aborted.has(record.name);
    try {
      const output = await run.result;
      record.status = aborted() ? 'ABORTED' : 'SUCCEEDED';
      if (!aborted()) record.output = JSON.stringify(output ?? null);
    } catch (error) {
      record.status = aborted() ? 'ABORTED' : 'FAILED';
      // The run's error wraps the state's: Step Functions reports the state's error and cause.
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      record.error = cause instanceof Error ? cause.name : 'Error';
      record.cause = errorText(cause);
      if (!aborted()) this.options.onError(`workflow ${record.name} failed`, error);
    } finally {
      record.stopDate = Date.now();
      this.close(record.token);
      await events.catch(() => undefined);
    }
  }
}

/** A task's parameters as the ASL's lambda:invoke tasks write them. */
const lambdaTaskInput = (input: unknown): { FunctionName: string; Payload: unknown } => {
  if (typeof input === 'object' && input !== null && 'FunctionName' in input && typeof input.FunctionName === 'string')
    return { FunctionName: input.FunctionName, Payload: 'Payload' in input ? input.Payload : undefined };
  throw new TaskFailure('States.Runtime', 'A task names no FunctionName.');
};
