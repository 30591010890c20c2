// Policy over MCP against the demo: what each agent sees, what a forbidden or unlisted tool
// answers, amounts either side of the threshold, decisions kept on executions, and broken
// policy files at start and while running.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { ResultObject } from '../../shared/result.js';
import { humanStep } from '../support/executions.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

const connect = async (runtime: RuntimeProcess, token: string) => {
  const client = new Client({ name: 'policy-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
};

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  ResultObject.parse((await client.callTool({ name, arguments: args })).structuredContent);

describe('the demo policies over MCP', () => {
  let runtime: RuntimeProcess;
  let procurement: Client;
  let support: Client;
  let store: DynamoDbExecutionStore;

  beforeAll(async () => {
    runtime = await startRuntimeProcess(['--memory']);
    procurement = await connect(runtime, demoTokens.procurement);
    support = await connect(runtime, demoTokens.support);
    store = new DynamoDbExecutionStore(
      documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
      localTableNames.executions,
      quietLog,
    );
  });
  afterAll(async () => {
    await procurement?.close();
    await support?.close();
    await runtime?.stop();
  });

  it(verifies('policy.listing', 'shows the two agents different tools'), async () => {
    expect(await toolNames(procurement)).toEqual([
      'get_execution_status',
      'erp.purchase_orders.cancel',
      'erp.purchase_orders.create',
      'erp.purchase_orders.get',
      'erp.shipments.track',
      'erp.vendors.get',
      'erp.vendors.grant_portal_access',
      'everything.echo',
      'everything.get-structured-content',
      'everything.get-sum',
      'reference.echo',
      'reference.get-annotated-message',
      'reference.get-structured-content',
      'reference.get-sum',
      'reference.get-tiny-image',
      'reference.toggle-simulated-logging',
    ]);
    expect(await toolNames(support)).toEqual([
      'get_execution_status',
      'erp.purchase_orders.get',
      'erp.refunds.create',
      'erp.shipments.track',
      'everything.echo',
      'everything.get-structured-content',
    ]);
  });

  it(
    verifies(
      ['policy.listing', 'policy.fail-closed'],
      'hides the forbidden vendor deletion and answers it as unknown_tool',
    ),
    async () => {
      for (const client of [procurement, support]) {
        expect(await toolNames(client)).not.toContain('erp.vendors.delete');
        const result = await call(client, 'erp.vendors.delete', { vendor_id: 'V-100' });
        expect(result).toMatchObject({ status: 'denied', code: 'unknown_tool' });
        // Exactly what a tool that does not exist answers.
        const missing = await call(client, 'erp.vendors.obliterate', { vendor_id: 'V-100' });
        expect({ ...missing, execution_id: null }).toEqual({ ...result, execution_id: null });
      }
      // The support agent cannot see the procurement-only vendor record either.
      expect((await call(support, 'erp.vendors.get', { vendor_id: 'V-100' })).code).toBe('unknown_tool');
    },
  );

  it(
    verifies(['policy.model', 'policy.human-step'], 'decides differently either side of 1000, and keeps the decision'),
    async () => {
      const small = await call(procurement, 'erp.purchase_orders.create', {
        vendor_id: 'V-100',
        amount: '999.99',
        currency: 'EUR',
      });
      const large = await call(procurement, 'erp.purchase_orders.create', {
        vendor_id: 'V-100',
        amount: '1000.00',
        currency: 'EUR',
      });
      // 999.99 runs at once; 1000.00 waits for finance.
      expect(small).toMatchObject({ status: 'succeeded', result: { amount: '999.99', status: 'placed' } });
      expect(large).toMatchObject({ status: 'pending_approval', code: null, result: null });
      const smallRecord = await store.get(small.execution_id ?? '');
      const largeRecord = await store.get(large.execution_id ?? '');
      expect(smallRecord?.decision).toMatchObject({
        effect: 'allow',
        step: null,
        determining: [{ name: 'small-purchase-orders', file: 'policies/demo.cedar' }],
      });
      expect(largeRecord?.decision).toMatchObject({
        effect: 'allow',
        step: humanStep({ staff: 'finance', customer: false }),
        determining: [{ name: 'large-purchase-orders', file: 'policies/demo.cedar', line: 12 }],
      });
      expect(largeRecord?.arguments_json).toBe('{"amount":"1000","currency":"EUR","vendor_id":"V-100"}');
      expect(largeRecord?.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
    },
  );

  it(verifies('policy.human-step', 'asks the customer to confirm a refund, and finance too above 500'), async () => {
    const small = await call(support, 'erp.refunds.create', {
      order_reference: 'SO-2024-0042',
      amount: '500',
      currency: 'EUR',
    });
    const large = await call(support, 'erp.refunds.create', {
      order_reference: 'SO-2024-0042',
      amount: '500.01',
      currency: 'EUR',
    });
    expect(small.status).toBe('pending_approval');
    expect((await store.get(small.execution_id ?? ''))?.decision?.step).toEqual(
      humanStep({ staff: null, customer: true }),
    );
    expect((await store.get(large.execution_id ?? ''))?.decision?.step).toEqual(
      humanStep({ staff: 'finance', customer: true }),
    );
    expect((await store.get(large.execution_id ?? ''))?.customer_id).toBe('customer-1042');
  });

  it(verifies('policy.fail-closed', 'refuses a listed tool when no permit holds, in the gateway’s words'), async () => {
    const result = await call(procurement, 'erp.purchase_orders.create', {
      vendor_id: 'V-100',
      amount: '10.00001',
      currency: 'EUR',
    });
    expect(result).toMatchObject({
      status: 'denied',
      code: 'policy_denied',
      message: "The organization's policy does not allow this call.",
    });
    expect(JSON.stringify(result)).not.toMatch(/permit|forbid|cedar|decimal/i);
    expect((await store.get(result.execution_id ?? ''))?.decision).toMatchObject({
      effect: 'deny',
      reason: 'not_representable',
    });
  });
});

describe('broken policy files', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let policyFile: string;
  let original: string;

  beforeAll(async () => {
    folder = await temporaryFolder('gateway-policy-');
    await cp(projectPath('examples'), folder.path, { recursive: true });
    policyFile = join(folder.path, 'policies', 'demo.cedar');
    original = await readFile(policyFile, 'utf8');
  });
  afterAll(async () => {
    await folder?.remove();
  });

  const broken = () =>
    original.replace('context.arguments.amount.lessThan(decimal("1000.0"))', 'context.arguments.amount < 1000');
  const brokenLine = () =>
    broken()
      .split('\n')
      .findIndex((line) => line.includes('amount < 1000')) + 1;

  it(
    verifies(['policy.reload', 'policy.schema-validation'], 'refuse to start the gateway, naming the file and line'),
    async () => {
      await writeFile(policyFile, broken());
      await expect(
        startRuntimeProcess(['--memory', '--config', join(folder.path, 'gateway.config.yaml')]),
      ).rejects.toThrow(new RegExp(`policies/demo\\.cedar:${brokenLine()}: policies: .*decimal`));
      await writeFile(policyFile, original);
    },
  );

  it(verifies('policy.reload', 'keep the last good configuration while the gateway runs, and say where'), async () => {
    const runtime = await startRuntimeProcess(['--memory', '--config', join(folder.path, 'gateway.config.yaml')], {
      POWERTOOLS_LOG_LEVEL: 'INFO',
    });
    try {
      const client = await connect(runtime, demoTokens.procurement);
      const before = await toolNames(client);
      const logged = runtime.output().length;
      // A type error, and the vendor-deletion forbid removed: neither may take effect.
      await writeFile(
        policyFile,
        broken().replace(
          '@id("no-vendor-deletion")\nforbid (principal, action == Action::"erp.vendors.delete", resource);',
          '',
        ),
      );
      const deadline = Date.now() + 60_000;
      while (!runtime.output().slice(logged).includes('configuration change refused') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(runtime.output().slice(logged)).toMatch(new RegExp(`policies/demo\\.cedar:${brokenLine()}: policies: `));
      // Still the last good policies: the same list, the forbid still in force.
      expect(await toolNames(client)).toEqual(before);
      expect((await call(client, 'erp.vendors.delete', { vendor_id: 'V-100' })).code).toBe('unknown_tool');
      await client.close();
    } finally {
      await writeFile(policyFile, original);
      await runtime.stop();
    }
  });
});
