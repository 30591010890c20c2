// The store alone under the writes a direct call makes: dynalite on disk in this process, as the
// local runtime runs it, and per call the record created already claimed, then settled, through the
// gateway's own DynamoDB adapter, four calls in flight. No gateway, no HTTP front, no MCP: what
// memory grows here is the store's. Run by hand, with a full collection before every reading:
// `node --expose-gc --import tsx bench/store-memory-probe.ts [warm-up s] [load s]`.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ensureTables, localTableNames, startLocalDynamoDb } from '../infra/local/dynamodb.js';
import { DynamoDbExecutionStore } from '../shared/adapters/dynamodb/execution-store.js';
import { executionsTable } from '../shared/adapters/dynamodb/tables.js';
import { newExecutionRecord } from '../shared/executions/execution.js';
import { uuidV7Ids } from '../shared/ids.js';

const warmupS = Number(process.argv[2] ?? 30);
const loadS = Number(process.argv[3] ?? 150);
const sliceMs = 10_000;

const collect = globalThis.gc;
if (collect === undefined) throw new Error('run with node --expose-gc');

const mb = (bytes: number | undefined) => ((bytes ?? Number.NaN) / 1024 / 1024).toFixed(2);

const reading = async (): Promise<Record<string, number>> => {
  collect();
  collect();
  const status = await readFile('/proc/self/status', 'utf8');
  const kinds: Record<string, number> = {};
  for (const kind of ['RssAnon', 'RssFile']) {
    kinds[kind] = Number(new RegExp(`^${kind}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  }
  return { ...process.memoryUsage(), ...kinds };
};

const folder = await mkdtemp(join(tmpdir(), 'gateway-store-probe-'));
const dynamodb = await startLocalDynamoDb({ dataPath: join(folder, 'dynamodb') });
await ensureTables(dynamodb.client, [{ definition: executionsTable, tableName: localTableNames.executions }]);
// Nothing here holds a place for a held call, so nothing is given back: no line to log.
const store = new DynamoDbExecutionStore(dynamodb.documents, localTableNames.executions, {
  info: () => undefined,
  warn: () => undefined,
});

/** The two writes of a direct call: the record stored claimed, then settled with the system's answer. */
const oneCall = async (): Promise<void> => {
  const now = new Date();
  const claimed = newExecutionRecord({
    execution_id: uuidV7Ids.next(),
    agent_id: 'procurement-agent',
    customer_id: null,
    agent_groups: ['procurement'],
    tool: 'erp.purchase_orders.create',
    status: 'approved',
    created_at: now.toISOString(),
    arguments_json: JSON.stringify({
      vendor_id: 'V-100',
      amount: '250',
      currency: 'EUR',
      description: 'Printer paper',
    }),
    claimed_at: now.toISOString(),
    deadline_at: new Date(now.getTime() + 30_000).toISOString(),
  });
  await store.create(claimed);
  await store.transition(claimed, {
    from: 'approved',
    to: 'succeeded',
    at: new Date().toISOString(),
    patch: {
      code: null,
      message: null,
      result_json: JSON.stringify({
        purchase_order_id: `PO-${claimed.execution_id.slice(0, 8)}`,
        status: 'created',
        vendor_id: 'V-100',
        amount: '250',
        currency: 'EUR',
        description: 'Printer paper',
        created_at: now.toISOString(),
      }),
      http_status: 201,
      latency_ms: 3,
    },
  });
};

let calls = 0;
const slice = async (ms: number) => {
  const until = performance.now() + ms;
  const loop = async () => {
    while (performance.now() < until) {
      await oneCall();
      calls += 1;
    }
  };
  await Promise.all([loop(), loop(), loop(), loop()]);
};

for (let done = 0; done < warmupS * 1000; done += sliceMs) await slice(sliceMs);
const started = performance.now();
const rows: { calls: number; memory: Record<string, number> }[] = [];
const sample = async () => {
  const memory = await reading();
  rows.push({ calls, memory });
  console.log(
    `${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s ${String(calls).padStart(7)} calls  ` +
      `rss ${mb(memory.rss)}  heapUsed ${mb(memory.heapUsed)}  external ${mb(memory.external)}  ` +
      `arrayBuffers ${mb(memory.arrayBuffers)}  anon ${mb(memory.RssAnon)}  file ${mb(memory.RssFile)}`,
  );
};
await sample();
for (let done = 0; done < loadS * 1000; done += sliceMs) {
  await slice(sliceMs);
  await sample();
}
const first = rows[0];
const last = rows.at(-1);
if (first !== undefined && last !== undefined) {
  const per10k = (key: string) =>
    ((((last.memory[key] ?? 0) - (first.memory[key] ?? 0)) / (last.calls - first.calls)) * 10_000) / 1024 / 1024;
  console.log(
    `per 10 000 calls over ${last.calls - first.calls} calls: rss ${per10k('rss').toFixed(2)} MB, ` +
      `heapUsed ${per10k('heapUsed').toFixed(2)} MB, external ${per10k('external').toFixed(2)} MB, ` +
      `anon ${per10k('RssAnon').toFixed(2)} MB, file-backed ${per10k('RssFile').toFixed(2)} MB`,
  );
}
await dynamodb.close();
await rm(folder, { recursive: true, force: true });
