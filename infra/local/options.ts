// The local runtime's options, from command-line flags and GATEWAY_* environment variables (a
// flag wins). This is the only place the local runtime reads the process environment.
import { parseArgs } from 'node:util';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import * as z from 'zod';
import { errorText } from '../../shared/errors.js';
import { isLoopback } from './net.js';

/** Where the local gateway keeps its store, keys and lists when no folder is named. */
export const defaultDataDir = '.gateway-data';
/** The configuration the local gateway and the commands read when none is named: the demo's. */
export const defaultConfigFile = 'examples/gateway.config.yaml';
/** The local gateway's HTTP port when none is named. */
export const defaultPort = 8787;

const portNumber = z
  .string()
  .trim()
  .regex(/^\d+$/, 'expected a port number from 0 to 65535')
  .transform(Number)
  .pipe(z.number().int().max(65_535, 'expected a port number from 0 to 65535'));

export const LocalOptions = z
  .object({
    // IPv6 addresses are written bare (::1), as the socket API takes them.
    host: z
      .string()
      .min(1)
      .regex(/^[^[\]]+$/, 'write IPv6 addresses without brackets, e.g. ::1')
      .default('127.0.0.1'),
    port: portNumber.default(defaultPort),
    dynamodbPort: portNumber.default(0),
    stepFunctionsPort: portNumber.default(0),
    dataDir: z.string().min(1).default(defaultDataDir),
    memory: z.boolean().default(false),
    /** Where the per-run credential of the store and Step Functions endpoints is written (null: the data folder's). */
    awsConfigFile: z.string().min(1).nullable().default(null),
    config: z.string().min(1).default(defaultConfigFile),
    anonymousAgent: z.string().min(1).nullable().default(null),
    demoErp: z.boolean().default(true),
    /**
     * Start the demo MCP server (the reference server, server-everything) and name it in DEMO_MCP_URL.
     * The command line turns it on unless told otherwise; a runtime composed in code asks for it.
     */
    demoMcp: z.boolean().default(false),
    demoMcpPort: portNumber.default(8791),
    /**
     * Fault injection for tests: kill the process at this step of a call, or (`between-index-and-record`)
     * inside the store, when a call has left the index of open calls and its record is not yet written.
     */
    crashAt: z.enum(['decided', 'claimed', 'answered', 'between-index-and-record']).nullable().default(null),
    erpPort: portNumber.default(8788),
    /** The demo call-tool proxy (examples/call-tool-proxy/), in front of the MCP example server. */
    demoTools: z.boolean().default(true),
    demoToolsPort: portNumber.default(8790),
    /** The gRPC tool gateway's port (shared/edge/grpc/). */
    grpcPort: portNumber.default(8789),
    /** How long a /tool/call-tool connection may wait for its params (GATEWAY_CHANNEL_PARAMS_WAIT_MS, for tests). */
    channelParamsWaitMs: z
      .string()
      .regex(/^\d+$/, 'expected a number of milliseconds')
      .transform(Number)
      .pipe(z.number().int().min(1).max(600_000))
      .default(10_000),
    /** What the runtime logs; metric lines count as info (metric-lines.ts). */
    logLevel: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['debug', 'info', 'warn', 'error', 'silent'], 'expected debug, info, warn, error or silent'))
      .default('info'),
  })
  .superRefine((options, context) => {
    if (options.anonymousAgent !== null && !isLoopback(options.host)) {
      context.addIssue({
        code: 'custom',
        path: ['anonymousAgent'],
        message: `--anonymous-agent is for local testing only and is refused when binding to ${options.host}`,
      });
    }
  });
export type LocalOptions = z.output<typeof LocalOptions>;

export const usage = `Usage: npm start -- [options]

  --host <address>          bind address (GATEWAY_HOST, default 127.0.0.1)
  --port <n>                HTTP port (GATEWAY_PORT, default 8787; 0 picks a free one)
  --dynamodb-port <n>       embedded DynamoDB port (GATEWAY_DYNAMODB_PORT, default 0 = any free port)
  --sfn-port <n>            local Step Functions endpoint port (GATEWAY_SFN_PORT, default 0 = any free port)
  --data-dir <folder>       where the store keeps its data (GATEWAY_DATA_DIR, default .gateway-data)
  --memory                  keep everything in memory and nothing on disk: gone when it stops; grows
                            with every call, about 5 KB each (GATEWAY_MEMORY=1)
  --aws-config-file <file>  where to write the per-run credential of the store and Step Functions
                            endpoints, as an AWS config file (GATEWAY_AWS_CONFIG_FILE, default
                            <data-dir>/aws-config; with --memory, only when given)
  --config <file>           gateway configuration (GATEWAY_CONFIG, default examples/gateway.config.yaml)
  --anonymous-agent <id>    treat requests without a token as this agent; loopback only, for
                            conformance runs (GATEWAY_ANONYMOUS_AGENT)
  --erp-port <n>            port of the demo ERP (GATEWAY_ERP_PORT, default 8788; 0 = any free port)
  --grpc-port <n>           gRPC tool gateway port (GATEWAY_GRPC_PORT, default 8789; 0 = any free port)
  --no-demo-erp             do not start the demo ERP (GATEWAY_DEMO_ERP=0)
  --demo-tools-port <n>     port of the demo call-tool proxy (GATEWAY_DEMO_TOOLS_PORT, default 8790;
                            0 = any free port)
  --no-demo-tools           do not start the demo call-tool proxy (GATEWAY_DEMO_TOOLS=0)
  --demo-mcp-port <n>       port of the demo MCP server (GATEWAY_DEMO_MCP_PORT, default 8791; 0 = any free port)
  --no-demo-mcp             do not start the demo MCP server (GATEWAY_DEMO_MCP=0)
  --log-level <level>       debug, info, warn, error or silent (GATEWAY_LOG_LEVEL, default info); the
                            metric lines are info: written at debug and info only, to the data
                            folder's metrics.jsonl (on standard output at debug)
  --help                    show this text
`;

