// The direct path end to end: calls the policy lets run now go to the demo ERP (its own process
// here, so it outlives gateway crashes), and every way the ERP can misbehave ends in the outcome
// the contract names, with the ERP's call counter proving nothing was sent twice.
//
// Long: one journey per way the system can misbehave.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DemoErp, demoErpApiKey, startDemoErp } from '../../examples/erp/server.js';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { ResultObject } from '../../shared/result.js';
import { quietLog } from '../support/logs.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

const plantedPassword = 'Plant3d-Secret-Portal-Pa55';
const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';

let erp: DemoErp;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let configFile: string;

beforeAll(async () => {
  erp = await startDemoErp();
  folder = await temporaryFolder('gateway-direct-');
  await cp(projectPath('examples'), join(folder.path, 'org'), { recursive: true });
  configFile = join(folder.path, 'org', 'gateway.config.yaml');
  // A one-second deadline keeps the timeout cases short.
  const text = await readFile(configFile, 'utf8');
  await writeFile(configFile, text.replace('timeout: 10s', 'timeout: 1s'));
  // Header parameters on the order look-up: one an agent may set, and two it may not (the
  // transport's Connection, the system's own key header), which the catalog does not offer.
  const openapiFile = join(folder.path, 'org', 'erp', 'openapi.yaml');
  const openapi = await readFile(openapiFile, 'utf8');
  const lookUp = '      operationId: purchase_orders.get\n';
  expect(openapi).toContain(lookUp);
  await writeFile(
    openapiFile,
    openapi.replace(
      `${lookUp}      summary: Get a purchase order\n      description: Reads one purchase order with its status.\n      parameters:\n`,
      `${lookUp}      summary: Get a purchase order\n      description: Reads one purchase order with its status.\n      parameters:
        - { name: X-Customer-Ref, in: header, required: false, schema: { type: string, maxLength: 80 } }
        - { name: Connection, in: header, required: false, schema: { type: string } }
        - { name: X-Api-Key, in: header, required: false, schema: { type: string } }
`,
    ),
  );
});
afterAll(async () => {
  await erp?.close();
  await folder?.remove();
});

const startGateway = (dataDir: string, env: Record<string, string> = {}) =>
  startRuntimeProcess(['--data-dir', dataDir, '--no-demo-erp', '--config', configFile], {
    DEMO_ERP_URL: erp.url,
    POWERTOOLS_LOG_LEVEL: 'INFO',
    ...env,
  });

const connect = (runtime: RuntimeProcess) =>
  connectAgent(runtime.mcpUrl, demoTokens.procurement, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });

const storeOf = (runtime: RuntimeProcess) =>
  new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );

