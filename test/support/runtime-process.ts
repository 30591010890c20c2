// Runs `npm start`'s entry point as a real child process on free ports, the way a developer runs
// it, and reads the URLs it prints.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLocalAwsConfig } from '../../infra/local/aws-config-file.js';
import type { LocalAwsCredentials } from '../../infra/local/aws-signature.js';
import { projectPath } from '../../infra/paths.js';
import { startProcess } from './spawn.js';

export interface RuntimeProcess {
  readonly child: ChildProcess;
  readonly mcpUrl: string;
  readonly baseUrl: string;
  /** The gRPC tool gateway's address (host:port), from the banner. */
  readonly grpcAddress: string;
  readonly dynamodbEndpoint: string;
  readonly stepFunctionsEndpoint: string;
  /** The run's credential for its store and Step Functions endpoint, read from the file it wrote. */
  readonly awsCredentials: LocalAwsCredentials;
  /** That file: the data folder's `aws-config`, or (with --memory) one in a temporary folder. */
  readonly awsConfigFile: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /**
   * Sends a signal and waits for the process to exit (with `npmStart`, to its whole process group,
   * and waits until the runtime under npm has ended too).
   */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; output: string }>;
}

export interface RuntimeLaunch {
  /** @default 120_000 */
  readonly timeoutMs?: number;
  /** Runs `npm start` (the package's script, through npm) in a process group of its own. */
  readonly npmStart?: boolean;
}

export const demoTokens = {
  procurement: 'demo-procurement-token',
  support: 'demo-support-token',
} as const;

const runtimeCommand = (args: readonly string[], npmStart: boolean) =>
  npmStart
    ? { command: 'npm', args: ['start', '--silent', '--', ...args] }
    : { command: process.execPath, args: ['--import', 'tsx', projectPath('infra/local/main.ts'), ...args] };

export const startRuntimeProcess = (
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  { timeoutMs = 120_000, npmStart = false }: RuntimeLaunch = {},
): Promise<RuntimeProcess> => {
  // Where the runtime leaves its credential: the data folder's file, or one given (--memory keeps none).
  const given = args.indexOf('--aws-config-file');
  const dataDir = args.indexOf('--data-dir');
  let credentialsFolder: string | null = null;
  let awsConfigFile: string;
  if (given >= 0) awsConfigFile = args[given + 1] ?? '';
  else if (args.includes('--memory')) {
    credentialsFolder = mkdtempSync(join(tmpdir(), 'gateway-aws-'));
    awsConfigFile = join(credentialsFolder, 'aws-config');
  } else awsConfigFile = join(dataDir >= 0 ? (args[dataDir + 1] ?? '') : projectPath('.gateway-data'), 'aws-config');
  const { command, args: argv } = runtimeCommand(
    [
      '--port',
      '0',
      '--erp-port',
      '0',
      '--demo-tools-port',
      '0',
      '--demo-mcp-port',
      '0',
      '--grpc-port',
      '0',
      ...args,
      ...(credentialsFolder === null ? [] : ['--aws-config-file', awsConfigFile]),
    ],
    npmStart,
  );
  const running = startProcess(command, argv, {
    cwd: projectPath(),
    env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'WARN', ...env },
    detached: npmStart,
  });
  const { child, output } = running;
  // Under npm the runtime is npm's grandchild: it has ended once the output it shares is closed.
  const exited = (npmStart ? running.finished : running.exit).then(({ code }) => code);
  void exited.then(() =>
    credentialsFolder === null ? undefined : rm(credentialsFolder, { recursive: true, force: true }),
  );

  const send = (signal: NodeJS.Signals) => {
    if (!npmStart || child.pid === undefined) {
      if (child.exitCode === null) child.kill(signal);
      return;
    }
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group has ended already.
    }
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      send('SIGKILL');
      reject(new Error(`The runtime did not start within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    const check = () => {
      const mcp = /MCP endpoint\s+(\S+)/.exec(output())?.[1];
      const store = /Store\s+(\S+)/.exec(output())?.[1];
      const grpcAddress = /gRPC gateway\s+(\S+)/.exec(output())?.[1];
      if (mcp === undefined || store === undefined || grpcAddress === undefined || !output().includes('Press Ctrl-C'))
        return;
      clearTimeout(timer);
      child.stdout?.off('data', check);
      const stop = async (signal: NodeJS.Signals = 'SIGINT') => {
        send(signal);
        return { code: await exited, output: output() };
      };
      readLocalAwsConfig(awsConfigFile).then(
        (aws) =>
          resolve({
            child,
            mcpUrl: mcp,
            baseUrl: mcp.replace(/\/mcp$/, ''),
            grpcAddress,
            dynamodbEndpoint: store,
            stepFunctionsEndpoint: aws.stepFunctionsEndpoint,
            awsCredentials: aws.credentials,
            awsConfigFile,
            output,
            stop,
          }),
        async (error: unknown) => {
          await stop('SIGKILL');
          reject(error);
        },
      );
    };
    child.stdout?.on('data', check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`The runtime exited with code ${code} before it was ready:\n${output()}`));
    });
  });
};

/** A temporary data folder, removed by the returned cleanup. */
export const temporaryFolder = async (prefix: string): Promise<{ path: string; remove(): Promise<void> }> => {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
};
