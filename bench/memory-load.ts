// The local runtime's resident memory under a steady load of direct calls. The gateway runs as
// `npm start` runs it (infra/local/main.ts), in a process of its own with its own data folder on
// disk, so none of the bench's memory counts; the demo ERP runs here and forgets its calls as the
// load goes. The load comes in slices of a fixed concurrency, and after each slice the process is
// collected in full through the inspector, then its VmRSS is read from /proc and
// what JavaScript still reaches (heap in use plus external) from the process itself, so every
// sample pairs both with the calls made until then. The second is the gateway's share: the
// embedded store's native memory (LevelDB), which grows with the data kept, counts only in the first.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDemoErp } from '../examples/erp/server.js';
import { projectPath } from '../infra/paths.js';
import { directCallTarget } from './bed.js';
import { unlimitedDemo } from './demo-runtime.js';
import { InspectorSession, inspectorUrlIn } from './inspector.js';
import { LoadClient } from './load.js';
import { flatBytesPer10kCalls, growthPer10kCalls, type MemorySample } from './memory-growth.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { megabytes, perSecond } from './stats.js';

/** VmRSS of a process, in bytes, from /proc/<pid>/status (Linux). */
const residentBytes = async (pid: number): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kilobytes = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kilobytes === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kilobytes) * 1024;
};

/** A file's size, or 0 when it went between the listing and the look (the store compacts as it runs). */
const sizeOf = async (path: string): Promise<number> => {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
};

const folderBytes = async (folder: string): Promise<number> => {
  let total = 0;
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += await sizeOf(join(entry.parentPath, entry.name));
  }
  return total;
};

/**
 * The local runtime as `npm start` runs it, in a process of its own with the inspector open on
 * loopback (the only way in for collections and readings), the demo organization given, and its
 * store in `dataDir` (or in memory).
 */
export const spawnGateway = (options: { config: string; erpUrl: string; dataDir: string | 'memory' }): ChildProcess =>
  spawn(
    process.execPath,
    [
      '--inspect=127.0.0.1:0',
      '--import',
      'tsx',
      projectPath('infra/local/main.ts'),
      '--port',
      '0',
      '--grpc-port',
      '0',
      ...(options.dataDir === 'memory' ? ['--memory'] : ['--data-dir', options.dataDir]),
      '--config',
      options.config,
      '--no-demo-erp',
      '--no-demo-tools',
      '--no-demo-mcp',
    ],
    {
      cwd: projectPath(),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DEMO_ERP_URL: options.erpUrl,
        // Named by the demo configuration; nothing the load calls is on them.
        DEMO_CALL_TOOL_URL: 'http://127.0.0.1:9/tool/call-tool',
        DEMO_MCP_URL: 'http://127.0.0.1:9/mcp',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );

/** Waits for the gateway's banner; answers its base URL and its inspector's. */
export const startGateway = (child: ChildProcess): Promise<{ baseUrl: string; inspectorUrl: string }> =>
  new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the gateway did not start: ${output.slice(-500)}`)), 60_000);
    const collect = (chunk: Buffer) => {
      if (output.length < 64 * 1024) output += chunk.toString('utf8');
      const baseUrl = /MCP endpoint\s+(http:\/\/\S+)\/mcp/.exec(output)?.[1];
      const inspectorUrl = inspectorUrlIn(output);
      if (baseUrl !== undefined && inspectorUrl !== undefined) {
        clearTimeout(timer);
        resolve({ baseUrl, inspectorUrl });
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway stopped (${code}): ${output.slice(-500)}`));
    });
  });

/** Stops the gateway: a clean stop first, then at once; the process is gone when this resolves. */
const stopGateway = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
};

/** The gateway under measure, with what the load and the readings need of it. */
interface Bed {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly inspector: InspectorSession;
  readonly load: LoadClient;
  readonly target: ReturnType<typeof directCallTarget>;
  readonly erp: { reset(): void };
  readonly dataDir: string;
  readonly startRss: number;
}

/**
 * The demo ERP, the demo organization and the gateway in a process of its own on a fresh data
 * folder, its inspector open; each thing started leaves its closer in `closers`.
 */