describe('direct calls against the demo ERP', () => {
  let runtime: RuntimeProcess;
  let client: Client;
  const call = async (name: string, args: Record<string, unknown>) => {
    const answer = await client.callTool({ name, arguments: args });
    return { answer, result: ResultObject.parse(answer.structuredContent) };
  };
  const order = { vendor_id: 'V-100', amount: '250.00', currency: 'EUR', description: 'Printer paper' };

  beforeAll(async () => {
    runtime = await startGateway(join(folder.path, 'data'));
    client = await connect(runtime);
  });
  afterAll(async () => {
    await client?.close();
    await runtime?.stop();
  });
  beforeEach(() => {
    erp.reset();
  });

  it(
    verifies(
      ['invoke.outbound', 'invoke.outcomes'],
      'runs a small purchase order once and answers with the ERP’s record',
    ),
    async () => {
      const { answer, result } = await call('erp.purchase_orders.create', order);
      expect(result).toMatchObject({
        status: 'succeeded',
        code: null,
        result: { id: 'PO-1001', vendor_id: 'V-100', amount: '250', currency: 'EUR', status: 'placed' },
      });
      expect(answer.isError).toBe(false);
      const executionId = result.execution_id ?? '';
      expect(erp.callsFor(executionId)).toBe(1);
      const [received] = erp.calls();
      // The system's credentials from configuration; never the agent's token; the caller's trace continued.
      expect(received?.headers['x-api-key']).toBe(demoErpApiKey);
      expect(received?.headers.authorization).toBeUndefined();
      expect(JSON.stringify(received?.headers)).not.toContain(demoTokens.procurement);
      expect(received?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      expect(received?.headers.traceparent).not.toContain('00f067aa0ba902b7');
      expect(received?.body).toEqual({
        vendor_id: 'V-100',
        amount: '250',
        currency: 'EUR',
        description: 'Printer paper',
      });
    },
  );

  it(
    verifies(
      ['invoke.outcomes', 'invoke.no-free-text'],
      'answers a 409 as failed with the ERP’s code and none of its text',
    ),
    async () => {
      erp.addFault({
        method: 'POST',
        route: '/purchase-orders',
        fault: {
          kind: 'status',
          status: 409,
          body: { code: 'DUPLICATE_ORDER', message: 'Order exists: see PO-77 (Mr. Smith)' },
        },
      });
      const { answer, result } = await call('erp.purchase_orders.create', order);
      expect(result).toMatchObject({ status: 'failed', code: 'duplicate_order', result: null });
      expect(answer.isError).toBe(true);
      expect(JSON.stringify(answer)).not.toMatch(/Order exists|PO-77|Smith/);
      erp.addFault({
        method: 'POST',
        route: '/purchase-orders',
        fault: { kind: 'status', status: 422, body: { code: 'not a token, a sentence' } },
      });
      expect((await call('erp.purchase_orders.create', order)).result.code).toBe('http_422');
    },
  );

  it(verifies('invoke.outcomes', 'fails a read that times out or answers 503, so it can be tried again'), async () => {
    erp.addFault({ method: 'GET', route: '/purchase-orders/{purchase_order_id}', fault: { kind: 'hang' } });
    expect((await call('erp.purchase_orders.get', { purchase_order_id: 'PO-1' })).result).toMatchObject({
      status: 'failed',
      code: 'timeout',
    });
    erp.addFault({
      method: 'GET',
      route: '/purchase-orders/{purchase_order_id}',
      fault: { kind: 'status', status: 503, body: { error: 'db password=hunter2' } },
    });
    const { answer, result } = await call('erp.purchase_orders.get', { purchase_order_id: 'PO-1' });
    expect(result).toMatchObject({ status: 'failed', code: 'http_503' });
    expect(JSON.stringify(answer)).not.toContain('hunter2');
  });

  const uncertainWrites = [
    { fault: { kind: 'apply_then_hang' }, code: 'timeout' },
    { fault: { kind: 'reset' }, code: 'connection_failed' },
    { fault: { kind: 'status', status: 503, body: { error: 'db password=hunter2' } }, code: 'http_503' },
    { fault: { kind: 'redirect', status: 307 }, code: 'redirect_refused' },
    { fault: { kind: 'huge', bytes: 2 * 1024 * 1024 }, code: 'response_too_large' },
    { fault: { kind: 'garbage' }, code: 'unreadable_response' },
  ] as const;

  it.each(uncertainWrites)(
    verifies(
      ['invoke.outcomes', 'invoke.at-most-once'],
      'ends a write whose answer is $code as unknown, sent exactly once',
    ),
    async ({ fault, code }) => {
      erp.addFault({ method: 'POST', route: '/purchase-orders', fault });
      const { answer, result } = await call('erp.purchase_orders.create', order);
      expect(result).toMatchObject({ status: 'unknown', code, result: null });
      expect(answer.isError).toBe(true);
      expect(erp.callsFor(result.execution_id ?? '')).toBe(1);
      expect(erp.calls().filter((received) => received.route === '/elsewhere')).toEqual([]);
    },
  );

  it(
    verifies('invoke.outbound', 'refuses a path value of ".." rather than call another path of the system'),
    async () => {
      const { result } = await call('erp.purchase_orders.get', { purchase_order_id: '..' });
      expect(result).toMatchObject({
        status: 'denied',
        code: 'invalid_arguments',
        input_errors: [{ path: '/purchase_order_id', code: 'invalid_format' }],
      });
      expect(erp.calls()).toEqual([]);
    },
  );

  it(
    verifies(
      ['catalog.header-parameters', 'invoke.header-values'],
      'sends an allowed header as given, and refuses one that is not printable ASCII before anything is sent',
    ),
    async () => {
      const listed = (await client.listTools()).tools.find((tool) => tool.name === 'erp.purchase_orders.get');
      expect(Object.keys(listed?.inputSchema.properties ?? {}).sort()).toEqual(['X-Customer-Ref', 'purchase_order_id']);

      const { result: sent } = await call('erp.purchase_orders.get', {
        purchase_order_id: 'PO-1',
        'X-Customer-Ref': 'SO-2024-0042 (web)',
      });
      // Sent once (the demo ERP has no order PO-1, which does not matter here).
      expect(erp.callsFor(sent.execution_id ?? '')).toBe(1);
      const [received] = erp.calls();
      expect(received?.headers).toMatchObject({
        'x-customer-ref': 'SO-2024-0042 (web)',
        'x-api-key': demoErpApiKey,
        'x-request-id': sent.execution_id,
      });

      erp.reset();
      for (const smuggled of ['SO-1\r\nX-Admin: yes', 'SO-1\nHost: evil.example', 'Café-1']) {
        const { answer, result } = await call('erp.purchase_orders.get', {
          purchase_order_id: 'PO-1',
          'X-Customer-Ref': smuggled,
        });
        expect(result).toMatchObject({
          status: 'denied',
          code: 'invalid_arguments',
          input_errors: [{ path: '/X-Customer-Ref', code: 'invalid_format' }],
        });
        expect(answer.isError).toBe(true);
        const recorded = await storeOf(runtime).get(result.execution_id ?? '');
        expect(recorded?.history.map((change) => change.status)).toEqual(['denied']);
        expect(recorded?.claimed_at).toBeNull();
      }
      // Fields the catalog did not offer are unknown, not sent.
      const { result: unknown } = await call('erp.purchase_orders.get', {
        purchase_order_id: 'PO-1',
        Connection: 'upgrade',
        'X-Api-Key': 'agent-chosen',
      });
      expect(unknown).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
      expect(unknown.input_errors?.map((error) => [error.path, error.code])).toEqual([
        ['/Connection', 'unknown_field'],
        ['/X-Api-Key', 'unknown_field'],
      ]);
      expect(erp.calls()).toEqual([]);
    },
  );

  it(
    verifies('secrets.redaction', 'returns secret-named fields as [REDACTED] and look-alikes as they are'),
    async () => {
      const { result } = await call('erp.vendors.get', { vendor_id: 'V-100' });
      expect(result.result).toEqual({
        id: 'V-100',
        name: 'Acme Supplies',
        contact_email: 'orders@acme.example',
        passenger_name: 'Layla Haddad',
        boarding_pass: 'BP-7781-22A',
        api_key: '[REDACTED]',
        portalPassword: '[REDACTED]',
        bank: { iban: 'DE89370400440532013000', 'client-secret': '[REDACTED]' },
      });
    },
  );

  it(
    verifies(
      ['invoke.audit', 'secrets.at-rest'],
      'keeps a secret argument sealed: sent in clear to the ERP, nowhere else',
    ),
    async () => {
      const { result } = await call('erp.vendors.grant_portal_access', {
        vendor_id: 'V-200',
        contact_email: 'sales@alnoor.example',
        initial_password: plantedPassword,
      });
      expect(result).toMatchObject({
        status: 'succeeded',
        result: { login: 'sales@alnoor.example', session_token: '[REDACTED]' },
      });
      // The ERP received the real value...
      expect(erp.calls().at(-1)?.body).toMatchObject({ initial_password: plantedPassword });
      // ...the record shows it redacted and keeps it only encrypted.
      const recorded = await storeOf(runtime).get(result.execution_id ?? '');
      expect(JSON.parse(recorded?.arguments_json ?? '{}')).toEqual({
        vendor_id: 'V-200',
        contact_email: 'sales@alnoor.example',
        initial_password: '[REDACTED]',
      });
      expect(recorded?.sealed_arguments).toMatch(/"ct":/);
      expect(recorded).toMatchObject({
        status: 'succeeded',
        http_status: 201,
        trace_id: traceId,
        decision: { effect: 'allow', step: null, determining: [{ name: 'procurement-maintenance' }] },
      });
      expect(recorded?.latency_ms).toBeGreaterThanOrEqual(0);
      expect(recorded?.history.map((change) => change.status)).toEqual(['approved', 'succeeded']);

      // A dump of the whole table, and everything the gateway printed, hold neither planted secret.
      const dump = await new DynamoDBClient(
        localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials),
      ).send(new ScanCommand({ TableName: localTableNames.executions }));
      const text = JSON.stringify(dump.Items);
      expect(text).toContain('V-200');
      expect(text).not.toContain(plantedPassword);
      expect(text).not.toContain('hunter2');
      expect(runtime.output()).not.toContain(plantedPassword);
      expect(runtime.output()).not.toContain('hunter2');
      expect(runtime.output()).toContain('system call finished');
    },
  );
});

