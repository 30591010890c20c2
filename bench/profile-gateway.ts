// `npx tsx bench/profile-gateway.ts [--held] [--seconds N] [--connections N] [--profile FILE]`: the
// gateway alone under load, for a CPU profile of its own work. It starts what the bench bed starts
// for the gateway (the demo ERP, the local runtime on dynalite with the unlimited demo organization)
// and no reference server; the load generator runs on its own thread, so the main thread's profile
// holds the gateway, its store and the ERP only. With --profile, the main thread is profiled over the
// measured window alone (not start-up, not warm-up) and the top self-time functions and module
// groups are printed; without it, `node --cpu-prof` (NODE_OPTIONS) records the whole process.
// --held: calls the policy holds, each for another order, one connection at a time (at most 800, each
// open until decided).
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { type DemoErp, startDemoErp } from '../examples/erp/server.js';
import { directCallTarget, heldCallTarget } from './bed.js';
import { startRuntime, unlimitedDemo } from './demo-runtime.js';
import { rejectOpenCalls } from './held-calls.js';
import { LoadClient, type LoadResult, type Target } from './load.js';
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

/** The command line, checked. */
const optionsOf = () => {
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
  return { held: values.held, durationMs, connections, profile: values.profile, top: Number(values.top) };
};
type Options = ReturnType<typeof optionsOf>;

/**
 * The call under load: a direct purchase order, or one the policy holds, each held one for another
 * order (an identical call would join the one waiting, and the profile would time joins).
 */
const targetOf = (baseUrl: string, held: boolean): Target =>
  held
    ? heldCallTarget('gateway (held)', 'the local runtime', baseUrl)
    : directCallTarget('gateway', 'the local runtime', baseUrl);

/** The main thread's profiler, sampling every 200 µs, started; null without --profile. */
const startProfiler = async (profile: string | undefined): Promise<Session | null> => {
  const session = profile === undefined ? null : new Session();
  if (session !== null) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
  }
  return session;
};

const stopProfiler = async (session: Session | null, options: Options): Promise<void> => {
  if (session !== null && options.profile !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    await writeFile(options.profile, JSON.stringify(profile));
    process.stdout.write(`${summarize(profile as CpuProfile, options.top)}\n`);
    process.stdout.write(`profile written to ${options.profile} (open it in Chrome DevTools or speedscope)\n`);
  }
};

/** The calls made, their rate and latency, and the main thread's CPU per call. */
const report = (
  target: Target,
  result: LoadResult,
  cpu: NodeJS.CpuUsage,
  options: Options,
  profiled: boolean,
): void => {
  const completed = result.samples.length - result.failures;
  const elapsedMs = result.kind === 'throughput' ? result.elapsedMs : result.samples.reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${target.name}, ${result.kind === 'latency' ? 1 : options.connections} connection(s): ${completed} calls, ${perSecond((completed / elapsedMs) * 1000)}, ` +
      `p50 ${ms(median(result.samples))}, p99 ${ms(quantile(result.samples, 0.99))}, ${result.failures} bad answers\n`,
  );
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(
    `main thread CPU: ${ms(cpuMs / Math.max(1, result.samples.length), 3)} per call (${cpuMs.toFixed(0)} ms in all` +
      `${profiled ? ', the profiler included' : ''})\n`,
  );
  if (result.firstFailure !== null) process.stdout.write(`first bad answer: ${result.firstFailure}\n`);
};

/** The measured window: the load, profiled when asked, and the main thread's CPU over it. */
const measuredLoad = async (load: LoadClient, target: Target, options: Options): Promise<void> => {
  const { held, durationMs, connections } = options;
  const session = await startProfiler(options.profile);
  // Held calls: latency mode, one connection, at most 800 calls (each stays open until decided).
  const latencyCount = Math.max(1, Math.min(held ? 800 : Number.POSITIVE_INFINITY, Math.round(durationMs / 4)));
  // The main thread's own CPU time (not the load generator's, not other processes'): per call, it is
  // the figure a busy machine disturbs least.
  const cpuBefore = process.threadCpuUsage();
  const result =
    connections === 1 || held
      ? await load.run({ kind: 'latency', target, warmup: 0, count: latencyCount })
      : await load.run({ kind: 'throughput', target, connections, durationMs });
  const cpu = process.threadCpuUsage(cpuBefore);
  await stopProfiler(session, options);
  report(target, result, cpu, options, session !== null);
};

const main = async (): Promise<void> => {
  const options = optionsOf();
  const { held, durationMs, connections } = options;
  const closers: (() => Promise<void>)[] = [];
  try {
    const erp: DemoErp = await startDemoErp({ port: 0 });
    closers.push(() => erp.close());
    const org = await unlimitedDemo();
    closers.push(org.remove);
    const runtime = await startRuntime(org.config, erp.url);
    closers.push(() => runtime.stop());
    if (held) closers.push(async () => void (await rejectOpenCalls({ runtime })));
    const load = new LoadClient();
    closers.push(() => load.close());
    const target = targetOf(runtime.baseUrl, held);
    // Warm-up: JIT, caches, connections; untimed and unprofiled. Held calls stay open until decided,
    // and the agent may have 1000 waiting: they are rejected after the warm-up and bounded after it.
    if (held) {
      await load.run({ kind: 'latency', target, warmup: 0, count: 200 });
      await rejectOpenCalls({ runtime });
    } else await load.run({ kind: 'throughput', target, connections, durationMs: Math.min(3000, durationMs) });
    erp.reset();
    await measuredLoad(load, target, options);
  } finally {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => undefined);
  }
};

await main();