const startMeasuredGateway = async (
  closers: (() => Promise<unknown>)[],
  spawned: (child: ChildProcess) => void,
): Promise<Bed> => {
  const folder = await mkdtemp(join(tmpdir(), 'gateway-bench-memory-'));
  closers.push(() => rm(folder, { recursive: true, force: true }));
  const erp = await startDemoErp({ port: 0 });
  closers.push(() => erp.close());
  const org = await unlimitedDemo();
  closers.push(org.remove);
  const dataDir = join(folder, 'data');
  const child = spawnGateway({ config: org.config, erpUrl: erp.url, dataDir });
  spawned(child);
  closers.push(() => stopGateway(child));
  const pid = child.pid;
  if (pid === undefined) throw new Error('the gateway process did not start');
  const { baseUrl, inspectorUrl } = await startGateway(child);
  const inspector = await InspectorSession.open(inspectorUrl);
  closers.push(async () => inspector.close());
  const startRss = await residentBytes(pid);
  const load = new LoadClient();
  closers.push(() => load.close());
  const target = directCallTarget('gateway (own process)', 'the local runtime as npm start runs it', baseUrl);
  return { child, pid, inspector, load, target, erp, dataDir, startRss };
};

interface Sampled {
  readonly samples: MemorySample[];
  readonly calls: number;
  readonly elapsedMs: number;
}

/** The load in slices, each followed by a full collection and both readings. */
const sampleUnderLoad = async (plan: Plan, bed: Bed): Promise<Sampled> => {
  const samples: MemorySample[] = [];
  let calls = 0;
  let failures = 0;
  let firstFailure: string | null = null;
  const started = performance.now();
  while (performance.now() - started < plan.memoryLoadMs) {
    const slice = Math.min(plan.memorySampleMs, plan.memoryLoadMs - (performance.now() - started));
    const result = await bed.load.run({
      kind: 'throughput',
      target: bed.target,
      connections: plan.memoryConnections,
      durationMs: Math.max(slice, 100),
    });
    bed.erp.reset();
    calls += result.completed;
    failures += result.failures;
    firstFailure ??= result.firstFailure;
    if (bed.child.exitCode !== null) throw new Error(`the gateway stopped during the load (${bed.child.exitCode})`);
    // Read after the collection, so the heap's garbage of the moment does not swing the resident size.
    const usage = await bed.inspector.memoryAfterCollection();
    const rssBytes = await residentBytes(bed.pid);
    samples.push({
      elapsedMs: performance.now() - started,
      calls,
      rssBytes,
      reachableBytes: usage.heapUsed + usage.external,
    });
  }
  const elapsedMs = performance.now() - started;
  if (failures > 0) line(`!! ${failures} bad answers; the first: ${firstFailure ?? ''}`);
  if (calls === 0) throw new Error('no call succeeded');
  return { samples, calls, elapsedMs };
};

/** The readings as a table and lines: at the start, after the warm-up, the peak, the end, the way. */
const printReadings = (plan: Plan, sampled: Sampled, startRss: number): void => {
  const { samples, calls, elapsedMs } = sampled;
  const warm = samples.find((sample) => sample.elapsedMs >= plan.memoryWarmupMs) ?? samples[0];
  const end = samples.at(-1);
  const peak = Math.max(...samples.map((sample) => sample.rssBytes));
  table([
    ['', 'resident (VmRSS)', 'JS heap + external after collection', 'calls made'],
    ['started, before any call', megabytes(startRss), '', '0'],
    [
      `after the warm-up (${plan.memoryWarmupMs / 1000} s)`,
      megabytes(warm?.rssBytes ?? Number.NaN),
      megabytes(warm?.reachableBytes ?? Number.NaN),
      String(warm?.calls ?? 0),
    ],
    ['peak', megabytes(peak), '', ''],
    ['at the end', megabytes(end?.rssBytes ?? Number.NaN), megabytes(end?.reachableBytes ?? Number.NaN), String(calls)],
  ]);
  line(
    `${calls} direct calls at ${plan.memoryConnections} in flight, ${perSecond((calls / elapsedMs) * 1000)}; ` +
      `both read after a full collection every ${plan.memorySampleMs / 1000} s (${samples.length} samples)`,
  );
  // The path between, at up to ten evenly spaced samples.
  const every = Math.max(1, Math.ceil(samples.length / 10));
  line(
    `on the way: ${samples
      .filter((_, index) => index % every === every - 1)
      .map((sample) => `${(sample.elapsedMs / 1000).toFixed(0)} s ${megabytes(sample.rssBytes, 0)}`)
      .join(', ')}`,
  );
};

