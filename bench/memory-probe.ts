// Where the local runtime's memory goes under steady load: the gateway runs as `npm start` runs it,
// in its own process, with the inspector open; after a warm-up, every slice of load is followed by
// a full collection and a reading of process.memoryUsage() (heap, external, array buffers, resident),
// and heap snapshots are taken at the marks asked for. Not part of `npm run bench`: run it by hand,
// `npx tsx bench/memory-probe.ts [--memory] [warm-up s] [load s] [snapshot folder]`; with --memory
// the store is the in-memory one (its data in the JS heap), without LevelDB.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDemoErp } from '../examples/erp/server.js';
import { projectPath } from '../infra/paths.js';
import { directCallTarget, unlimitedDemo } from './bed.js';
import { InspectorSession, inspectorUrlIn } from './inspector.js';
import { LoadClient } from './load.js';

const inMemory = process.argv.includes('--memory');
const [warmupArg, loadArg, snapshotFolder] = process.argv.slice(2).filter((arg) => arg !== '--memory');
const warmupS = Number(warmupArg ?? 40);
const loadS = Number(loadArg ?? 120);
const sliceMs = 10_000;

const startGateway = (child: ChildProcess): Promise<{ baseUrl: string; inspectorUrl: string }> =>
  new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no start: ${output.slice(-500)}`)), 60_000);
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
  });

/** The resident set by kind, from /proc/<pid>/status: anonymous memory, file-backed pages mapped, shared. */
const residentKinds = async (pid: number): Promise<Record<string, number>> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kinds: Record<string, number> = {};
  for (const kind of ['RssAnon', 'RssFile', 'RssShmem']) {
    kinds[kind] = Number(new RegExp(`^${kind}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  }
  return kinds;
};

const mb = (bytes: number | undefined) => ((bytes ?? Number.NaN) / 1024 / 1024).toFixed(2);

const main = async () => {
  const folder = await mkdtemp(join(tmpdir(), 'gateway-memory-probe-'));
  const erp = await startDemoErp({ port: 0 });
  const org = await unlimitedDemo();
  const child = spawn(
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
      ...(inMemory ? ['--memory'] : ['--data-dir', join(folder, 'data')]),
      '--config',
      org.config,
      '--no-demo-erp',
      '--no-demo-tools',
      '--no-demo-mcp',
    ],
    {
      cwd: projectPath(),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DEMO_ERP_URL: erp.url,
        DEMO_CALL_TOOL_URL: 'http://127.0.0.1:9/tool/call-tool',
        DEMO_MCP_URL: 'http://127.0.0.1:9/mcp',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  process.once('exit', () => child.kill('SIGKILL'));
  const load = new LoadClient();
  try {
    const { baseUrl, inspectorUrl } = await startGateway(child);
    const inspector = await InspectorSession.open(inspectorUrl);
    const target = directCallTarget('gateway', 'probe', baseUrl);
    let calls = 0;
    const slice = async (ms: number) => {
      const result = await load.run({ kind: 'throughput', target, connections: 4, durationMs: ms });
      erp.reset();
      calls += result.completed;
      if (result.failures > 0) console.log(`!! ${result.failures} failures: ${result.firstFailure}`);
    };
    for (let done = 0; done < warmupS * 1000; done += sliceMs) await slice(sliceMs);
    const started = performance.now();
    const rows: { s: number; calls: number; memory: Record<string, number> }[] = [];
    const sample = async () => {
      const memory: Record<string, number> = {
        ...(await inspector.memoryAfterCollection()),
        ...(await residentKinds(child.pid ?? 0)),
      };
      rows.push({ s: (performance.now() - started) / 1000, calls, memory });
      console.log(
        `${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s ${String(calls).padStart(7)} calls  ` +
          `rss ${mb(memory.rss)}  heapUsed ${mb(memory.heapUsed)}  heapTotal ${mb(memory.heapTotal)}  ` +
          `external ${mb(memory.external)}  arrayBuffers ${mb(memory.arrayBuffers)}  ` +
          `anon ${mb(memory.RssAnon)}  file ${mb(memory.RssFile)}`,
      );
    };
    await sample();
    if (snapshotFolder !== undefined) await inspector.snapshot(join(snapshotFolder, 'a.heapsnapshot'));
    const half = loadS / 2;
    for (let done = 0; done < loadS * 1000; done += sliceMs) {
      await slice(sliceMs);
      await sample();
      if (snapshotFolder !== undefined && done + sliceMs === half * 1000) {
        await inspector.snapshot(join(snapshotFolder, 'b.heapsnapshot'));
      }
    }
    if (snapshotFolder !== undefined) await inspector.snapshot(join(snapshotFolder, 'c.heapsnapshot'));
    const first = rows[0];
    const last = rows.at(-1);
    if (first !== undefined && last !== undefined) {
      const per10k = (key: string) =>
        ((((last.memory[key] ?? 0) - (first.memory[key] ?? 0)) / (last.calls - first.calls)) * 10_000) / 1024 / 1024;
      console.log(
        `per 10 000 calls over ${last.calls - first.calls} calls: rss ${per10k('rss').toFixed(2)} MB, ` +
          `heapUsed ${per10k('heapUsed').toFixed(2)} MB, external ${per10k('external').toFixed(2)} MB, ` +
          `arrayBuffers ${per10k('arrayBuffers').toFixed(2)} MB, anon ${per10k('RssAnon').toFixed(2)} MB, ` +
          `file-backed ${per10k('RssFile').toFixed(2)} MB`,
      );
    }
    inspector.close();
  } finally {
    await load.close();
    child.kill('SIGTERM');
    await erp.close();
    await org.remove();
    await rm(folder, { recursive: true, force: true });
  }
};

await main();
process.exit(0);
