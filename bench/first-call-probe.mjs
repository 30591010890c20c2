// Run by first-call.ts in a fresh `node`, from the MCP function's bundle folder (copied beside
// index.mjs): imports the bundle as Lambda does, then invokes its handler with the events in the
// JSON file named by argv[2], each timed by itself. Prints one line: the marker and the timings.
import { readFileSync } from 'node:fs';

const started = performance.now();
const { handler } = await import('./index.mjs');
const importMs = performance.now() - started;

const { marker, reads, writes } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let request = 0;
const context = () => {
  request += 1;
  return { getRemainingTimeInMillis: () => 10_000, functionName: 'mcp', awsRequestId: `bench-${request}` };
};

/** A call that is not a 200 with status "succeeded" stops the probe: a failure is never timed. */
const timed = async (event) => {
  const at = performance.now();
  const answer = await handler(event, context());
  const took = performance.now() - at;
  if (answer?.statusCode !== 200 || !String(answer.body).includes('"status":"succeeded"')) {
    process.stderr.write(`a call was not answered: ${JSON.stringify(answer).slice(0, 600)}\n`);
    process.exit(2);
  }
  return took;
};

const firstMs = await timed(reads[0]);
const secondMs = await timed(reads[1]);
const readsMs = [];
for (const event of reads.slice(2)) readsMs.push(await timed(event));
const writesMs = [];
for (const event of writes) writesMs.push(await timed(event));
process.stdout.write(`\n${marker}${JSON.stringify({ importMs, firstMs, secondMs, readsMs, writesMs })}\n`);
process.exit(0);
