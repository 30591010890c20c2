// Where the local runtime's memory goes under steady load: the gateway runs as `npm start` runs it,
// in its own process, with the inspector open; after a warm-up, every slice of load is followed by
// a full collection and a reading of process.memoryUsage() (heap, external, array buffers, resident),
// and heap snapshots are taken at the marks asked for. Not part of `npm run bench`: run it by hand,
// `npx tsx bench/memory-probe.ts [--memory] [warm-up s] [load s] [snapshot folder]`; with --memory
// the store is the in-memory one (its data in the JS heap), without LevelDB.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDemoErp } from '../examples/erp/server.js';
import { directCallTarget } from './bed.js';
import { unlimitedDemo } from './demo-runtime.js';
import { InspectorSession } from './inspector.js';
import { LoadClient } from './load.js';
import { spawnGateway, startGateway } from './memory-load.js';

const inMemory = process.argv.includes('--memory');
const [warmupArg, loadArg, snapshotFolder] = process.argv.slice(2).filter((arg) => arg !== '--memory');
const warmupS = Number(warmupArg ?? 40);
const loadS = Number(loadArg ?? 120);
const sliceMs = 10_000;

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
  const child = spawnGateway({
    config: org.config,
    erpUrl: erp.url,
    dataDir: inMemory ? 'memory' : join(folder, 'data'),
  });
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
