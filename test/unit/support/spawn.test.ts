// The tests' one way to run a program: what it printed, how it ended, its input, and a time limit.
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../support/spawn.js';

const node = (script: string, options: Parameters<typeof runProcess>[2] = {}) =>
  runProcess(process.execPath, ['-e', script], options);

describe('running a program from a test', () => {
  it('collects standard output and error apart and together, with the exit code', async () => {
    const run = await node('process.stdout.write("out"); process.stderr.write("err"); process.exitCode = 3');
    expect(run).toMatchObject({ code: 3, signal: null, stdout: 'out', stderr: 'err', timedOut: false });
    expect(run.output.split('').sort().join('')).toBe('eorrtu');
  });

  it('feeds the given input and then ends it; without input the program reads end of input', async () => {
    const echo =
      'let s = ""; process.stdin.on("data", (c) => { s += c; }); process.stdin.on("end", () => process.stdout.write(`[${s}]`));';
    expect((await node(echo, { stdin: 'hello' })).stdout).toBe('[hello]');
    expect((await node(echo)).stdout).toBe('[]');
  });

  it('kills a program that outlives its time limit and says so', async () => {
    const run = await node('setTimeout(() => undefined, 60_000)', { timeoutMs: 200 });
    expect(run).toMatchObject({ code: null, signal: 'SIGKILL', timedOut: true });
  });

  it('rejects when the program cannot be started', async () => {
    await expect(runProcess('/nonexistent/program', [])).rejects.toThrow(/ENOENT/);
  });
});
