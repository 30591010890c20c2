// Run as its own process (test/adapters/local-store-integrity.test.ts): stores calls in the
// in-memory embedded store and prints how many bytes of buffers it keeps per call. A process of
// its own, because a test worker's own traffic blurs the figure.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { anExecution } from './executions.js';
import { startTestStore } from './local-store.js';

setFlagsFromString('--expose-gc');
const collect: () => void = runInNewContext('gc');
const local = await startTestStore(null, 'memory-executions');
const record = () =>
  anExecution({
    status: 'succeeded',
    result_json: JSON.stringify({ id: 'PO-1', vendor_id: 'V-100', amount: '250.00', status: 'open' }),
  });
for (let index = 0; index < 100; index++) await local.store.create(record());
collect();
const before = process.memoryUsage().arrayBuffers;
const calls = 2_000;
for (let index = 0; index < calls; index++) await local.store.create(record());
collect();
process.stdout.write(`${JSON.stringify({ bytesPerCall: (process.memoryUsage().arrayBuffers - before) / calls })}\n`);
await local.close();
