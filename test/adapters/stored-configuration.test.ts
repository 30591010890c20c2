// The AWS side of the control plane against the local store: config:push writes the bundle with a
// conditional write; a function instance caches it, refreshes it, and applies the staleness rule.
// The function loads the snapshot config:push compiled, and refuses a bundle without one.
//
// Long: the table's whole life (conditional pushes, refreshes, staleness, refused bundles) and the
// real config:push run against one local store that every test shares.
import { join } from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAwsProfile, writeLocalAwsConfig } from '../../infra/local/aws-config-file.js';
import { loadSnapshotFromFile } from '../../infra/local/config-files.js';
import { ensureTables, type LocalDynamoDb, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbConfigStore } from '../../shared/adapters/dynamodb/config-store.js';
import { configTable } from '../../shared/adapters/dynamodb/tables.js';
import type { ConfigBundle, ConfigBundleStore } from '../../shared/control-plane/bundle.js';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import { ManualClock } from '../support/clock.js';
import { type CompiledBundle, compiledBundleOf, expectSameAnswers, withCompiled } from '../support/compiled-bundles.js';
import { startEverythingServer } from '../support/mcp-servers.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { adminOnlyConfig } from '../support/snapshots.js';
import { runProcess } from '../support/spawn.js';

let dynamodb: LocalDynamoDb;
let tableCount = 0;
const freshStore = async (): Promise<{ store: DynamoDbConfigStore; tableName: string }> => {
  tableCount += 1;
  const tableName = `config-${tableCount}`;
  await ensureTables(dynamodb.client, [{ definition: configTable, tableName }]);
  return { store: new DynamoDbConfigStore(dynamodb.documents, tableName), tableName };
};

const bundleOf = (text: string): Promise<CompiledBundle> => compiledBundleOf(text);

/** The real store, counting how often functions read it. */
class CountingStore implements ConfigBundleStore {
  fetches = 0;
  failing = false;
  constructor(private readonly inner: ConfigBundleStore) {}
  fetch() {
    this.fetches += 1;
    if (this.failing) return Promise.reject(new Error('table unreachable'));
    return this.inner.fetch();
  }
  push(bundle: ConfigBundle, expected: string | null) {
    return this.inner.push(bundle, expected);
  }
}

const warnings: string[] = [];
/** What each warning said besides its message (the version, the problems). */
const warningFields: unknown[] = [];
const log = {
  info: () => undefined,
  warn: (message: string, fields?: unknown) => {
    warnings.push(message);
    warningFields.push(fields);
  },
};

beforeAll(async () => {
  dynamodb = await startLocalDynamoDb({ dataPath: null });
});
afterAll(async () => {
  await dynamodb.close();
});