/** The growth per 10 000 calls, said and judged; the store's share explained. */
const judgeGrowth = (plan: Plan, sampled: Sampled, diskBytes: number): Row[] => {
  const { samples, calls } = sampled;
  const warm = samples.find((sample) => sample.elapsedMs >= plan.memoryWarmupMs) ?? samples[0];
  const end = samples.at(-1);
  const growth = growthPer10kCalls(samples, plan.memoryLoadMs);
  const kept = growthPer10kCalls(samples, plan.memoryLoadMs, 'reachableBytes');
  const fitted = samples.filter((sample) => sample.elapsedMs >= plan.memoryLoadMs / 2);
  line(
    `growth per 10 000 calls: resident ${megabytes(growth, 2)}, JS heap + external ${megabytes(kept, 2)} ` +
      `(least-squares slopes over the ${fitted.length} samples of the second half, ` +
      `${(fitted.at(-1)?.calls ?? 0) - (fitted[0]?.calls ?? 0)} calls)`,
  );
  if (plan.name === 'quick') {
    line("(the quick run's load ends before the heap's warm-up ramp does: its growth is no judgement)");
  }
  line(
    `the store keeps every call on disk (${megabytes(diskBytes)} in the data folder now); its LevelDB works in ` +
      'native memory, outside the JS heap: a 4 MB write buffer (two while one is flushed), an 8 MB block cache, ' +
      'and the index of each open data file (up to 1000), which grows with the data kept. That, and the ' +
      "allocator's fragmentation from it, is resident growth the JS heap figure does not have; the store alone " +
      'under the same writes grows alike (bench/store-memory-probe.ts)',
  );
  return [
    {
      what: `memory the local runtime's JavaScript keeps under ${plan.memoryLoadMs / 1000} s of steady load`,
      measured:
        `${megabytes(warm?.reachableBytes ?? Number.NaN)} after warm-up → ${megabytes(end?.reachableBytes ?? Number.NaN)} ` +
        `at the end; ${megabytes(kept, 2)} per 10 000 calls (${calls} calls)`,
      target: `flat (growth per 10 000 calls ≤ ${megabytes(flatBytesPer10kCalls, 0)} after warm-up)`,
      mark: within(kept <= flatBytesPer10kCalls),
    },
    {
      what: '  resident memory (VmRSS), the embedded store included',
      measured:
        `${megabytes(warm?.rssBytes ?? Number.NaN)} after warm-up → ${megabytes(end?.rssBytes ?? Number.NaN)} at the end; ` +
        `${megabytes(growth, 2)} per 10 000 calls`,
      target: "reported (LevelDB's native memory grows with the data kept)",
      mark: 'info',
    },
  ];
};

export const memoryUnderLoad = async (plan: Plan): Promise<Row[]> => {
  heading(`Memory of the local runtime under ${plan.memoryLoadMs / 1000} s of steady direct calls`);
  const closers: (() => Promise<unknown>)[] = [];
  let gateway: ChildProcess | undefined;
  // However the bench ends (the watchdog exits the process), the gateway does not outlive it.
  const killOnExit = () => gateway?.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    const bed = await startMeasuredGateway(closers, (child) => {
      gateway = child;
    });
    const sampled = await sampleUnderLoad(plan, bed);
    const diskBytes = await folderBytes(join(bed.dataDir, 'dynamodb'));
    printReadings(plan, sampled, bed.startRss);
    return judgeGrowth(plan, sampled, diskBytes);
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    process.off('exit', killOnExit);
  }
};