export type ParsedOptions =
  | { kind: 'run'; options: LocalOptions }
  | { kind: 'help' }
  | { kind: 'error'; message: string };

const parseFlags = (args: string[]) =>
  parseArgs({
    args,
    strict: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'dynamodb-port': { type: 'string' },
      'sfn-port': { type: 'string' },
      'data-dir': { type: 'string' },
      memory: { type: 'boolean' },
      'aws-config-file': { type: 'string' },
      config: { type: 'string' },
      'anonymous-agent': { type: 'string' },
      'erp-port': { type: 'string' },
      'grpc-port': { type: 'string' },
      'no-demo-erp': { type: 'boolean' },
      'demo-tools-port': { type: 'string' },
      'no-demo-tools': { type: 'boolean' },
      'demo-mcp-port': { type: 'string' },
      'no-demo-mcp': { type: 'boolean' },
      'log-level': { type: 'string' },
      help: { type: 'boolean' },
    },
  });

export const parseLocalOptions = (
  argv: readonly string[],
  environment: Readonly<Record<string, string | undefined>>,
): ParsedOptions => {
  let values: ReturnType<typeof parseFlags>['values'];
  try {
    values = parseFlags([...argv]).values;
  } catch (error) {
    return { kind: 'error', message: errorText(error) };
  }
  if (values.help) return { kind: 'help' };
  const flagOrEnv = (flag: string | undefined, name: string): string | undefined =>
    flag ?? (environment[name] === '' ? undefined : environment[name]);
  const parsed = LocalOptions.safeParse({
    host: flagOrEnv(values.host, 'GATEWAY_HOST'),
    port: flagOrEnv(values.port, 'GATEWAY_PORT'),
    dynamodbPort: flagOrEnv(values['dynamodb-port'], 'GATEWAY_DYNAMODB_PORT'),
    stepFunctionsPort: flagOrEnv(values['sfn-port'], 'GATEWAY_SFN_PORT'),
    dataDir: flagOrEnv(values['data-dir'], 'GATEWAY_DATA_DIR'),
    memory: values.memory ?? ['1', 'true'].includes(environment.GATEWAY_MEMORY ?? ''),
    awsConfigFile: flagOrEnv(values['aws-config-file'], 'GATEWAY_AWS_CONFIG_FILE') ?? null,
    config: flagOrEnv(values.config, 'GATEWAY_CONFIG'),
    anonymousAgent: flagOrEnv(values['anonymous-agent'], 'GATEWAY_ANONYMOUS_AGENT') ?? null,
    demoErp: values['no-demo-erp'] === true ? false : !['0', 'false'].includes(environment.GATEWAY_DEMO_ERP ?? ''),
    erpPort: flagOrEnv(values['erp-port'], 'GATEWAY_ERP_PORT'),
    demoTools:
      values['no-demo-tools'] === true ? false : !['0', 'false'].includes(environment.GATEWAY_DEMO_TOOLS ?? ''),
    demoToolsPort: flagOrEnv(values['demo-tools-port'], 'GATEWAY_DEMO_TOOLS_PORT'),
    demoMcp: values['no-demo-mcp'] === true ? false : !['0', 'false'].includes(environment.GATEWAY_DEMO_MCP ?? ''),
    demoMcpPort: flagOrEnv(values['demo-mcp-port'], 'GATEWAY_DEMO_MCP_PORT'),
    grpcPort: flagOrEnv(values['grpc-port'], 'GATEWAY_GRPC_PORT'),
    logLevel: flagOrEnv(values['log-level'], 'GATEWAY_LOG_LEVEL'),
    channelParamsWaitMs: flagOrEnv(undefined, 'GATEWAY_CHANNEL_PARAMS_WAIT_MS'),
    crashAt:
      environment.GATEWAY_CRASH_AT === undefined || environment.GATEWAY_CRASH_AT === ''
        ? null
        : environment.GATEWAY_CRASH_AT,
  });
  if (!parsed.success) {
    return {
      kind: 'error',
      message: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n'),
    };
  }
  return { kind: 'run', options: parsed.data };
};

const powertoolsLevels = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', silent: 'SILENT' } as const;

/** The option's level as the logger takes it. */
export const logLevelOf = (level: LocalOptions['logLevel']): LogLevel => powertoolsLevels[level];
