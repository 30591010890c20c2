// Requests the gateway refuses whole, over real HTTP against the local runtime: JSON-RPC batches
// (removed from MCP in 2025-06-18, so no path reads their arguments laxly), and arguments holding
// more values or longer arrays than one call may.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxArgumentValues, maxArrayItems } from '../../shared/arguments/strict-json.js';
import { ResultObject } from '../../shared/result.js';
import { mcpHeaders, modernRequest, rawRequest } from '../support/http.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

let runtime: RuntimeProcess;

beforeAll(async () => {
  runtime = await startRuntimeProcess(['--memory']);
});
afterAll(async () => {
  await runtime?.stop();
});

const legacyHeaders = () => mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '2025-11-25' });

/** A tools/call of the demo's purchase-order tool with its arguments as raw text. */
const call = (id: number, args: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"erp.purchase_orders.create","arguments":${args}}}`;

const structured = (body: unknown): ResultObject => {
  if (typeof body !== 'object' || body === null || !('result' in body)) throw new Error(JSON.stringify(body));
  const { result } = body;
  if (typeof result !== 'object' || result === null || !('structuredContent' in result)) throw new Error('no result');
  return ResultObject.parse(result.structuredContent);
};

describe('JSON-RPC batches', () => {
  it(
    verifies('mcp.batch-refused', 'refuses a batch with -32600 in both revisions, reading none of its calls'),
    async () => {
      // Each element alone would be refused for its duplicate key and its rounded amount.
      const element = (id: number) =>
        call(id, '{"vendor_id":"V-100","vendor_id":"V-200","amount":1e400,"currency":"EUR"}');
      const legacy = await rawRequest(runtime.mcpUrl, {
        headers: legacyHeaders(),
        body: `[${element(1)},${element(2)}]`,
      });
      expect(legacy.status).toBe(400);
      expect(legacy.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'JSON-RPC batches are not supported: send one request per HTTP POST.' },
      });

      const modern = modernRequest('tools/call', { name: 'erp.purchase_orders.create', arguments: {} }, 3);
      const modernBatch = await rawRequest(runtime.mcpUrl, {
        headers: mcpHeaders(demoTokens.procurement, modern.headers),
        body: `[${modern.body}]`,
      });
      expect(modernBatch.status).toBe(400);
      expect(modernBatch.json()).toMatchObject({ error: { code: -32600 } });

      // The same call sent alone is read strictly.
      const single = await rawRequest(runtime.mcpUrl, { headers: legacyHeaders(), body: element(4) });
      expect(structured(single.json()).input_errors?.map(({ path, code }) => ({ path, code }))).toEqual([
        { path: '/amount', code: 'non_finite_number' },
        { path: '/vendor_id', code: 'duplicate_key' },
      ]);
    },
  );
});

describe('what one call may hold', () => {
  it(
    verifies(
      'args.value-caps',
      'refuses arguments of more than 10 000 values and arrays of more than 1 000 items, with pointers',
    ),
    async () => {
      expect(maxArgumentValues).toBe(10_000);
      expect(maxArrayItems).toBe(1_000);
      const order = '"vendor_id":"V-100","amount":"250","currency":"EUR"';
      const manyValues = Array.from({ length: 120 }, () => `[${Array.from({ length: 100 }, () => '0').join(',')}]`);
      const tooMany = await rawRequest(runtime.mcpUrl, {
        headers: legacyHeaders(),
        body: call(5, `{${order},"lines":[${manyValues.join(',')}]}`),
      });
      expect(structured(tooMany.json())).toMatchObject({
        status: 'denied',
        code: 'invalid_arguments',
        input_errors: [{ path: '', code: 'too_many_values' }],
      });

      const longArray = Array.from({ length: 1_001 }, (_, index) => `{"sku":"S-${index}","quantity":1}`).join(',');
      const tooLong = await rawRequest(runtime.mcpUrl, {
        headers: legacyHeaders(),
        body: call(6, `{${order},"lines":[${longArray}]}`),
      });
      expect(structured(tooLong.json()).input_errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: '/lines', code: 'too_many_items' })]),
      );

      // At the caps the call is read as usual.
      const atCap = Array.from({ length: 1_000 }, (_, index) => `{"sku":"S-${index}","quantity":1}`).join(',');
      const fits = await rawRequest(runtime.mcpUrl, {
        headers: legacyHeaders(),
        body: call(7, `{${order},"lines":[${atCap}]}`),
      });
      expect(structured(fits.json()).input_errors?.map((entry) => entry.code) ?? []).not.toContain('too_many_items');
    },
  );
});
