// `npx tsx bench/profile-gateway.ts [--held] [--seconds N] [--connections N] [--profile FILE]`: the
// gateway alone under load, for a CPU profile of its own work. It starts what the bench bed starts
// for the gateway (the demo ERP, the local runtime on dynalite with the unlimited demo organization)
// and no reference server; the load generator runs on its own thread, so the main thread's profile
// holds the gateway, its store and the ERP only. With --profile, the main thread is profiled over the
// measured window alone (not start-up, not warm-up) and the top self-time functions and module
// groups are printed; without it, `node --cpu-prof` (NODE_OPTIONS) records the whole process.
// --held: calls the policy holds, one connection at a time (at most 800, each open until decided).
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { type DemoErp, startDemoErp } from '../examples/erp/server.js';
import { directAmount, heldAmount, startRuntime, toolCall, unlimitedDemo } from './bed.js';
import { rejectOpenCalls } from './held-calls.js';
import { LoadClient, type Target } from './load.js';
import { median, ms, perSecond, quantile } from './stats.js';

/** One node of a V8 CPU profile (the fields read here). */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** Where a function's code lives, coarsely: a package, a project folder, or V8's own buckets. */
const moduleGroup = (url: string, functionName: string): string => {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage?.[1] !== undefined) return inPackage[1];
  const inProject = /\/(shared|functions|infra|examples|bench)\/((?:[^/]+\/)*)[^/]+$/.exec(url);
  if (inProject !== null) return `${inProject[1]}/${(inProject[2] ?? '').replace(/\/$/, '')}`.replace(/\/$/, '');
  return url;
};

const shortUrl = (url: string): string =>
  url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(?=shared|functions|infra|examples|bench)/, '');

/** Self time per function and per module group, in ms, largest first. */
export const summarize = (profile: CpuProfile, top = 25): string => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const functions = new Map<string, number>();
  const groups = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url === '' ? '' : `${shortUrl(url)}:${lineNumber + 1}`}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + micros);
    const group = moduleGroup(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + micros);
    total += micros;
  }
  const busy = total - (groups.get('(idle)') ?? 0);
  const rows = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([name, micros]) =>
          `  ${(micros / 1000).toFixed(1).padStart(9)} ms ${((micros / busy) * 100).toFixed(1).padStart(5)}%  ${name}`,
      )
      .join('\n');
  return [
    `profiled ${(total / 1000).toFixed(0)} ms, busy (not idle) ${(busy / 1000).toFixed(0)} ms; % of busy`,
    'module groups (self time):',
    rows(groups),
    'functions (self time):',
    rows(functions),
  ].join('\n');
};

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: {
      held: { type: 'boolean', default: false },
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '16' },
      profile: { type: 'string' },
      top: { type: 'string', default: '25' },
    },
    strict: true,
  });
  const durationMs = Number(values.seconds) * 1000;
  const connections = Number(values.connections);
  if (!(durationMs > 0) || !(connections >= 1)) throw new Error('--seconds and --connections take positive numbers');

  const closers: (() => Promise<void>)[] = [];
  try {
    const erp: DemoErp = await startDemoErp({ port: 0 });
    closers.push(() => erp.close());
    const org = await unlimitedDemo();
    closers.push(org.remove);
    const runtime = await startRuntime(org.config, erp.url);
    closers.push(() => runtime.stop());
    if (values.held) closers.push(async () => void (await rejectOpenCalls({ runtime })));
    const load = new LoadClient();
    closers.push(() => load.close());

    const amount = values.held ? heldAmount : directAmount;
    const target: Target = {
      name: values.held ? 'gateway (held)' : 'gateway',
      description: 'the local runtime',
      origin: runtime.baseUrl,
      path: '/mcp',
      ...toolCall(amount),
      expect: values.held ? '"status":"pending_approval"' : '"status":"succeeded"',
    };
    // Warm-up: JIT, caches, connections; untimed and unprofiled. Held calls stay open until decided,
    // and the agent may have 1000 waiting: they are rejected after the warm-up and bounded after it.
    if (values.held) {
      await load.run({ kind: 'latency', target, warmup: 0, count: 200 });
      await rejectOpenCalls({ runtime });
    } else await load.run({ kind: 'throughput', target, connections, durationMs: Math.min(3000, durationMs) });
    erp.reset();

    const session = values.profile === undefined ? null : new Session();
    if (session !== null) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    }
    // Held calls: latency mode, one connection, at most 800 calls (each stays open until decided).
    const latencyCount = Math.max(
      1,
      Math.min(values.held ? 800 : Number.POSITIVE_INFINITY, Math.round(durationMs / 4)),
    );
    // The main thread's own CPU time (not the load generator's, not other processes'): per call, it is
    // the figure a busy machine disturbs least.
    const cpuBefore = process.threadCpuUsage();
    const result =
      connections === 1 || values.held
        ? await load.run({ kind: 'latency', target, warmup: 0, count: latencyCount })
        : await load.run({ kind: 'throughput', target, connections, durationMs });
    const cpu = process.threadCpuUsage(cpuBefore);
    if (session !== null && values.profile !== undefined) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      await writeFile(values.profile, JSON.stringify(profile));
      process.stdout.write(`${summarize(profile as CpuProfile, Number(values.top))}\n`);
      process.stdout.write(`profile written to ${values.profile} (open it in Chrome DevTools or speedscope)\n`);
    }
    const completed = result.samples.length - result.failures;
    const elapsedMs = result.kind === 'throughput' ? result.elapsedMs : result.samples.reduce((a, b) => a + b, 0);
    process.stdout.write(
      `${target.name}, ${result.kind === 'latency' ? 1 : connections} connection(s): ${completed} calls, ${perSecond((completed / elapsedMs) * 1000)}, ` +
        `p50 ${ms(median(result.samples))}, p99 ${ms(quantile(result.samples, 0.99))}, ${result.failures} bad answers\n`,
    );
    const cpuMs = (cpu.user + cpu.system) / 1000;
    process.stdout.write(
      `main thread CPU: ${ms(cpuMs / Math.max(1, result.samples.length), 3)} per call (${cpuMs.toFixed(0)} ms in all` +
        `${session === null ? '' : ', the profiler included'})\n`,
    );
    if (result.firstFailure !== null) process.stdout.write(`first bad answer: ${result.firstFailure}\n`);
  } finally {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => undefined);
  }
};

await main();
