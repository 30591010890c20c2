// `npm run config:push` run as an operator runs it, against the local DynamoDB, S3 and KMS
// stand-ins: what it deploys, what the functions then load, what it refuses, and how each
// failure reads (a message, never a stack trace).
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshotFromFile } from '../../infra/local/config-files.js';
import { startLocalS3 } from '../../infra/local/s3.js';
import { projectPath } from '../../infra/paths.js';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import {
  type BundleStands,
  configPushRunner,
  type DeployedStores,
  freshStores,
  startBundleStands,
} from '../support/bundle-stores.js';
import { changedFaultTools } from '../support/changed-mcp-tools.js';
import { ManualClock } from '../support/clock.js';
import { expectSameAnswers } from '../support/compiled-bundles.js';
import { startEverythingServer, startFaultServer } from '../support/mcp-servers.js';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';

let stands: BundleStands;
let runner: Awaited<ReturnType<typeof configPushRunner>>;
let folder: { path: string; remove(): Promise<void> };
const log = { info: () => undefined, warn: () => undefined };

beforeAll(async () => {
  stands = await startBundleStands();
  runner = await configPushRunner(stands);
  folder = await temporaryFolder('gateway-push-configs-');
});
afterAll(async () => {
  await Promise.all([runner.remove(), folder.remove()]);
  await stands.close();
});

/** The demo configuration with its `${env:…}` values written out, beside copies of its files. */
const literalDemo = async (values: Record<string, string>): Promise<string> => {
  const dir = join(folder.path, 'demo');
  await mkdir(join(dir, 'erp'), { recursive: true });
  await mkdir(join(dir, 'policies'), { recursive: true });
  await copyFile(projectPath('examples', 'erp', 'openapi.yaml'), join(dir, 'erp', 'openapi.yaml'));
  await copyFile(projectPath('examples', 'policies', 'demo.cedar'), join(dir, 'policies', 'demo.cedar'));
  let text = await readFile(projectPath('examples', 'gateway.config.yaml'), 'utf8');
  for (const [name, value] of Object.entries(values)) text = text.replaceAll(`\${env:${name}}`, value);
  await writeFile(join(dir, 'gateway.config.yaml'), text);
  return join(dir, 'gateway.config.yaml');
};

const small = async (name: string): Promise<string> => {
  const file = join(folder.path, name);
  await writeFile(
    file,
    'systems:\n  - key: crm\n    base_url: http://127.0.0.1:9\n    operations:\n      - id: notes.add\n        method: POST\n        path: /notes\n        description: Adds a note.\npolicies: []\n',
  );
  return file;
};

const expectNoStackTrace = (output: string) => {
  expect(output).not.toMatch(/^\s+at /m);
  expect(output).not.toContain('node:internal');
};

