// The local Step Functions endpoint: runs the repo's ASL document with aws-local-stepfunctions and
// answers the Step Functions API calls the gateway's adapter makes (AWS JSON 1.0 protocol), so the
// adapter is the same code here and in AWS. Task states invoke the local functions by ARN; a
// `.waitForTaskToken` task waits until SendTaskSuccess (or SendTaskFailure) names its token.
//
// Long: the Step Functions API front (five actions, AWS error names) and the run bookkeeping it
// answers from are one state; split, each half would export its internals to the other.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type RunOptions, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import * as z from 'zod';
import {
  BodyTooLargeError,
  isSignedBy,
  type LocalAwsCredentials,
  newLocalAwsCredentials,
  readRequestBody,
  refuseUnsigned,
} from './aws-signature.js';
import { type Listening, listen } from './net.js';

/** A local Lambda function as a task calls it: the payload in, the function's result out. */
export type LocalFunction = (payload: unknown) => Promise<unknown>;

export interface LocalStepFunctionsOptions {
  readonly host: string;
  readonly port: number;
  readonly stateMachineName: string;
  readonly definition: unknown;
  /** The functions tasks may invoke, by the ARN the definition names. */
  readonly functions: ReadonlyMap<string, LocalFunction>;
  readonly onError: (message: string, error: unknown) => void;
  /** The credential requests must be signed with. @default a fresh credential for this endpoint */
  readonly credentials?: LocalAwsCredentials;
}

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

export interface LocalStepFunctions {
  readonly endpoint: string;
  readonly stateMachineArn: string;
  /** The credential requests must be signed with: anything else is refused. */
  readonly credentials: LocalAwsCredentials;
  /** The states an execution entered so far (tests count transitions with it). */
  statesEntered(name: string): readonly string[];
  /** Resolves when no execution is running any more. */
  settled(): Promise<void>;
  /** Stops waiting executions and lets the others finish the step they are in (see `close`). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** An error raised by a task: Step Functions names it by the error's name, as a Lambda's errorType. */
class TaskFailure extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** A task's parameters as the ASL's lambda:invoke tasks write them. */
const LambdaTaskInput = z.object({ FunctionName: z.string(), Payload: z.unknown() });

const executionName = z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, 'names are 1 to 80 letters, digits, - or _');
const StartExecution = z.object({
  stateMachineArn: z.string(),
  name: executionName.optional(),
  input: z
    .string()
    .max(256 * 1024)
    .default('{}'),
});
const SendTaskSuccess = z.object({ taskToken: z.string().min(1).max(2048), output: z.string().max(256 * 1024) });
const SendTaskFailure = z.object({
  taskToken: z.string().min(1).max(2048),
  error: z.string().max(256).optional(),
  cause: z.string().max(32_768).optional(),
});
const DescribeExecution = z.object({ executionArn: z.string() });

/** Reads the body and checks its signature: an unsigned request learns nothing and changes nothing. */
const readSignedJson = async (
  request: IncomingMessage,
  credentials: LocalAwsCredentials,
): Promise<{ signed: false } | { signed: true; body: unknown }> => {
  let raw: Buffer;
  try {
    raw = await readRequestBody(request, 1024 * 1024);
  } catch (error) {
    request.destroy();
    if (error instanceof BodyTooLargeError)
      throw new ApiError('ValidationException', 'The request is larger than 1 MB.');
    throw error;
  }
  if (!(await isSignedBy(credentials, request, raw))) return { signed: false };
  try {
    return { signed: true, body: raw.length === 0 ? {} : JSON.parse(raw.toString('utf8')) };
  } catch {
    throw new ApiError('SerializationException', 'The request body is not JSON.');
  }
};

const parse = <S extends z.ZodType>(schema: S, body: unknown): z.infer<S> => {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ApiError('ValidationException', `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid request'}`);
};

const epochSeconds = (ms: number): number => ms / 1000;

/** How many executions the endpoint remembers (running ones are never forgotten). */
const maxExecutions = 10_000;

