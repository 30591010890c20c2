// The work one large tools/call costs the event loop before anything is sent: reading the body
// (once, strictly) and canonicalizing and validating its arguments, for a 256 KB request of many
// small values and for one of a few long strings. Run with `npx tsx bench/argument-reading.ts`.
import { performance } from 'node:perf_hooks';
import { canonicalizeArguments } from '../shared/arguments/canonicalize.js';
import { compileValidator } from '../shared/arguments/compile-validator.js';
import { readMessage } from '../shared/arguments/strict-json.js';
import type { JsonObject } from '../shared/catalog/tool.js';
import { median, ms } from './stats.js';

const bodyOf = (args: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"erp.purchase_orders.create","arguments":${args}}}`;

/** Fills about 256 KB with what `item(index)` writes. */
const filled = (item: (index: number) => string): string => {
  const parts: string[] = [];
  let size = 0;
  for (let index = 0; size < 250 * 1024; index++) {
    const part = item(index);
    parts.push(part);
    size += part.length + 1;
  }
  return parts.join(',');
};

const cases: { name: string; body: string; schema: JsonObject }[] = [
  {
    name: '256 KB of small numbers (capped at 10 000 values)',
    body: bodyOf(`{"lines":[${filled((index) => `[${index % 10},1.5,-3]`)}]}`),
    schema: { type: 'object', properties: { lines: { type: 'array', items: { type: 'array' } } } },
  },
  {
    name: '256 KB of unknown fields',
    body: bodyOf(`{${filled((index) => `"f${index}":${index}`)}}`),
    schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
  },
  {
    name: '60 KB of text in four fields',
    body: bodyOf(`{${[1, 2, 3, 4].map((index) => `"note${index}":"${'x'.repeat(15_000)}"`).join(',')}}`),
    schema: { type: 'object' },
  },
];

for (const { name, body, schema } of cases) {
  const samples: number[] = [];
  for (let round = 0; round < 60; round++) {
    const started = performance.now();
    const read = readMessage(body);
    if (read?.toolArguments === null || read === null) throw new Error('not a tools/call');
    canonicalizeArguments({ inputSchema: schema, validate: compileValidator(schema) }, read.toolArguments);
    if (round >= 10) samples.push(performance.now() - started);
  }
  console.log(`${name.padEnd(52)} ${ms(median(samples))} per call (median of ${samples.length}, after 10 warm-up)`);
}