describe('the configuration bundle in the table', () => {
  it(
    verifies('control.stored-configuration', 'is pushed with a conditional write, so a stale push is refused'),
    async () => {
      const { store } = await freshStore();
      const first = await bundleOf(adminOnlyConfig());
      const second = await bundleOf(adminOnlyConfig({ extraTool: true }));
      expect(await store.push(first, null)).toEqual({ kind: 'pushed' });
      expect(await store.push(first, null)).toEqual({ kind: 'unchanged' });
      // A push that still believes nothing is deployed loses against the first one.
      expect(await store.push(second, null)).toEqual({ kind: 'conflict', current: first.version });
      expect(await store.push(second, 'some-older-version')).toEqual({ kind: 'conflict', current: first.version });
      expect(await store.push(second, first.version)).toEqual({ kind: 'pushed' });
      expect(await store.fetch()).toEqual(second);
    },
  );

  it(
    verifies('control.stored-configuration', 'is read once per refresh interval and new pushes are picked up'),
    async () => {
      const { store } = await freshStore();
      const counting = new CountingStore(store);
      const clock = new ManualClock();
      const plane = new StoredControlPlane(counting, {}, clock, log, 30_000);
      expect(await plane.current()).toMatchObject({ kind: 'unavailable', reason: 'not_loaded' });

      await store.push(await bundleOf(adminOnlyConfig()), null);
      clock.advance(30_000);
      const active = await plane.current();
      expect(active.kind === 'active' && active.snapshot.catalog.tools.map((tool) => tool.name)).toEqual([
        'crm.notes.add',
      ]);
      const reads = counting.fetches;
      clock.advance(10_000);
      await plane.current();
      await plane.current();
      expect(counting.fetches).toBe(reads);

      const deployed = await store.fetch();
      await store.push(await bundleOf(adminOnlyConfig({ extraTool: true })), deployed?.version ?? null);
      clock.advance(20_000);
      const updated = await plane.current();
      expect(updated.kind === 'active' && updated.snapshot.catalog.tools.map((tool) => tool.name)).toEqual([
        'crm.notes.add',
        'crm.notes.list',
      ]);
      expect(counting.fetches).toBe(reads + 1);
    },
  );

  it(
    verifies(
      ['control.staleness', 'control.stored-configuration'],
      'keeps the last good configuration only until it is stale',
    ),
    async () => {
      const { store } = await freshStore();
      const counting = new CountingStore(store);
      const clock = new ManualClock();
      const plane = new StoredControlPlane(counting, {}, clock, log, 30_000);
      await store.push(await bundleOf(adminOnlyConfig({ staleness: '90s' })), null);
      expect((await plane.current()).kind).toBe('active');

      counting.failing = true;
      clock.advance(60_000);
      expect((await plane.current()).kind).toBe('active');
      expect(warnings.at(-1)).toContain('keeping the last good one');
      clock.advance(31_000);
      expect(await plane.current()).toMatchObject({ kind: 'unavailable', reason: 'stale' });

      counting.failing = false;
      clock.advance(30_000);
      expect((await plane.current()).kind).toBe('active');
    },
  );

  it(
    verifies('control.stored-configuration', 'refuses a broken bundle and keeps serving the last good one'),
    async () => {
      const { store } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      // What the functions read is the compiled snapshot: its configuration data is checked again there.
      const broken = withCompiled(good, (compiled) => ({
        ...compiled,
        version: 'broken-1',
        config: { ...compiled.config, settings: { approval_time: 'soon' } },
      }));
      await store.push({ ...broken, version: 'broken-1' }, good.version);
      clock.advance(1_000);
      const state = await plane.current();
      expect(state.kind === 'active' && state.snapshot.version).toBe(good.version);
      expect(warnings.at(-1)).toContain('not valid here');
    },
  );

  it(
    verifies(
      ['perf.compiled-snapshot', 'control.stored-configuration'],
      'refuses a bundle pushed by an older config:push, saying to push again, and keeps the last good one',
    ),
    async () => {
      const { store } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      // An older config:push wrote the raw files only, which the functions no longer parse.
      const { compiled: _compiled, ...older } = await bundleOf(adminOnlyConfig({ extraTool: true }));
      await store.push(older, good.version);
      expect((await store.fetch())?.compiled).toBeUndefined();
      clock.advance(1_000);
      const state = await plane.current();
      expect(state.kind === 'active' && state.snapshot.version).toBe(good.version);
      expect(state.kind === 'active' && state.snapshot.catalog.tools.map((tool) => tool.name)).toEqual([
        'crm.notes.add',
      ]);
      expect(warnings.at(-1)).toBe(
        'the pushed configuration was pushed by an older config:push, without the compiled snapshot the functions load; run `npm run config:push` again; keeping the last good one',
      );
      // Pushing again writes the same version, compiled, and the functions take it.
      const again = await bundleOf(adminOnlyConfig({ extraTool: true }));
      expect(again.version).toBe(older.version);
      expect(await store.push(again, older.version)).toEqual({ kind: 'pushed' });
      expect(await store.push(again, older.version)).toEqual({ kind: 'unchanged' });
      clock.advance(1_000);
      const taken = await plane.current();
      expect(taken.kind === 'active' && taken.snapshot.catalog.tools.map((tool) => tool.name)).toEqual([
        'crm.notes.add',
        'crm.notes.list',
      ]);
    },
  );

  it(
    verifies(
      ['perf.ahead-of-time-validators', 'control.stored-configuration'],
      'refuses a bundle whose validator code asks for an unknown module, and keeps the last good one',
    ),
    async () => {
      const { store } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      const next = await bundleOf(adminOnlyConfig({ extraTool: true }));
      const tampered = withCompiled(next, (compiled) => ({
        ...compiled,
        tools: compiled.tools.map((tool) => ({ ...tool, validator: `require("fs"); ${tool.validator}` })),
      }));
      await store.push(tampered, good.version);
      clock.advance(1_000);
      const state = await plane.current();
      expect(state.kind === 'active' && state.snapshot.version).toBe(good.version);
      expect(warnings.at(-1)).toContain('not valid here');
      expect(JSON.stringify(warningFields.at(-1))).toContain(
        'the validator of crm.notes.add is refused: its code asks for the module \\"fs\\"',
      );
    },
  );

  it(verifies('control.stored-configuration', 'survives the table going away, then goes stale'), async () => {
    const { store, tableName } = await freshStore();
    const clock = new ManualClock();
    const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
    await store.push(await bundleOf(adminOnlyConfig({ staleness: '5s' })), null);
    expect((await plane.current()).kind).toBe('active');
    await dynamodb.client.send(new DeleteTableCommand({ TableName: tableName }));
    clock.advance(2_000);
    expect((await plane.current()).kind).toBe('active');
    clock.advance(4_000);
    expect(await plane.current()).toMatchObject({ kind: 'unavailable', reason: 'stale' });
  });
});

