// The tool catalog over MCP against `npm start`'s entry point: the demo tools, refusals that leave
// a record, and a configuration that changes (or breaks, or goes stale) while the gateway runs.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { ResultObject } from '../../shared/result.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

/** What the demo policies let the procurement agent see. */
const demoTools = [
  'erp.purchase_orders.cancel',
  'erp.purchase_orders.create',
  'erp.purchase_orders.get',
  'erp.shipments.track',
  'erp.vendors.get',
  'erp.vendors.grant_portal_access',
  // The demo call-tool system's tools (npm start runs its proxy).
  'everything.echo',
  'everything.get-structured-content',
  'everything.get-sum',
  // The demo MCP server's tools (npm start runs it).
  'reference.echo',
  'reference.get-annotated-message',
  'reference.get-structured-content',
  'reference.get-sum',
  'reference.get-tiny-image',
  'reference.toggle-simulated-logging',
];

const connect = async (runtime: RuntimeProcess, token = demoTokens.procurement) => {
  const client = new Client({ name: 'catalog-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
};

const listNames = async (runtime: RuntimeProcess): Promise<string[]> => {
  const client = await connect(runtime);
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
};

const call = async (runtime: RuntimeProcess, name: string, args: Record<string, unknown>) => {
  const client = await connect(runtime);
  try {
    const answer = await client.callTool({ name, arguments: args });
    return { answer, result: ResultObject.parse(answer.structuredContent) };
  } finally {
    await client.close();
  }
};

/** Polls until the condition holds (the configuration is checked every second). */
const eventually = async <T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (!accept(last) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    last = await probe();
  }
  return last;
};

describe('the demo catalog', () => {
  let runtime: RuntimeProcess;
  beforeAll(async () => {
    runtime = await startRuntimeProcess(['--memory']);
  });
  afterAll(async () => {
    await runtime?.stop();
  });

  it(
    verifies(
      ['list.catalog-tools', 'catalog.deterministic-order'],
      'lists the demo tools, sorted, after get_execution_status',
    ),
    async () => {
      expect(await listNames(runtime)).toEqual(['get_execution_status', ...demoTools]);
    },
  );

  it(
    verifies(
      ['list.catalog-tools', 'catalog.annotations'],
      'gives each tool its schema, the result object as outputSchema and annotations',
    ),
    async () => {
      const client = await connect(runtime);
      try {
        const { tools } = await client.listTools();
        const create = tools.find((tool) => tool.name === 'erp.purchase_orders.create');
        expect(create).toMatchObject({
          title: 'Create a purchase order',
          inputSchema: {
            type: 'object',
            required: ['vendor_id', 'amount', 'currency'],
            additionalProperties: false,
            properties: {
              vendor_id: { type: 'string', 'x-identifier': true },
              amount: { 'x-amount': true },
              currency: { enum: ['EUR', 'USD', 'GBP', 'SAR', 'AED'] },
              description: { type: 'string', maxLength: 500 },
            },
          },
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
        });
        expect(create?.description).toContain('1000 or more wait for approval');
        const status = tools.find((tool) => tool.name === 'get_execution_status');
        for (const tool of tools) expect(tool.outputSchema, tool.name).toEqual(status?.outputSchema);
        expect(tools.find((tool) => tool.name === 'erp.purchase_orders.cancel')?.annotations).toMatchObject({
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
        });
        expect(tools.find((tool) => tool.name === 'erp.vendors.get')?.annotations?.readOnlyHint).toBe(true);
      } finally {
        await client.close();
      }
    },
  );

  it(
    verifies('catalog.admin-operations', 'lists the admin-described shipment lookup beside the OpenAPI tools'),
    async () => {
      const client = await connect(runtime);
      try {
        const track = (await client.listTools()).tools.find((tool) => tool.name === 'erp.shipments.track');
        expect(track).toMatchObject({
          title: 'Track a shipment',
          description: 'Where a shipment is and when it should arrive.',
          inputSchema: {
            type: 'object',
            required: ['tracking_number'],
            additionalProperties: false,
            properties: { tracking_number: { type: 'string', 'x-identifier': true } },
          },
          annotations: { readOnlyHint: true },
        });
      } finally {
        await client.close();
      }
    },
  );

  it(
    verifies('call.unknown-tool-recorded', 'answers denied / unknown_tool for an unlisted name and records it'),
    async () => {
      const { answer, result } = await call(runtime, 'erp.purchase_orders.delete_all', { confirm: true });
      expect(result).toMatchObject({ status: 'denied', code: 'unknown_tool', result: null, input_errors: null });
      expect(answer.isError).toBe(true);
      expect(result.execution_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
      const followed = await call(runtime, 'get_execution_status', { execution_id: result.execution_id });
      expect(followed.result).toEqual(result);
    },
  );

  it('runs a permitted read at once and answers with the system’s record', async () => {
    const { result } = await call(runtime, 'erp.vendors.get', { vendor_id: 'V-100' });
    expect(result).toMatchObject({ status: 'succeeded', code: null, result: { id: 'V-100', name: 'Acme Supplies' } });
  });
});

describe('a configuration that changes while the gateway runs', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let configFile: string;
  let original: string;
  let runtime: RuntimeProcess;

  beforeAll(async () => {
    folder = await temporaryFolder('gateway-catalog-');
    await cp(projectPath('examples'), folder.path, { recursive: true });
    configFile = join(folder.path, 'gateway.config.yaml');
    original = (await readFile(configFile, 'utf8')).replace('allowed_staleness: 15m', 'allowed_staleness: 3s');
    await writeFile(configFile, original);
    runtime = await startRuntimeProcess(['--memory', '--config', configFile], { POWERTOOLS_LOG_LEVEL: 'INFO' });
  });
  afterAll(async () => {
    await runtime?.stop();
    await folder?.remove();
  });

  it(verifies('control.reload', 'applies an edit without a restart'), async () => {
    await writeFile(
      configFile,
      original.replace(
        '    amount_fields: [amount]',
        '    amount_fields: [amount]\n    disabled_tools: [erp.vendors.get]',
      ),
    );
    const names = await eventually(
      () => listNames(runtime),
      (list) => !list.includes('erp.vendors.get'),
    );
    expect(names).toEqual(['get_execution_status', ...demoTools.filter((name) => name !== 'erp.vendors.get')]);
    const { result } = await call(runtime, 'erp.vendors.get', { vendor_id: 'V-100' });
    expect(result.code).toBe('unknown_tool');
    await writeFile(configFile, original);
    expect(
      await eventually(
        () => listNames(runtime),
        (list) => list.length === demoTools.length + 1,
      ),
    ).toEqual(['get_execution_status', ...demoTools]);
  });

  it(
    verifies(
      ['control.reload', 'control.staleness'],
      'keeps the last good configuration after a broken edit, until it is stale',
    ),
    async () => {
      const before = runtime.output().length;
      await writeFile(configFile, original.replace('approval_time: 24h', 'approval_time: tomorrow'));
      // Still served from the last good configuration, and the log says why the edit was refused.
      const logged = await eventually(
        async () => runtime.output().slice(before),
        (text) => text.includes('configuration change refused'),
      );
      expect(logged).toContain(
        'settings.approval_time: expected a duration such as 90s, 15m or 24h (got \\"tomorrow\\")',
      );
      expect((await listNames(runtime)).length).toBe(demoTools.length + 1);

      // Three seconds later the last good sync is too old: only the status tool remains.
      const names = await eventually(
        () => listNames(runtime),
        (list) => list.length === 1,
      );
      expect(names).toEqual(['get_execution_status']);
      const refused = await call(runtime, 'erp.purchase_orders.get', { purchase_order_id: 'PO-1' });
      expect(refused.result.code).toBe('unknown_tool');
      const followed = await call(runtime, 'get_execution_status', { execution_id: refused.result.execution_id });
      expect(followed.result).toEqual(refused.result);

      await writeFile(configFile, original);
      expect(
        await eventually(
          () => listNames(runtime),
          (list) => list.length > 1,
        ),
      ).toEqual(['get_execution_status', ...demoTools]);
    },
  );

  it(
    verifies('control.staleness', 'offers only get_execution_status while the configuration turns the gateway off'),
    async () => {
      await writeFile(configFile, original.replace('  enabled: true', '  enabled: false'));
      expect(
        await eventually(
          () => listNames(runtime),
          (list) => list.length === 1,
        ),
      ).toEqual(['get_execution_status']);
      const { result } = await call(runtime, 'erp.shipments.track', { tracking_number: '1Z999' });
      expect(result).toMatchObject({ status: 'denied', code: 'unknown_tool' });
      await writeFile(configFile, original);
      expect(
        (
          await eventually(
            () => listNames(runtime),
            (list) => list.length > 1,
          )
        ).length,
      ).toBe(demoTools.length + 1);
    },
  );
});
