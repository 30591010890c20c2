// The snapshot the deployed functions load: compiled by config:push from the files, loaded
// without parsing, and answering as the snapshot the local runtime reads from the same files:
// catalog, tools, policy decisions and input errors. References stay references until the
// function reads them from its own environment; what the functions cannot take is refused.
// Long: one scenario per way the compiled form can differ from the files, on the same demo.
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { mcpToolSpecs } from '../../../shared/catalog/mcp-tools.js';
import {
  type CompiledSnapshot,
  decodeCompiledSnapshot,
  encodeCompiledSnapshot,
  maxCompiledSnapshotBytes,
} from '../../../shared/control-plane/bundle.js';
import { loadCompiledSnapshot } from '../../../shared/control-plane/compiled-snapshot.js';
import type { GatewaySnapshot } from '../../../shared/control-plane/gateway-snapshot.js';
import { type DiscoveredTools, loadSnapshot } from '../../../shared/control-plane/snapshot.js';
import {
  type CompiledBundle,
  compiledBundleOf,
  compiledOf,
  expectSameAnswers,
  withCompiled,
} from '../../support/compiled-bundles.js';
import { demoAddresses } from '../../support/demo-environment.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';

const examples = new URL('../../../examples/', import.meta.url);

/** Text meant to end a string, a comment or a template in generated code and run what follows. */
const injections = [
  'a"];globalThis.injected.push(1);//',
  '*/globalThis.injected.push(2);/*',
  '`;globalThis.injected.push(3);`',
  '${globalThis.injected.push(4)}',
  '\u2028globalThis.injected.push(5)//',
];

/** What the demo's MCP server might list: an ordinary tool, and one whose schema is an attack. */
const referenceTools = mcpToolSpecs('reference', [
  {
    name: 'get-sum',
    description: 'The sum of two numbers.',
    inputSchema: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'number' }, b: { type: 'number' } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'hostile',
    description: injections.join(' '),
    inputSchema: {
      type: 'object',
      required: injections,
      additionalProperties: false,
      properties: Object.fromEntries(
        injections.map((text) => [text, { type: 'string', enum: [text], default: text, title: text, maxLength: 50 }]),
      ),
    },
    annotations: { readOnlyHint: false },
  },
]);

const demo = async (): Promise<{ text: string; files: Record<string, string>; discovered: DiscoveredTools }> => {
  const files: Record<string, string> = {};
  for (const path of ['erp/openapi.yaml', 'policies/demo.cedar']) {
    files[path] = await readFile(new URL(path, examples), 'utf8');
  }
  return {
    text: await readFile(new URL('gateway.config.yaml', examples), 'utf8'),
    files,
    discovered: new Map([['reference', referenceTools.specs]]),
  };
};

const loaded = (bundle: CompiledBundle, environment: Readonly<Record<string, string>>): GatewaySnapshot => {
  const outcome = loadCompiledSnapshot(bundle, environment);
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
  return outcome.snapshot;
};