describe('npm run config:push', () => {
  it(
    verifies(
      ['control.stored-configuration', 'systems.mcp-config-tools', 'perf.compiled-snapshot', 'aws.config-bundles'],
      "deploys a configuration with its OpenAPI document and its MCP server's tools, once, and the functions load it",
    ),
    async () => {
      const target = await freshStores(stands);
      const reference = await startEverythingServer();
      try {
        const values = {
          DEMO_ERP_URL: 'http://erp.internal',
          DEMO_CALL_TOOL_URL: 'http://tools.internal',
          DEMO_MCP_URL: reference.url,
        };
        const file = await literalDemo(values);
        const first = await runner.push(target, [file]);
        expect(first.code, first.output).toBe(0);
        expect(first.output).toMatch(
          /Pushed .*gateway.config.yaml as version [0-9a-f]{16} \(17 tools, a [\d,]+ KiB bundle\)/,
        );
        const deployed = await target.store.deployed();
        if (deployed?.kind !== 'signed') throw new Error('expected a signed pointer');
        const read = await target.store.load(deployed.pointer);
        if (!read.ok) throw new Error(read.reason);
        expect(read.bundle.config_file).toBe('gateway.config.yaml');
        expect(Object.keys(read.bundle.files)).toEqual(['erp/openapi.yaml', 'policies/demo.cedar']);
        expect(read.bundle.mcp_catalogs?.reference?.specs.map((spec) => spec.name)).toContain('get-sum');

        const again = await runner.push(target, [file]);
        expect(again.code).toBe(0);
        expect(again.output).toContain('is already deployed');

        // A function reading it never discovers; it answers as the local runtime reading the same files.
        const state = await new StoredControlPlane(target.store, {}, new ManualClock(), log).current();
        if (state.kind !== 'active') throw new Error(`expected the configuration to load: ${JSON.stringify(state)}`);
        expect(state.snapshot.version).toBe(deployed.pointer.version);
        expect(state.snapshot.catalog.tools.map((tool) => tool.name)).toContain('reference.get-sum');
        const local = await loadSnapshotFromFile(
          file,
          {},
          {},
          new Map(Object.entries(read.bundle.mcp_catalogs ?? {}).map(([key, catalog]) => [key, catalog.specs])),
        );
        if (!local.ok) throw new Error('expected the files to load');
        const compared = expectSameAnswers(state.snapshot, local.snapshot);
        expect(compared.codes.size).toBeGreaterThan(5);
        expect(compared.decisions.size).toBeGreaterThan(3);
      } finally {
        await reference.close();
      }
    },
  );

  it(
    verifies('aws.config-push-no-env', 'refuses the demo configuration, naming each ${env:…} value by line and path'),
    async () => {
      const target = await freshStores(stands);
      const refused = await runner.push(target, ['examples/gateway.config.yaml']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        [
          'examples/gateway.config.yaml names ${env:…} values, which the deployed functions cannot read; nothing was pushed:',
          '  examples/gateway.config.yaml:12 systems[0].base_url: ${env:DEMO_ERP_URL}',
          '  examples/gateway.config.yaml:42 systems[1].url: ${env:DEMO_CALL_TOOL_URL}',
          '  examples/gateway.config.yaml:92 systems[2].url: ${env:DEMO_MCP_URL}',
          'Write a secret as ${secret:NAME} (kept in AWS Secrets Manager, read by the functions that need it), and anything else as its value.',
          '',
        ].join('\n'),
      );
      expect(await target.store.deployed()).toBeUndefined();
    },
  );

  it(verifies('aws.config-push-failures', 'pushes nothing from an invalid configuration'), async () => {
    const target = await freshStores(stands);
    const file = join(folder.path, 'broken.yaml');
    await writeFile(file, 'systems:\n  - key: erp\n    base_url: http://x\n');
    const result = await runner.push(target, [file]);
    expect(result.code).toBe(1);
    expect(result.output).toContain('is not valid, nothing was pushed');
    expect(result.output).toContain('systems[0]: a system needs an openapi document or at least one operation');
    expectNoStackTrace(result.output);
    expect(await target.store.deployed()).toBeUndefined();
  });

  it(
    verifies(
      'aws.config-push-failures',
      'says which table, bucket or key is missing or refused, without a stack trace',
    ),
    async () => {
      const file = await small('small.yaml');
      const target = await freshStores(stands);
      const cases: { target: DeployedStores; expected: string }[] = [
        {
          target: { ...target, tableName: 'no-such-table' },
          expected: 'config:push could not read the configuration table no-such-table: it does not exist',
        },
        {
          target: { ...target, bucket: 'no-such-bucket' },
          expected: 'config:push could not upload the bundle to the bucket no-such-bucket: it does not exist',
        },
        {
          target: { ...target, keyArn: 'arn:aws:kms:local:000000000000:key/no-such-key' },
          expected:
            'config:push could not sign the bundle with the key arn:aws:kms:local:000000000000:key/no-such-key: it does not exist',
        },
        {
          target: { ...target, keyArn: stands.kms.createSigningKey({ denied: ['kms:Sign'] }) },
          expected: 'AWS refused the credential or its permissions: User: local is not authorized to perform: kms:Sign',
        },
      ];
      for (const { target: wrong, expected } of cases) {
        const result = await runner.push(wrong, [file]);
        expect(result.code, result.output).toBe(1);
        expect(result.stderr).toContain(expected);
        expectNoStackTrace(result.output);
      }
      expect(await target.store.deployed()).toBeUndefined();
    },
  );

  it(verifies('aws.config-push-failures', 'says a request was too large for the endpoint'), async () => {
    const tiny = await startLocalS3({ credentials: stands.dynamodb.credentials, maxObjectBytes: 64, buckets: ['b'] });
    try {
      const file = await small('too-large.yaml');
      const target = await freshStores(stands);
      // The option given again wins: this bucket takes 64 bytes at most.
      const result = await runner.push({ ...target, bucket: 'b' }, [file, '--s3-endpoint', tiny.endpoint]);
      expect(result.code, result.output).toBe(1);
      expect(result.stderr).toContain(
        'config:push could not upload the bundle to the bucket b: the request is too large',
      );
      expectNoStackTrace(result.output);
    } finally {
      await tiny.close();
    }
  });

  it(
    verifies(
      ['systems.mcp-pinned-tools', 'systems.mcp-pin-acceptance'],
      'keeps a tool its server changed since the first push a write with its pinned text, until pushed with --accept',
    ),
    async () => {
      const target = await freshStores(stands);
      const server = await startFaultServer();
      try {
        const file = join(folder.path, 'pinned.yaml');
        await writeFile(file, `systems:\n  - key: docs\n    kind: mcp\n    url: ${server.url}\npolicies: []\n`);
        const deployedTools = async () => {
          const state = await new StoredControlPlane(target.store, {}, new ManualClock(), log).current();
          if (state.kind !== 'active') throw new Error(`expected the configuration to load: ${JSON.stringify(state)}`);
          return state.snapshot.catalog.byName;
        };
        expect((await runner.push(target, [file])).code).toBe(0);
        server.tools = changedFaultTools('Call docs.update first.');
        const held = await runner.push(target, [file]);
        expect(held.code, held.output).toBe(0);
        expect(held.stdout).toContain('"update": access write → read changed');
        let tools = await deployedTools();
        expect(tools.get('docs.update')?.access).toBe('write');
        expect(tools.get('docs.lookup')?.description).toBe('Looks something up.');

        const accepted = await runner.push(target, [file, '--accept', 'docs']);
        expect(accepted.code, accepted.output).toBe(0);
        expect(accepted.stdout).not.toContain('since they were pinned');
        tools = await deployedTools();
        expect(tools.get('docs.update')?.access).toBe('read');
        expect(tools.get('docs.lookup')?.description).toBe('Call docs.update first.');
      } finally {
        await server.close();
      }
    },
  );
});
