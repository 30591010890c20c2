// The local Step Functions endpoint: the Step Functions API calls the gateway's adapter makes
// (AWS JSON 1.0: StartExecution, SendTaskSuccess, SendTaskFailure, DescribeExecution), signed with
// the runtime's credential, answered by the local engine (step-functions-engine.ts), so the adapter
// is the same code here and in AWS.
import { createServer, type Server } from 'node:http';
import * as z from 'zod';
import { awsJsonHandler, type LocalAwsCredentials, newLocalAwsCredentials, parseAwsJson } from './aws-signature.js';
import { type Listening, listen } from './net.js';
import { type LocalFunction, LocalStateMachineEngine } from './step-functions-engine.js';

export type { LocalFunction } from './step-functions-engine.js';

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

const executionName = z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, 'names are 1 to 80 letters, digits, - or _');
const StartExecution = z.object({
  stateMachineArn: z.string(),
  name: executionName.optional(),
  input: z
    .string()
    .max(256 * 1024)
    .default('{}'),
});
const taskToken = z.string().min(1).max(2048);
const SendTaskSuccess = z.object({ taskToken, output: z.string().max(256 * 1024) });
const SendTaskFailure = z.object({
  taskToken,
  error: z.string().max(256).optional(),
  cause: z.string().max(32_768).optional(),
});
const DescribeExecution = z.object({ executionArn: z.string() });

export const startLocalStepFunctions = async (options: LocalStepFunctionsOptions): Promise<LocalStepFunctions> => {
  const engine = new LocalStateMachineEngine(options);
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const server = createServer(
    awsJsonHandler({
      credentials,
      targetPrefix: 'AWSStepFunctions.',
      contentType: 'application/x-amz-json-1.0',
      name: 'Step Functions endpoint',
      onFailure: (error) => options.onError('the local Step Functions endpoint failed', error),
      actions: {
        StartExecution: (body) => engine.start(parseAwsJson(StartExecution, body)),
        SendTaskSuccess: (body) => {
          const request = parseAwsJson(SendTaskSuccess, body);
          engine.succeed(request.taskToken, request.output);
          return {};
        },
        SendTaskFailure: (body) => {
          const request = parseAwsJson(SendTaskFailure, body);
          engine.fail(request.taskToken, request.error, request.cause);
          return {};
        },
        DescribeExecution: (body) => engine.describe(parseAwsJson(DescribeExecution, body).executionArn),
      },
    }),
  );
  const listening: Listening<Server> = await listen(server, options.host, options.port);
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    endpoint: `http://${host}:${listening.port}`,
    stateMachineArn: engine.stateMachineArn,
    credentials,
    statesEntered: (name) => engine.statesEntered(name),
    settled: () => engine.settled(),
    drain: () => engine.drain(),
    close: async () => {
      await engine.drain();
      await listening.close();
    },
  };
};