describe('a gateway that dies in the middle of a write', () => {
  for (const crashAt of ['claimed', 'answered'] as const) {
    it(verifies(
      'invoke.at-most-once',
      `settles a write interrupted when ${crashAt} as unknown, never sending it again`,
    ), async () => {
      erp.reset();
      const dataDir = join(folder.path, `crash-${crashAt}`);
      const doomed = await startGateway(dataDir, { GATEWAY_CRASH_AT: crashAt });
      const client = await connect(doomed);
      await expect(
        client.callTool({
          name: 'erp.purchase_orders.create',
          arguments: { vendor_id: 'V-100', amount: '10', currency: 'EUR' },
        }),
      ).rejects.toThrow();
      const exited = await doomed.stop();
      expect(exited.code).not.toBe(0);
      const sent = crashAt === 'claimed' ? 0 : 1;
      expect(erp.calls().length).toBe(sent);

      const revived = await startGateway(dataDir);
      try {
        const store = storeOf(revived);
        const [claimed] = (await store.listByAgent('procurement-agent', { limit: 1 })).items;
        // The restarted runtime holds the only lock on its data, so no one can still be sending
        // this call: it settles the claim at once instead of waiting out its deadline.
        expect(claimed).toMatchObject({ status: 'unknown', code: 'interrupted', tool: 'erp.purchase_orders.create' });
        expect(claimed?.history.map((change) => change.status)).toEqual(['approved', 'unknown']);
        const executionId = claimed?.execution_id ?? '';
        const status = await connect(revived);
        const answer = ResultObject.parse(
          (await status.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } }))
            .structuredContent,
        );
        await status.close();
        expect(answer).toMatchObject({ status: 'unknown', code: 'interrupted', execution_id: executionId });
        expect(erp.callsFor(executionId)).toBe(sent);
        expect(erp.calls().length).toBe(sent);
      } finally {
        await revived.stop();
      }
    }, 180_000);
  }
});
