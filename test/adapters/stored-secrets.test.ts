// `${secret:…}` references in the deployed functions: read from Secrets Manager by the control plane
// (Powertools Parameters and the SDK client against the local stand-in, over signed HTTP), cached,
// read again past their age or when a system refuses the credentials, and never printed.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { listen } from '../../infra/local/net.js';
import { type LocalSecretsManager, startLocalSecretsManager } from '../../infra/local/secrets-manager.js';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import { SecretsManagerSecrets } from '../../shared/adapters/secrets-manager-secrets.js';
import type { ResolvedOpenApiSystem } from '../../shared/config/resolved.js';
import type { ConfigBundleStore } from '../../shared/control-plane/bundle.js';
import type { ControlPlaneState } from '../../shared/control-plane/control-plane.js';
import { environmentReferences } from '../../shared/control-plane/environment-references.js';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import { buildRequest } from '../../shared/invoke/call.js';
import { reportingRefusedCredentials } from '../../shared/invoke/system-client.js';
import { ManualClock } from '../support/clock.js';
import { type CompiledBundle, compiledBundleOf } from '../support/compiled-bundles.js';
import { verifies } from '../support/requirements.js';
import { secretsConfig as configText } from '../support/snapshots.js';

const prefix = 'approval-gateway/Test/';

/** The pushed bundle, as the table and the bucket would hand it to a function (already checked). */
const storeOf = (bundle: CompiledBundle): ConfigBundleStore => {
  const pointer = {
    version: bundle.version,
    object_key: `bundles/${bundle.version}`,
    object_version: '1',
    sha256: '0'.repeat(64),
    signature: 'c2lnbmVk',
    pushed_at: bundle.pushed_at,
  };
  return {
    deployed: async () => ({ kind: 'signed', pointer }),
    load: async () => ({ ok: true, bundle }),
    push: async () => ({ kind: 'unchanged' }),
  };
};

const logged: { message: string; fields: unknown }[] = [];
const log = {
  info: (message: string, fields?: unknown) => void logged.push({ message, fields }),
  warn: (message: string, fields?: unknown) => void logged.push({ message, fields }),
};

const systemOf = (state: ControlPlaneState, key: string): ResolvedOpenApiSystem => {
  if (state.kind !== 'active') throw new Error(`expected an active configuration, got ${state.reason}`);
  const system = state.snapshot.config.systems.find((candidate) => candidate.key === key);
  if (system?.kind !== 'openapi') throw new Error(`no openapi system ${key}`);
  return system;
};

let secretsManager: LocalSecretsManager;
let client: SecretsManagerClient;
/** The ERP's answer to the next calls, and the authorization each call carried. */
let erpStatus = 200;
const erpSeen: IncomingHttpHeaders[] = [];
let erp: Awaited<ReturnType<typeof listen>>;
let erpUrl: string;

beforeAll(async () => {
  secretsManager = await startLocalSecretsManager();
  client = new SecretsManagerClient(localAwsClientConfig(secretsManager.endpoint, secretsManager.credentials));
  erp = await listen(
    createServer((request, response) => {
      erpSeen.push(request.headers);
      response.writeHead(erpStatus, { 'content-type': 'application/json' }).end('[]');
    }),
    '127.0.0.1',
    0,
  );
  erpUrl = `http://127.0.0.1:${erp.port}`;
});
afterAll(async () => {
  client.destroy();
  await secretsManager.close();
  await erp.close();
});

const planeOf = async (maxAgeSeconds = 300) => {
  const clock = new ManualClock();
  const bundle = await compiledBundleOf(configText(erpUrl));
  const plane = new StoredControlPlane(
    storeOf(bundle),
    {},
    clock,
    log,
    30_000,
    new SecretsManagerSecrets(client, prefix, maxAgeSeconds),
  );
  return { clock, plane };
};

const reads = (name: string) =>
  secretsManager.calls.filter((call) => call.action === 'secretsmanager:GetSecretValue' && call.secretId === name)
    .length;

