// Run by first-call.ts in a fresh `node`, from the MCP function's bundle folder or the first-call
// floor's (copied beside index.mjs): imports the bundle as Lambda does, then invokes its handler
// with the events in the JSON file named by argv[2], each timed by itself. Prints one line: the
// marker and the timings.
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';

const started = performance.now();
const { handler } = await import('./index.mjs');
const importMs = performance.now() - started;

const { marker, reads, writes, ports } = JSON.parse(readFileSync(process.argv[2], 'utf8'));

// The requests the first call sends, seen as they start (node:http for the AWS SDK, undici for the
// system client), so its time can be split at them: SDK and configuration, Cedar, the system.
let callStarted = null;
const sent = [];
const note = (port, what) => {
  if (callStarted === null) return;
  const to = Object.keys(ports).find((name) => ports[name] === port) ?? `port ${port}`;
  sent.push({ ms: performance.now() - callStarted, to, what });
};
subscribe('http.client.request.start', ({ request }) => {
  const target = request.getHeader('x-amz-target');
  const port = Number(String(request.getHeader('host')).split(':')[1]);
  note(
    port,
    String(target ?? request.path)
      .split('.')
      .pop(),
  );
});
subscribe('undici:request:create', ({ request }) => {
  note(Number(new URL(request.origin).port), `${request.method} ${request.path}`);
});
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

callStarted = performance.now();
const firstMs = await timed(reads[0]);
// Node's own fetch implementation, loaded by the first read of a lazy web global (Response, Headers…):
// a plain call needs none of it, so its being loaded by now is a cold start paying for nothing.
const fetchLoaded = process.moduleLoadList.includes('NativeModule internal/deps/undici/undici');
callStarted = null;
const secondMs = await timed(reads[1]);
const readsMs = [];
for (const event of reads.slice(2)) readsMs.push(await timed(event));
const writesMs = [];
for (const event of writes) writesMs.push(await timed(event));
process.stdout.write(
  `\n${marker}${JSON.stringify({ importMs, firstMs, secondMs, readsMs, writesMs, sent, fetchLoaded })}\n`,
);
process.exit(0);