export const startLocalStepFunctions = async (options: LocalStepFunctionsOptions): Promise<LocalStepFunctions> => {
  const region = 'local';
  const account = '000000000000';
  const stateMachineArn = `arn:aws:states:${region}:${account}:stateMachine:${options.stateMachineName}`;
  const definition = options.definition as StateMachineDefinition;
  const machine = new StateMachine(definition);
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const executions = new Map<string, LocalExecution>();
  const waiters = new Map<string, Waiter>();
  /** Tokens whose wait ended without a signal (timed out, or the execution stopped). */
  const closedTokens = new Set<string>();

  // Each Task state runs its function locally; the wait-for-token pattern waits on its token.
  const taskHandlers = (token: string, executionArn: string): TaskHandlers =>
    Object.fromEntries(
      Object.entries(definition.States)
        .filter(([, state]) => state.Type === 'Task')
        .map(([name, state]) => {
          const resource = 'Resource' in state ? String(state.Resource) : '';
          const waits = resource.endsWith('.waitForTaskToken');
          return [
            name,
            async (input: JsonValue): Promise<JsonValue> => {
              const { FunctionName, Payload } = LambdaTaskInput.parse(input);
              const fn = options.functions.get(FunctionName);
              if (fn === undefined)
                throw new TaskFailure('Lambda.ResourceNotFoundException', `No function ${FunctionName}.`);
              if (!waits) {
                const result = (await fn(Payload)) ?? null;
                return { StatusCode: 200, ExecutedVersion: '$LATEST', Payload: result as JsonValue };
              }
              // The waiter exists before the function runs: it may hand the decision back itself.
              const signalled = new Promise<unknown>((resolve, reject) => {
                closedTokens.delete(token);
                waiters.set(token, { execution: executionArn, registered: false, resolve, reject });
              });
              try {
                await fn(Payload);
              } catch (error) {
                waiters.delete(token);
                throw error;
              }
              const waiter = waiters.get(token);
              if (waiter !== undefined) {
                waiter.registered = true;
                // Stopping: a wait that has just begun ends here (the call resumes at the next start).
                if (stopping) stopWaiting(token);
              }
              return (await signalled) as JsonValue;
            },
          ];
        }),
    );

  const aborted = new Set<string>();
  let stopping = false;

  /** Ends an execution that only waits for its token: its task settles, so its timer goes too. */
  const stopWaiting = (token: string) => {
    const waiter = waiters.get(token);
    if (waiter === undefined) return;
    const execution = [...executions.values()].find((candidate) => candidate.arn === waiter.execution);
    if (execution !== undefined && execution.status === 'RUNNING') {
      aborted.add(execution.name);
      execution.abort();
    }
    waiters.delete(token);
    waiter.reject(new TaskFailure('States.Aborted', 'The local Step Functions endpoint stopped.'));
  };

  /** Finished executions are kept for DescribeExecution, the oldest forgotten past a bound. */
  const forgetOldest = () => {
    if (executions.size <= maxExecutions) return;
    for (const [name, execution] of executions) {
      if (executions.size <= maxExecutions) break;
      if (execution.status === 'RUNNING') continue;
      executions.delete(name);
      aborted.delete(name);
    }
  };

  /** Follows a run to its end: the states it enters, how it ends, and its token's wait. */
  const follow = async (record: LocalExecution, run: ReturnType<typeof machine.run>): Promise<void> => {
    const events = (async () => {
      for await (const event of run.eventLogs) {
        if (event.type === 'StateEntered') record.states.push(event.state.name);
        // The token's wait is over once its state fails or is caught (the approval time ran out).
        if ((event.type === 'StateFailed' || event.type === 'StateCaught') && waiters.delete(record.token)) {
          closedTokens.add(record.token);
        }
      }
    })();
    try {
      const output = await run.result;
      if (aborted.has(record.name)) record.status = 'ABORTED';
      else {
        record.status = 'SUCCEEDED';
        record.output = JSON.stringify(output ?? null);
      }
    } catch (error) {
      record.status = aborted.has(record.name) ? 'ABORTED' : 'FAILED';
      // The run's error wraps the state's: Step Functions reports the state's error and cause.
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      record.error = cause instanceof Error ? cause.name : 'Error';
      record.cause = cause instanceof Error ? cause.message : String(cause);
      if (!aborted.has(record.name)) options.onError(`workflow ${record.name} failed`, error);
    } finally {
      record.stopDate = Date.now();
      if (waiters.delete(record.token)) closedTokens.add(record.token);
      await events.catch(() => undefined);
    }
  };

  const start = (body: z.infer<typeof StartExecution>) => {
    if (body.stateMachineArn !== stateMachineArn) {
      throw new ApiError('StateMachineDoesNotExist', `State machine does not exist: '${body.stateMachineArn}'`);
    }
    const name = body.name ?? randomBytes(16).toString('hex');
    const existing = executions.get(name);
    if (existing !== undefined) {
      // The same name and input while it runs is the same request: Step Functions answers it again.
      if (existing.status === 'RUNNING' && existing.input === body.input) {
        return { executionArn: existing.arn, startDate: epochSeconds(existing.startDate) };
      }
      throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.arn}'`);
    }
    let input: unknown;
    try {
      input = JSON.parse(body.input);
    } catch {
      throw new ApiError('InvalidExecutionInput', 'The input is not valid JSON.');
    }
    const arn = `arn:aws:states:${region}:${account}:execution:${options.stateMachineName}:${name}`;
    const token = randomBytes(96).toString('base64url');
    const startDate = Date.now();
    const run = machine.run(input as Parameters<typeof machine.run>[0], {
      overrides: { taskResourceLocalHandlers: taskHandlers(token, arn) },
      context: {
        Execution: { Id: arn, Name: name, Input: input as never, StartTime: new Date(startDate).toISOString() },
        StateMachine: { Id: stateMachineArn, Name: options.stateMachineName },
        Task: { Token: token },
      },
      noThrowOnAbort: true,
    });
    const record: LocalExecution = {
      arn,
      name,
      input: body.input,
      startDate,
      token,
      status: 'RUNNING',
      states: [],
      abort: () => run.abort(),
      done: Promise.resolve(),
    };
    record.done = follow(record, run);
    executions.set(name, record);
    forgetOldest();
    return { executionArn: arn, startDate: epochSeconds(startDate) };
  };

  const waiterFor = (token: string): Waiter => {
    const waiter = waiters.get(token);
    if (waiter !== undefined) return waiter;
    if (closedTokens.has(token)) throw new ApiError('TaskTimedOut', 'Task Timed Out');
    throw new ApiError('TaskDoesNotExist', 'Task Does Not Exist');
  };

  const operations: Record<string, (body: unknown) => unknown> = {
    StartExecution: (body) => start(parse(StartExecution, body)),
    SendTaskSuccess: (body) => {
      const request = parse(SendTaskSuccess, body);
      const waiter = waiterFor(request.taskToken);
      let output: unknown;
      try {
        output = JSON.parse(request.output);
      } catch {
        throw new ApiError('InvalidOutput', 'The output is not valid JSON.');
      }
      waiters.delete(request.taskToken);
      closedTokens.add(request.taskToken);
      waiter.resolve(output);
      return {};
    },
    SendTaskFailure: (body) => {
      const request = parse(SendTaskFailure, body);
      const waiter = waiterFor(request.taskToken);
      waiters.delete(request.taskToken);
      closedTokens.add(request.taskToken);
      waiter.reject(new TaskFailure(request.error ?? 'States.TaskFailed', request.cause ?? ''));
      return {};
    },
    DescribeExecution: (body) => {
      const { executionArn } = parse(DescribeExecution, body);
      const execution = [...executions.values()].find((candidate) => candidate.arn === executionArn);
      if (execution === undefined)
        throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
      return {
        executionArn: execution.arn,
        stateMachineArn,
        name: execution.name,
        status: execution.status,
        startDate: epochSeconds(execution.startDate),
        ...(execution.stopDate === undefined ? {} : { stopDate: epochSeconds(execution.stopDate) }),
        input: execution.input,
        ...(execution.output === undefined ? {} : { output: execution.output }),
        ...(execution.error === undefined ? {} : { error: execution.error, cause: execution.cause }),
      };
    },
  };

  const answer = (response: ServerResponse, status: number, body: unknown, errorType?: string) => {
    response.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      ...(errorType === undefined ? {} : { 'x-amzn-errortype': errorType }),
      'x-amzn-requestid': randomBytes(16).toString('hex'),
    });
    response.end(JSON.stringify(body));
  };

  const server = createServer((request, response) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('AWSStepFunctions.') ? operations[target.slice(17)] : undefined;
    (async () => {
      const read = await readSignedJson(request, credentials);
      if (!read.signed) {
        refuseUnsigned(response);
        return;
      }
      if (request.method !== 'POST' || operation === undefined) {
        throw new ApiError('UnknownOperationException', `The local endpoint does not answer '${target}'.`);
      }
      answer(response, 200, operation(read.body));
    })().catch((error: unknown) => {
      if (error instanceof ApiError) {
        answer(response, 400, { __type: error.type, message: error.message }, error.type);
        return;
      }
      options.onError('the local Step Functions endpoint failed', error);
      answer(response, 500, { __type: 'InternalFailure', message: 'internal failure' }, 'InternalFailure');
    });
  });
  const listening: Listening<Server> = await listen(server, options.host, options.port);
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;

  /**
   * A clean stop: executions that only wait for a decision stop (they resume at the next start,
   * with their remaining time); an execution in the middle of a step (an approved call being sent,
   * an expiry, a token being recorded) finishes that step first, so its outcome is recorded.
   */
  const drain = async () => {
    stopping = true;
    for (const [token, waiter] of waiters) if (waiter.registered) stopWaiting(token);
    await Promise.all([...executions.values()].map((execution) => execution.done));
  };

  const settled = async () => {
    for (;;) {
      const running = [...executions.values()].filter((execution) => execution.status === 'RUNNING');
      if (running.length === 0) return;
      await Promise.all(running.map((execution) => execution.done));
    }
  };

  return {
    endpoint: `http://${host}:${listening.port}`,
    stateMachineArn,
    credentials,
    statesEntered: (name) => executions.get(name)?.states ?? [],
    settled,
    drain,
    close: async () => {
      await drain();
      await listening.close();
    },
  };
};