describe('secrets in the deployed functions', () => {
  it(
    verifies(
      ['secrets.deployed-read', 'secrets.stored-references'],
      'are read from Secrets Manager under the stack prefix, and a JSON field is picked',
    ),
    async () => {
      secretsManager.put(`${prefix}erp/token`, 'erp-token-1');
      secretsManager.put(`${prefix}crm`, JSON.stringify({ password: 'crm-pass', other: 'x' }));
      const { plane } = await planeOf();
      const state = await plane.current();
      expect(systemOf(state, 'erp').credentials).toEqual({ type: 'bearer', token: 'erp-token-1' });
      expect(systemOf(state, 'crm').credentials).toEqual({ type: 'basic', username: 'gateway', password: 'crm-pass' });
      // Only the names under the prefix were asked for.
      expect(new Set(secretsManager.calls.map((call) => call.secretId))).toEqual(
        new Set([`${prefix}erp/token`, `${prefix}crm`]),
      );
    },
  );

  it(
    verifies('secrets.deployed-read', 'reach the system, are cached, and are read fresh after the system answers 401'),
    async () => {
      secretsManager.put(`${prefix}erp/token`, 'erp-token-1');
      secretsManager.put(`${prefix}crm`, JSON.stringify({ password: 'crm-pass' }));
      const { clock, plane } = await planeOf();
      const systems = reportingRefusedCredentials(new HttpSystemClient(), () => plane.credentialsRefused());
      const call = async () => {
        const state = await plane.current();
        const tool =
          state.kind === 'active' ? state.snapshot.catalog.tools.find((t) => t.name === 'erp.orders.list') : null;
        if (tool?.target.kind !== 'http') throw new Error('expected the erp tool');
        return systems.send(
          buildRequest(tool.target, systemOf(state, 'erp'), {}, { executionId: 'e1', traceparent: '00-1-2-01' }),
        );
      };
      erpStatus = 200;
      erpSeen.length = 0;
      expect(await call()).toMatchObject({ kind: 'response', status: 200 });
      expect(erpSeen.at(-1)?.authorization).toBe('Bearer erp-token-1');
      const readsAfterLoad = reads(`${prefix}erp/token`);

      // Rotated in Secrets Manager: refreshes within the cache's age keep the cached value.
      secretsManager.put(`${prefix}erp/token`, 'erp-token-2');
      clock.advance(30_000);
      await call();
      expect(erpSeen.at(-1)?.authorization).toBe('Bearer erp-token-1');
      expect(reads(`${prefix}erp/token`)).toBe(readsAfterLoad);

      // The system refuses the old token: the next request reads the secrets fresh and uses the new one.
      erpStatus = 401;
      expect(await call()).toMatchObject({ kind: 'response', status: 401 });
      erpStatus = 200;
      await call();
      expect(erpSeen.at(-1)?.authorization).toBe('Bearer erp-token-2');
      expect(reads(`${prefix}erp/token`)).toBe(readsAfterLoad + 1);

      // A second refusal within the minute does not read again.
      erpStatus = 401;
      await call();
      await call();
      expect(reads(`${prefix}erp/token`)).toBe(readsAfterLoad + 1);
      erpStatus = 200;
    },
  );

  it(verifies('secrets.deployed-read', 'past the cache age, a changed value makes a new snapshot'), async () => {
    secretsManager.put(`${prefix}erp/token`, 'erp-token-a');
    secretsManager.put(`${prefix}crm`, JSON.stringify({ password: 'crm-pass' }));
    const { clock, plane } = await planeOf(60);
    const before = await plane.current();
    expect(systemOf(before, 'erp').credentials).toEqual({ type: 'bearer', token: 'erp-token-a' });
    secretsManager.put(`${prefix}erp/token`, 'erp-token-b');
    // Powertools keeps values by the wall clock: within the age of one minute, the cached value.
    clock.advance(30_000);
    expect(systemOf(await plane.current(), 'erp').credentials).toEqual({ type: 'bearer', token: 'erp-token-a' });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      clock.advance(30_000);
      expect(systemOf(await plane.current(), 'erp').credentials).toEqual({ type: 'bearer', token: 'erp-token-b' });
    } finally {
      vi.useRealTimers();
    }
  });

  it(
    verifies(
      'secrets.stored-references',
      'a missing secret or field refuses the configuration, naming it and never a value',
    ),
    async () => {
      secretsManager.put(`${prefix}erp/token`, 'never-printed-token');
      secretsManager.put(`${prefix}crm`, JSON.stringify({ user: 'never-printed-user' }));
      logged.length = 0;
      const { plane } = await planeOf();
      expect(await plane.current()).toMatchObject({ kind: 'unavailable', reason: 'not_loaded' });
      const text = JSON.stringify(logged);
      expect(text).toContain('the secret crm has no text field \\"password\\"');
      expect(text).not.toContain('never-printed');
    },
  );

  it(verifies('secrets.deployed-read', 'a function without the prefix reads none'), async () => {
    const before = secretsManager.calls.length;
    const bundle = await compiledBundleOf(configText(erpUrl));
    const plane = new StoredControlPlane(storeOf(bundle), {}, new ManualClock(), log, 30_000);
    const state = await plane.current();
    expect(state.kind).toBe('active');
    expect(systemOf(state, 'erp').credentials).toEqual({ type: 'bearer', token: '(unset variable)' });
    expect(secretsManager.calls.length).toBe(before);
  });

  it(
    verifies('secrets.local-only-values', "leave agents' tokens, passwords and the data key to the local runtime"),
    async () => {
      secretsManager.put(`${prefix}erp/token`, 'erp-token-1');
      secretsManager.put(`${prefix}crm`, JSON.stringify({ password: 'crm-pass' }));
      const text = configText(erpUrl).replace(
        'policies: []',
        [
          'agents:',
          '  - id: procurement-agent',
          '    subject: 4example-client-id',
          '    token: ${secret:agents/procurement}',
          'approvers:',
          '  - id: farah',
          '    password: ${env:FARAH_PASSWORD}',
          'policies: []',
        ].join('\n'),
      );
      expect(environmentReferences(text).map((reference) => reference.path)).toEqual([]);
      expect(environmentReferences(text.replace(erpUrl, '${env:ERP_URL}')).map((found) => found.path)).toEqual([
        'systems[0].base_url',
      ]);
      const before = secretsManager.calls.length;
      const plane = new StoredControlPlane(
        storeOf(await compiledBundleOf(text)),
        {},
        new ManualClock(),
        log,
        30_000,
        new SecretsManagerSecrets(client, prefix, 300),
      );
      const state = await plane.current();
      expect(state.kind === 'active' && state.snapshot.config.agents.map((agent) => agent.subject)).toEqual([
        '4example-client-id',
      ]);
      expect(
        secretsManager.calls
          .slice(before)
          .map((call) => call.secretId)
          .sort(),
      ).toEqual([`${prefix}crm`, `${prefix}erp/token`]);
    },
  );
});