describe('npm run config:push', () => {
  // The store answers only its credential: the push reads it as an operator would, from the AWS
  // config file the runtime writes, named by the AWS environment.
  let awsConfig: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    awsConfig = await temporaryFolder('gateway-push-');
    await writeLocalAwsConfig(join(awsConfig.path, 'aws-config'), {
      credentials: dynamodb.credentials,
      dynamodbEndpoint: dynamodb.endpoint,
      stepFunctionsEndpoint: 'http://127.0.0.1:9',
    });
  });
  afterAll(async () => {
    await awsConfig.remove();
  });
  const push = (args: string[], extra: Record<string, string> = {}) => {
    const {
      AWS_ACCESS_KEY_ID: _id,
      AWS_SECRET_ACCESS_KEY: _secret,
      AWS_SESSION_TOKEN: _token,
      ...environment
    } = process.env;
    return runProcess(process.execPath, ['--import', 'tsx', projectPath('scripts/config-push.ts'), ...args], {
      cwd: projectPath(),
      env: {
        ...environment,
        AWS_CONFIG_FILE: join(awsConfig.path, 'aws-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(awsConfig.path, 'no-credentials'),
        AWS_PROFILE: localAwsProfile,
        ...extra,
      },
    });
  };

  it(
    verifies(
      ['control.stored-configuration', 'systems.mcp-config-tools', 'perf.compiled-snapshot'],
      "pushes the demo configuration with its OpenAPI document and its MCP server's tools, once, compiled",
    ),
    async () => {
      const { store, tableName } = await freshStore();
      const reference = await startEverythingServer();
      try {
        // Without the MCP server's address nothing is pushed: its tools would be missing.
        const refused = await push(['--table', tableName, '--endpoint', dynamodb.endpoint]);
        expect(refused.code).toBe(1);
        expect(refused.output).toContain('reference: ${env:DEMO_MCP_URL} is not set here');
        expect(await store.fetch()).toBeUndefined();

        const withMcp = { DEMO_MCP_URL: reference.url };
        const first = await push(
          ['--table', tableName, '--endpoint', dynamodb.endpoint, 'examples/gateway.config.yaml'],
          withMcp,
        );
        expect(first.code, first.output).toBe(0);
        expect(first.output).toMatch(/Pushed examples\/gateway.config.yaml as version [0-9a-f]{16} \(17 tools\)/);
        const bundle = await store.fetch();
        expect(bundle?.config_file).toBe('gateway.config.yaml');
        expect(Object.keys(bundle?.files ?? {})).toEqual(['erp/openapi.yaml', 'policies/demo.cedar']);
        expect(bundle?.config_text).toContain('${env:DEMO_ERP_URL}');
        expect(bundle?.mcp_catalogs?.reference?.specs.map((spec) => spec.name)).toContain('get-sum');

        const again = await push(['--table', tableName, '--endpoint', dynamodb.endpoint], withMcp);
        expect(again.code).toBe(0);
        expect(again.output).toContain('is already deployed');

        // A function reading it resolves the references from its own environment, and never discovers.
        const plane = new StoredControlPlane(
          store,
          {
            DEMO_ERP_URL: 'http://erp.internal',
            DEMO_CALL_TOOL_URL: 'http://tools.internal',
            DEMO_MCP_URL: 'http://mcp.internal/mcp',
          },
          new ManualClock(),
          log,
        );
        const state = await plane.current();
        expect(state.kind === 'active' ? state.snapshot.config.systems[0] : null).toMatchObject({
          base_url: 'http://erp.internal',
        });
        expect(state.kind === 'active' && state.snapshot.version).toBe(bundle?.version);
        expect(state.kind === 'active' && state.snapshot.catalog.tools.map((tool) => tool.name)).toContain(
          'reference.get-sum',
        );
        // It answers as the local runtime reading the same files with the same MCP catalog.
        const local = await loadSnapshotFromFile(
          projectPath('examples', 'gateway.config.yaml'),
          {
            DEMO_ERP_URL: 'http://erp.internal',
            DEMO_CALL_TOOL_URL: 'http://tools.internal',
            DEMO_MCP_URL: 'http://mcp.internal/mcp',
          },
          {},
          new Map(Object.entries(bundle?.mcp_catalogs ?? {}).map(([key, catalog]) => [key, catalog.specs])),
        );
        if (!local.ok || state.kind !== 'active') throw new Error('expected both snapshots to load');
        const compared = expectSameAnswers(state.snapshot, local.snapshot);
        expect(compared.codes.size).toBeGreaterThan(5);
        expect(compared.decisions.size).toBeGreaterThan(3);
      } finally {
        await reference.close();
      }
    },
  );

  it(verifies('control.stored-configuration', 'pushes nothing from an invalid configuration'), async () => {
    const { store, tableName } = await freshStore();
    const { writeFile, mkdtemp } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const folder = await mkdtemp(join(tmpdir(), 'gateway-push-'));
    await writeFile(join(folder, 'broken.yaml'), 'systems:\n  - key: erp\n    base_url: http://x\n');
    const result = await push(['--table', tableName, '--endpoint', dynamodb.endpoint, join(folder, 'broken.yaml')]);
    expect(result.code).toBe(1);
    expect(result.output).toContain('nothing was pushed');
    expect(result.output).toContain('systems[0]: a system needs an openapi document or at least one operation');
    expect(await store.fetch()).toBeUndefined();
  });
});