describe('the compiled snapshot', () => {
  it(
    verifies(
      ['perf.compiled-snapshot', 'perf.ahead-of-time-validators', 'control.stored-configuration'],
      'of the demo answers as the demo read from its files: catalog, tools, decisions, input errors',
    ),
    async () => {
      const { text, files, discovered } = await demo();
      expect(referenceTools.leftOut).toEqual([]);
      const bundle = await compiledBundleOf(text, { files, discovered, file: 'gateway.config.yaml' });
      const canary = globalThis as { injected?: number[] };
      canary.injected = [];
      try {
        const aws = loaded(bundle, demoAddresses);
        const local = await loadSnapshot({
          text,
          file: 'gateway.config.yaml',
          environment: demoAddresses,
          files: { read: async (path) => files[path] },
          discovered,
        });
        if (!local.ok) throw new Error(JSON.stringify(local.problems));
        expect(aws.catalog.tools.map((tool) => tool.name)).toEqual(
          expect.arrayContaining([
            'erp.purchase_orders.create',
            'everything.echo',
            'reference.get-sum',
            'reference.hostile',
          ]),
        );
        const compared = expectSameAnswers(aws, local.snapshot);
        expect([...compared.codes]).toEqual(
          expect.arrayContaining([
            'missing_field',
            'unknown_field',
            'wrong_type',
            'not_allowed_value',
            'too_long',
            'invalid_decimal',
            'forbidden_key',
          ]),
        );
        expect([...compared.decisions]).toEqual(
          expect.arrayContaining([
            'allow null',
            'allow {"staff":"finance","customer":false,"quorum":1,"escalation":null,"reauth_ms":null,"acr":null}',
            'allow {"staff":"finance","customer":false,"quorum":2,"escalation":{"after_ms":14400000,"group":"operations"},"reauth_ms":300000,"acr":null}',
            'allow {"staff":"finance","customer":true,"quorum":1,"escalation":null,"reauth_ms":null,"acr":null}',
            'allow {"staff":null,"customer":true,"quorum":1,"escalation":null,"reauth_ms":null,"acr":null}',
            'deny forbidden',
            'deny no_permit',
          ]),
        );
        expect(canary.injected).toEqual([]);
      } finally {
        delete canary.injected;
      }
    },
  );

  const withSecrets = [
    'systems:',
    '  - key: erp',
    '    base_url: ${env:ERP_URL}',
    '    credentials: { type: bearer, token: "${env:ERP_TOKEN}" }',
    '    operations:',
    '      - { id: orders.list, method: GET, path: /orders, description: Lists orders. }',
    'agents:',
    '  - { id: a1, token: "${env:AGENT_ONE}" }',
    '  - { id: a2, token: "${env:AGENT_TWO}" }',
    'policies: []',
    '',
  ].join('\n');

  it(
    verifies(
      ['perf.compiled-snapshot', 'config.secret-references'],
      'keeps ${env:…} references as written, and the function resolves them from its own environment',
    ),
    async () => {
      // Even pushed from a machine where the variables are set, the bundle holds the references.
      const bundle = await compiledBundleOf(withSecrets, {
        environment: { ERP_URL: 'http://push.example', ERP_TOKEN: 'push-machine-secret' },
      });
      const compiled = JSON.stringify(compiledOf(bundle));
      expect(compiled).toContain('${env:ERP_TOKEN}');
      expect(compiled).not.toContain('push-machine-secret');
      expect(compiled).not.toContain('push.example');

      const environment = {
        ERP_URL: 'http://erp.internal/',
        ERP_TOKEN: 'function-secret',
        AGENT_ONE: 'token-one',
        AGENT_TWO: 'token-two',
      };
      const aws = loaded(bundle, environment);
      expect(aws.config.systems[0]).toMatchObject({
        base_url: 'http://erp.internal',
        credentials: { type: 'bearer', token: 'function-secret' },
      });
      // Agents' tokens are the local runtime's only: the function leaves them unread.
      const local = (await snapshotOf(withSecrets, { environment })).config;
      expect(aws.config).toEqual({
        ...local,
        agents: local.agents.map((agent) => ({ ...agent, token: '(unset variable)' })),
      });
    },
  );

  it(
    verifies(
      ['perf.compiled-snapshot', 'config.unique-tokens'],
      "refuses what the function's environment gets wrong with the local runtime's problems, lines included",
    ),
    async () => {
      const bundle = await compiledBundleOf(withSecrets, { file: 'gateway.config.yaml' });
      const environments = [
        {},
        { ERP_URL: 'ftp://erp.internal', ERP_TOKEN: 't', AGENT_ONE: 'same', AGENT_TWO: 'same' },
      ];
      for (const environment of environments) {
        const local = await loadSnapshot({
          text: withSecrets,
          file: 'gateway.config.yaml',
          environment,
          files: { read: async () => undefined },
        });
        const aws = loadCompiledSnapshot(bundle, environment);
        if (local.ok) throw new Error('expected the local runtime to refuse it');
        // The same problems, but for the agents' tokens, which the function leaves unread.
        expect(aws).toEqual({
          ok: false,
          problems: local.problems.filter((problem) => !/^agents\[\d+\]\.token$/.test(problem.path)),
        });
      }
      expect(loadCompiledSnapshot(bundle, {})).toMatchObject({
        ok: false,
        problems: expect.arrayContaining([
          {
            file: 'gateway.config.yaml',
            path: 'systems[0].credentials.token',
            line: 4,
            message: 'the environment variable ERP_TOKEN is not set',
          },
        ]),
      });
    },
  );

  it(
    verifies('perf.compiled-snapshot', 'refuses a compiled snapshot it cannot read, saying to push again'),
    async () => {
      const bundle = await compiledBundleOf(withSecrets);
      const environment = { ERP_URL: 'http://erp', ERP_TOKEN: 't', AGENT_ONE: '1', AGENT_TWO: '2' };
      expect(loadCompiledSnapshot(bundle, environment).ok).toBe(true);
      const refusals = [
        { ...bundle, compiled: new Uint8Array([1, 2, 3]) },
        withCompiled(bundle, (compiled) => ({ ...compiled, version: 'another' })),
        { ...bundle, compiled: withCompiled(bundle, (compiled) => compiled).compiled.subarray(0, 20) },
      ];
      for (const refused of refusals) {
        expect(loadCompiledSnapshot(refused, environment)).toEqual({
          ok: false,
          problems: [expect.objectContaining({ message: expect.stringMatching(/run `npm run config:push` again$/) })],
        });
      }
    },
  );

  it(
    verifies(
      'perf.compiled-snapshot',
      'takes the policies as config:push checked them, and refuses the form that did not carry them',
    ),
    async () => {
      const { text, files, discovered } = await demo();
      const bundle = await compiledBundleOf(text, { files, discovered, file: 'gateway.config.yaml' });
      const environment = demoAddresses;
      // What a decision cites comes from the checked set the bundle carries, not from parsing again.
      const renamed = withCompiled(bundle, (compiled) => ({
        ...compiled,
        policy_set: {
          ...compiled.policy_set,
          policies: compiled.policy_set.policies.map((policy) => ({ ...policy, name: `checked ${policy.name}` })),
        },
      }));
      const names = loaded(renamed, environment).policy.policies.map((policy) => policy.name);
      expect(names.length).toBeGreaterThan(0);
      expect(names.every((name) => name.startsWith('checked '))).toBe(true);
      // The first compiled form carried only the policies' texts: pushed again, not guessed at.
      const { policy_set: _checked, ...first } = compiledOf(bundle);
      const older = {
        ...bundle,
        compiled: encodeCompiledSnapshot({ ...first, format: 1 } as unknown as CompiledSnapshot),
      };
      expect(loadCompiledSnapshot(older, environment)).toEqual({
        ok: false,
        problems: [
          expect.objectContaining({
            message: expect.stringMatching(
              /form 1, and this gateway reads forms 2 and 3; run `npm run config:push` again$/,
            ),
          }),
        ],
      });
    },
  );

  it(
    verifies('perf.ahead-of-time-validators', 'refuses a bundle whose validator code asks for an unknown module'),
    async () => {
      const bundle = await compiledBundleOf(withSecrets);
      const environment = { ERP_URL: 'http://erp', ERP_TOKEN: 't', AGENT_ONE: '1', AGENT_TWO: '2' };
      const tampered = withCompiled(bundle, (compiled) => ({
        ...compiled,
        tools: compiled.tools.map((tool) => ({
          ...tool,
          validator: `const cp = require("child_process"); ${tool.validator}`,
        })),
      }));
      expect(loadCompiledSnapshot(tampered, environment)).toEqual({
        ok: false,
        problems: [
          {
            file: 'test.yaml',
            path: '',
            line: null,
            message: expect.stringMatching(
              /^the validator of erp\.orders\.list is refused: its code asks for the module "child_process", which is none of .*; run `npm run config:push` again$/,
            ),
          },
        ],
      });
    },
  );

  it(
    verifies('perf.ahead-of-time-validators', "is not pushed when a tool's schema cannot be compiled, naming the tool"),
    async () => {
      const text = [
        'systems:',
        '  - key: crm',
        '    base_url: http://crm.test',
        '    operations:',
        '      - id: notes.find',
        '        method: GET',
        '        path: /notes',
        '        description: Finds notes.',
        '        input_schema: { type: object, properties: { q: { type: string, pattern: "(" } } }',
        'policies: []',
        '',
      ].join('\n');
      await expect(compiledBundleOf(text)).rejects.toThrow(
        /test\.yaml:2: systems\[0\]: the input schema of crm\.notes\.find cannot be compiled \(Invalid regular expression/,
      );
    },
  );

  it(
    verifies(
      'perf.compiled-snapshot',
      'refuses a compiled snapshot that unpacks beyond its bound (a gzip bomb) without unpacking it all',
    ),
    () => {
      // A JSON string, so unpacked whole it would parse and fail only later, as not well formed.
      const bomb = new Uint8Array(gzipSync(`"${'a'.repeat(maxCompiledSnapshotBytes)}"`));
      expect(bomb.byteLength).toBeLessThan(400 * 1024);
      expect(decodeCompiledSnapshot(bomb)).toEqual({ ok: false, reason: 'its compiled snapshot cannot be read' });
    },
  );

  it(
    verifies(
      'annotations.bundle-form',
      'writes a bundle whose policies ask a quorum, an escalation or a sign-in rule in form 3, any other in form 2, and reads both',
    ),
    async () => {
      const { text, files, discovered } = await demo();
      const demoBundle = await compiledBundleOf(text, { files, discovered, file: 'gateway.config.yaml' });
      // The demo's high-stakes purchase orders ask two approvers: a gateway reading only form 2 refuses it.
      expect(compiledOf(demoBundle).format).toBe(3);
      expect(loaded(demoBundle, demoAddresses).policy.policies.some((policy) => policy.quorum === 2)).toBe(true);
      const plain = await compiledBundleOf(withSecrets);
      expect(compiledOf(plain).format).toBe(2);
      expect(
        loadCompiledSnapshot(plain, { ERP_URL: 'http://erp', ERP_TOKEN: 't', AGENT_ONE: '1', AGENT_TWO: '2' }),
      ).toMatchObject({
        ok: true,
      });
    },
  );
});
