// Arguments end to end, over MCP against the demo: each refusal is the specified result object
// and leaves an execution; accepted arguments are stored in their canonical form.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import canonicalJson from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { ResultObject } from '../../shared/result.js';
import { mcpHeaders, rawRequest } from '../support/http.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

let runtime: RuntimeProcess;
let client: Client;
let store: DynamoDbExecutionStore;

beforeAll(async () => {
  runtime = await startRuntimeProcess(['--memory']);
  client = new Client({ name: 'arguments-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${demoTokens.procurement}` } },
    }),
  );
  store = new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );
});
afterAll(async () => {
  await client?.close();
  await runtime?.stop();
});

const create = async (args: Record<string, unknown>) => {
  const answer = await client.callTool({ name: 'erp.purchase_orders.create', arguments: args });
  return { answer, result: ResultObject.parse(answer.structuredContent) };
};

const refusal = (input_errors: { path: string; code: string; message?: string }[]) => ({
  status: 'denied',
  result: null,
  code: 'invalid_arguments',
  message: "The arguments do not match the tool's input schema.",
  approval_url: null,
  input_errors: input_errors.map((entry) => (entry.message === undefined ? expect.objectContaining(entry) : entry)),
});

const order = { vendor_id: 'V-100', amount: '250', currency: 'EUR' };

describe('tools/call arguments over MCP', () => {
  it(verifies(['args.unknown-fields', 'args.refusal'], 'refuses an extra field and records the refusal'), async () => {
    const { answer, result } = await create({ ...order, priority: 'high' });
    expect(result).toMatchObject(refusal([{ path: '/priority', code: 'unknown_field' }]));
    expect(answer.isError).toBe(true);
    const recorded = await store.getOwned({ execution_id: result.execution_id ?? '', agent_id: 'procurement-agent' });
    expect(recorded).toMatchObject({
      status: 'denied',
      code: 'invalid_arguments',
      tool: 'erp.purchase_orders.create',
      input_errors: result.input_errors,
    });
    const followed = await client.callTool({
      name: 'get_execution_status',
      arguments: { execution_id: result.execution_id },
    });
    expect(followed.structuredContent).toEqual(result);
  });

  it(
    verifies(['args.amount-digits', 'args.amount-canonical'], 'accepts a Persian-digit amount and keeps it canonical'),
    async () => {
      const { result } = await create({ vendor_id: ' V-100 ', amount: '۱۵۰۰٫۰۰', currency: 'EUR' });
      // 1500 needs the finance team's approval; the arguments kept are the canonical ones.
      expect(result.status).toBe('pending_approval');
      const recorded = await store.get(result.execution_id ?? '');
      expect(recorded?.arguments_json).toBe('{"amount":"1500","currency":"EUR","vendor_id":"V-100"}');
    },
  );

  it(
    verifies('args.amount-canonical', 'refuses an amount that is not a decimal, with the reference message'),
    async () => {
      const { result } = await create({ ...order, amount: '1,500' });
      expect(result).toMatchObject(
        refusal([
          { path: '/amount', code: 'invalid_decimal', message: 'Expected a decimal number such as 1500 or 1500.25.' },
        ]),
      );
    },
  );

  it(verifies('args.identifiers', 'refuses a mixed-script vendor id'), async () => {
    const { result } = await create({ ...order, vendor_id: 'V-100ب' });
    expect(result).toMatchObject(refusal([{ path: '/vendor_id', code: 'mixed_script' }]));
  });

  it(verifies('args.limits', 'refuses arguments of 64 KB + 1 and accepts 64 KB exactly'), async () => {
    // Four lines with long notes, then the first note trimmed or grown to hit the size exactly.
    const sized = (bytes: number) => {
      const lines = [1, 2, 3, 4].map((index) => ({ sku: `SKU-${index}`, quantity: 1, note: 'x'.repeat(16_000) }));
      const measure = () => Buffer.byteLength(canonicalJson({ ...order, lines }) ?? '');
      const [first] = lines;
      if (first !== undefined) first.note = 'x'.repeat(first.note.length + bytes - measure());
      return { args: { ...order, lines }, size: measure() };
    };
    const tooBig = sized(64 * 1024 + 1);
    const fits = {
      args: {
        ...tooBig.args,
        lines: tooBig.args.lines.map((line, index) => (index === 0 ? { ...line, note: line.note.slice(1) } : line)),
      },
    };
    expect(tooBig.size).toBe(64 * 1024 + 1);
    expect(Buffer.byteLength(canonicalJson(fits.args) ?? '')).toBe(64 * 1024);
    expect((await create(tooBig.args)).result).toMatchObject(refusal([{ path: '', code: 'arguments_too_large' }]));
    expect((await create(fits.args)).result.code).not.toBe('invalid_arguments');
  });

  it(verifies('args.limits', 'refuses a 33-deep argument and a 100 000-deep one, and stays up'), async () => {
    let nested: unknown = 'deep';
    for (let level = 0; level < 32; level++) nested = { x: nested };
    const { result } = await create({ ...order, description: nested });
    // Both problems are listed: the description is not a string, and it is nested too deep.
    expect(result).toMatchObject(
      refusal([
        { path: '/description', code: 'wrong_type' },
        { path: `/description${'/x'.repeat(31)}`, code: 'nesting_too_deep' },
      ]),
    );

    const body = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"erp.purchase_orders.create","arguments":{"vendor_id":"V-100","amount":"1","currency":"EUR","description":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`;
    const deep = await rawRequest(runtime.mcpUrl, {
      headers: mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '2025-11-25' }),
      body,
    });
    expect(deep.status).toBe(200);
    const structured = ResultObject.parse(
      (deep.json() as { result: { structuredContent: unknown } }).result.structuredContent,
    );
    expect(structured.input_errors?.map((entry) => entry.code)).toContain('nesting_too_deep');
    expect((await create(order)).result.code).not.toBe('invalid_arguments');
  });

  // A whole number beyond 2^53 is kept exact ([args.exact-integers]); one that is not whole cannot be.
  it(
    verifies(
      ['args.json-hazards', 'args.every-problem'],
      'reports duplicate keys, huge inexact numbers and lone surrogates, all at once',
    ),
    async () => {
      const body =
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"erp.purchase_orders.create","arguments":' +
        '{"vendor_id":"V-100","vendor_id":"V-200","amount":"1","currency":"EUR","description":"\\ud800 broken",' +
        '"lines":[{"sku":"A","quantity":9007199254740993.5}],"__proto__":{"admin":true}}}}';
      const response = await rawRequest(runtime.mcpUrl, {
        headers: mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '2025-11-25' }),
        body,
      });
      const parsed: unknown = response.json();
      const result =
        typeof parsed === 'object' &&
        parsed !== null &&
        'result' in parsed &&
        typeof parsed.result === 'object' &&
        parsed.result !== null &&
        'structuredContent' in parsed.result
          ? ResultObject.parse(parsed.result.structuredContent)
          : undefined;
      expect(result?.input_errors?.map(({ path, code }) => ({ path, code }))).toEqual([
        { path: '/__proto__', code: 'forbidden_key' },
        { path: '/description', code: 'lone_surrogate' },
        { path: '/lines/0/quantity', code: 'unsafe_integer' },
        { path: '/vendor_id', code: 'duplicate_key' },
      ]);
    },
  );
});
