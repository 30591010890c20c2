// Runs a program as a child process and collects what it prints: the one way tests start the
// project's scripts, the local runtime and the conformance suite.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface SpawnOptions {
  readonly cwd?: string;
  /** The whole environment of the child (not merged with this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** Written to the child's standard input, which is then closed; without it the child reads end of input at once. */
  readonly stdin?: string | Buffer;
  /** After this long the child is killed (SIGKILL) and the result says it timed out. */
  readonly timeoutMs?: number;
  /** Starts the child in a process group of its own (its pid is the group's id), as a service manager would. */
  readonly detached?: boolean;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface CollectedRun extends ProcessExit {
  readonly stdout: string;
  readonly stderr: string;
  /** Standard output and standard error interleaved, in the order they arrived. */
  readonly output: string;
  readonly timedOut: boolean;
}

export interface RunningProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything printed so far, as in CollectedRun. */
  stdout(): string;
  stderr(): string;
  output(): string;
  /** Settles when the process exits (its output may still be arriving). */
  readonly exit: Promise<ProcessExit>;
  /** Settles once the process has exited and its output streams have closed; rejects when it could not start. */
  readonly finished: Promise<CollectedRun>;
}

/** Starts a program and collects its output as it runs. */
export const startProcess = (command: string, args: readonly string[], options: SpawnOptions = {}): RunningProcess => {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: 'pipe', detached: options.detached });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stdout += text;
    output += text;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stderr += text;
    output += text;
  });
  // A child that exits before reading its input closes the pipe; that is its business, not an error here.
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin ?? '');
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, options.timeoutMs);
  const exit = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const finished = new Promise<CollectedRun>((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, output, timedOut });
    });
  });
  // A caller that only watches `exit` still must not see an unhandled rejection.
  finished.catch(() => undefined);
  return { child, stdout: () => stdout, stderr: () => stderr, output: () => output, exit, finished };
};

/** Runs a program to its end: its exit code or signal, and everything it printed. */
export const runProcess = (
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<CollectedRun> => startProcess(command, args, options).finished;
