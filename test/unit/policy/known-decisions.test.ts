// The decisions config:push knows ahead (known-decisions.ts): over generated policy sets and
// agents, every answer in the table is the one Cedar's full evaluation gives each call, whatever
// its arguments; the demo's table, and a function taking it only from its own Cedar release.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ownCedarRelease } from '../../../infra/bundling/bundle-function.js';
import type { AgentIdentity } from '../../../shared/auth/agent.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import { loadCompiledSnapshot } from '../../../shared/control-plane/compiled-snapshot.js';
import { cedarRelease } from '../../../shared/policy/cedar-release.js';
import { cedarModelOf } from '../../../shared/policy/cedar-schema.js';
import { PolicyEngine } from '../../../shared/policy/engine.js';
import { KnownDecisionTable, knownAnswersAtMost } from '../../../shared/policy/known-decisions.js';
import { checkedPolicySetOf, compilePolicies, deferPolicies } from '../../../shared/policy/policy-set.js';
import { type CompiledBundle, compiledBundleOf, compiledOf, withCompiled } from '../../support/compiled-bundles.js';
import { demoAddresses } from '../../support/demo-environment.js';
import { verifies } from '../../support/requirements.js';
import { loadedShop, toolNamed } from './policy-fixtures.js';

const examples = new URL('../../../examples/', import.meta.url);

// ---------------------------------------------------------------------------------------------
// The property: generated policies on the shop (shop.pay: amount, currency, flag; shop.refund:
// amount; shop.search and shop.look: no field read), generated agents.

const amounts = ['-3.5', '0', '5', '999.99', '1000', '60000'] as const;

/** Arguments each tool's calls are decided with: the table's answer must hold for all of them. */
const argumentsOf: Readonly<Record<string, readonly JsonObject[]>> = {
  'shop.pay': amounts.flatMap((amount) =>
    (['EUR', 'USD'] as const).flatMap((currency) => [
      { amount, currency, count: 1 },
      { amount, currency, count: 2, flag: true },
    ]),
  ),
  'shop.refund': amounts.map((amount) => ({ amount })),
  'shop.search': [{}, { query: 'paper' }],
  'shop.look': [{}],
};

const principalScope = fc.constantFrom('principal', 'principal in Group::"g1"', 'principal == Agent::"a1"');

/** Scopes that admit a condition on the context (the fields every action in them has), and those that do not. */
const contextScopes = {
  'action == Action::"shop.pay"': [
    'context.arguments.amount.lessThan(decimal("1000.0"))',
    'context.arguments.currency == "EUR"',
    'context.arguments has flag && context.arguments.flag',
  ],
  'action in [Action::"shop.pay", Action::"shop.refund"]': [
    'context.arguments.amount.greaterThanOrEqual(decimal("0.0"))',
    'context.arguments.amount.lessThanOrEqual(decimal("0.0"))',
  ],
} as const;
const otherScopes = [
  'action',
  'action == Action::"shop.search"',
  'action in [Action::"shop.look", Action::"shop.refund"]',
  'action in Action::"read"',
  'action in Action::"write"',
  'action in Action::"shop"',
] as const;

/** Conditions that read no context: on the agent, the action's groups, the resource. */
const otherConditions = [
  'principal.outside',
  '!principal.outside',
  'principal in Group::"g2"',
  'principal has customer && principal.customer == "c-1"',
  'action in Action::"write"',
  'resource == System::"shop"',
] as const;

const scopeAndCondition = fc.oneof(
  fc
    .constantFrom(...(Object.keys(contextScopes) as (keyof typeof contextScopes)[]))
    .chain((scope) =>
      fc.tuple(
        fc.constant(scope),
        fc.option(fc.constantFrom(...contextScopes[scope], ...otherConditions), { nil: null }),
      ),
    ),
  fc.tuple(fc.constantFrom(...otherScopes), fc.option(fc.constantFrom(...otherConditions), { nil: null })),
);

const annotationsOf = [
  '',
  '@approval("staff") @approvers("finance") ',
  '@approval("customer") ',
  '@approval("staff, customer") @approvers("finance") ',
  '@approval("staff") @approvers("ops") @quorum("2") @reauth("5m") ',
] as const;

const policy = fc
  .record({
    effect: fc.oneof({ weight: 2, arbitrary: fc.constant('permit') }, { weight: 1, arbitrary: fc.constant('forbid') }),
    clause: fc.constantFrom('when', 'unless'),
    principal: principalScope,
    rest: scopeAndCondition,
    annotation: fc.constantFrom(...annotationsOf),
  })
  .map(({ effect, clause, principal, rest: [action, condition], annotation }) => {
    const annotations = effect === 'permit' ? annotation : '';
    const body = condition === null ? '' : ` ${clause} { ${condition} }`;
    return `${annotations}${effect} (${principal}, ${action}, resource)${body};`;
  });

const agent: fc.Arbitrary<AgentIdentity> = fc.record({
  id: fc.constantFrom('a1', 'a2'),
  groups: fc.subarray(['g1', 'g2']),
  customerId: fc.constantFrom(null, 'c-1'),
});

describe('the decisions config:push knows', async () => {
  const shop = await loadedShop({});
  const model = cedarModelOf([...shop.catalog.tools, ...shop.catalog.disabled]);
  const tools = ['shop.pay', 'shop.refund', 'shop.search', 'shop.look'].map((name) => toolNamed(shop, name));

  it(
    verifies(
      'perf.push-known-decisions-exact',
      "every answer in the table is Cedar's full evaluation of each call: decision, reason, human step, determining policies",
    ),
    () => {
      const seen = { tabled: 0, decided: 0, kinds: new Set<string>() };
      fc.assert(
        fc.property(
          fc.array(policy, { minLength: 1, maxLength: 6 }),
          fc.uniqueArray(agent, { minLength: 1, maxLength: 3, selector: (who) => JSON.stringify(who) }),
          (policies, agents) => {
            const text = policies.map((item, index) => `@id("p${index}")\n${item}`).join('\n');
            const compiled = compilePolicies([{ path: 'p.cedar', text }], model.schema, 'property');
            if (!compiled.ok)
              throw new Error(`generated policies refused: ${JSON.stringify(compiled.problems)}\n${text}`);
            const full = new PolicyEngine(compiled.policies, model);
            const known = full.knownDecisions(agents, tools);
            expect(known.cedar).toBe(cedarRelease);
            const table = KnownDecisionTable.of(known);
            // As a function loads it: the policies as checked, pre-parsed only when a call needs Cedar.
            const deployed = new PolicyEngine(
              deferPolicies(checkedPolicySetOf(compiled.policies), 'deployed'),
              model,
              table,
            );
            for (const who of agents) {
              for (const tool of tools) {
                const tabled = table?.answer(who, tool.name) !== undefined;
                for (const args of argumentsOf[tool.name] ?? []) {
                  // A fresh engine per call: Cedar decides it, nothing remembered.
                  const truth = new PolicyEngine(compiled.policies, model).decide(who, tool, args);
                  expect(deployed.decide(who, tool, args)).toEqual(truth);
                  seen.decided += 1;
                  if (tabled)
                    seen.kinds.add(
                      truth.kind === 'allow' ? `allow ${truth.step === null ? 'now' : 'step'}` : `deny ${truth.reason}`,
                    );
                }
                if (tabled) seen.tabled += 1;
              }
            }
          },
        ),
        { numRuns: 120 },
      );
      // The table held answers of every kind, and left out the calls it could not know.
      expect([...seen.kinds].sort()).toEqual(['allow now', 'allow step', 'deny forbidden', 'deny no_permit']);
      expect(seen.tabled).toBeGreaterThan(100);
      expect(seen.decided).toBeGreaterThan(seen.tabled);
    },
  );

  it(
    verifies(
      'perf.push-known-decisions-exact',
      "lists the determining policies in the files' order, as the engine reads Cedar's answer",
    ),
    async () => {
      const text = [
        'permit (principal, action, resource);',
        'permit (principal, action == Action::"shop.look", resource);',
        'permit (principal in Group::"g1", action, resource);',
        'forbid (principal, action == Action::"shop.search", resource);',
        'forbid (principal in Group::"g1", action in [Action::"shop.search", Action::"shop.refund"], resource);',
      ].join('\n');
      const compiled = compilePolicies([{ path: 'p.cedar', text }], model.schema, 'order');
      if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
      const who = { id: 'a1', groups: ['g1'], customerId: null };
      const engine = new PolicyEngine(compiled.policies, model);
      const known = KnownDecisionTable.of(engine.knownDecisions([who], tools));
      expect(known?.answer(who, 'shop.look')).toEqual({ decision: 'allow', reason: ['policy0', 'policy1', 'policy2'] });
      expect(known?.answer(who, 'shop.search')).toEqual({ decision: 'deny', reason: ['policy3', 'policy4'] });
      // Cedar itself names them in another order from one evaluation to the next: the engine reads them in file order.
      for (let round = 0; round < 5; round += 1) {
        const decision = new PolicyEngine(compiled.policies, model).decide(who, toolNamed(shop, 'shop.look'), {});
        expect(decision.determining.map((policy) => policy.id)).toEqual(['policy0', 'policy1', 'policy2']);
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------
// The demo, through config:push's compiler and a function's load.

const demoBundle = async (): Promise<CompiledBundle> => {
  const files: Record<string, string> = {};
  for (const path of ['erp/openapi.yaml', 'policies/demo.cedar'])
    files[path] = await readFile(new URL(path, examples), 'utf8');
  const text = await readFile(new URL('gateway.config.yaml', examples), 'utf8');
  return compiledBundleOf(text, { files, file: 'gateway.config.yaml' });
};

const procurement = { id: 'procurement-agent', groups: ['procurement'], customerId: null };

describe('a function and the decisions config:push knew', async () => {
  const bundle = await demoBundle();

  it(
    verifies(
      'perf.push-known-decisions',
      "config:push writes the demo's known answers with the Cedar release that gave them",
    ),
    () => {
      const known = compiledOf(bundle).known_decisions;
      expect(known?.cedar).toBe(cedar.getCedarSDKVersion());
      const agents = known?.agents ?? [];
      expect(agents.map((entry) => [entry.id, entry.groups, entry.customer])).toEqual([
        ['procurement-agent', ['procurement'], null],
        ['support-agent', ['support'], 'customer-1042'],
      ]);
      const answers = agents[0]?.answers ?? {};
      // order-lookups (policy4) lets procurement track shipments; vendor deletion is forbidden (policy8).
      expect(answers['erp.shipments.track']).toEqual({ decision: 'allow', reason: ['policy4'] });
      expect(answers['erp.vendors.delete']).toEqual({ decision: 'deny', reason: ['policy8'] });
      // A purchase order's decision reads its amount: Cedar decides each.
      expect(answers['erp.purchase_orders.create']).toBeUndefined();
      expect(agents[1]?.answers['erp.refunds.create']).toBeUndefined();
    },
  );

  it(
    verifies(
      'perf.push-known-decisions',
      'a function answers a known call without pre-parsing the policies, and pre-parses them for the first call Cedar decides',
    ),
    () => {
      const loaded = loadCompiledSnapshot(bundle, demoAddresses);
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
      const { policy, catalog } = loaded.snapshot;
      const tool = (name: string) => {
        const found = catalog.byName.get(name);
        if (found === undefined) throw new Error(name);
        return found;
      };
      expect(policy.policiesParsed).toBe(false);
      const track = policy.decide(procurement, tool('erp.shipments.track'), { tracking_number: '1Z999AA10123456784' });
      expect(track).toMatchObject({ kind: 'allow', step: null, determining: [{ name: 'order-lookups' }] });
      expect(policy.policiesParsed).toBe(false);
      // Another identity than the listed agent's (more groups): not in the table, Cedar decides.
      const other = { ...procurement, groups: ['procurement', 'support'] };
      expect(policy.decide(other, tool('erp.shipments.track'), { tracking_number: 'X' })).toMatchObject({
        kind: 'allow',
      });
      expect(policy.policiesParsed).toBe(true);
    },
  );

  it(
    verifies(
      'perf.push-known-decisions',
      'a table of another Cedar release is ignored: the policies are pre-parsed at load, and a set this Cedar refuses is refused there',
    ),
    () => {
      const foreign = (change: (texts: Record<string, string>) => Record<string, string>) =>
        withCompiled(bundle, (compiled) => ({
          ...compiled,
          known_decisions: { cedar: '0.0.1', agents: compiled.known_decisions?.agents ?? [] },
          policy_set: { ...compiled.policy_set, texts: change({ ...compiled.policy_set.texts }) },
        }));
      const loaded = loadCompiledSnapshot(
        foreign((texts) => texts),
        demoAddresses,
      );
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
      expect(loaded.snapshot.policy.policiesParsed).toBe(true);
      const refused = loadCompiledSnapshot(
        foreign((texts) => ({ ...texts, policy0: 'permit (principal, action, resource) when { nonsense' })),
        demoAddresses,
      );
      expect(refused.ok).toBe(false);
      // The same release: the table is taken, and the set is pre-parsed only when a call needs Cedar.
      const own = loadCompiledSnapshot(bundle, demoAddresses);
      expect(own.ok && own.snapshot.policy.policiesParsed).toBe(false);
    },
  );

  it(
    verifies('perf.push-known-decisions', 'the bundler refuses a Cedar other than the release the code names'),
    async () => {
      const shipped = new URL('../../../node_modules/@cedar-policy/cedar-wasm/nodejs/package.json', import.meta.url);
      await expect(ownCedarRelease(shipped.pathname)).resolves.toBeUndefined();
      const folder = await mkdtemp(join(tmpdir(), 'cedar-release-'));
      try {
        await writeFile(join(folder, 'package.json'), JSON.stringify({ version: '9.9.9' }));
        await expect(ownCedarRelease(join(folder, 'package.json'))).rejects.toThrow(
          /Cedar 9\.9\.9 .* is not the release the code names/,
        );
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    },
  );
});

describe('the cost of knowing', async () => {
  const shop = await loadedShop({ 'p.cedar': 'permit (principal, action, resource);' });
  const tools = shop.catalog.tools;

  it(
    verifies(
      'perf.push-known-decisions',
      'asks Cedar about at most knownAnswersAtMost agent and tool pairs: the first agents whose tools fit',
    ),
    () => {
      const perAgent = Math.floor(knownAnswersAtMost / tools.length);
      const agents = Array.from({ length: perAgent + 2 }, (_, index) => ({
        id: `a${index}`,
        groups: [],
        customerId: null,
      }));
      const known = shop.policy.knownDecisions(agents, tools);
      expect(known.agents.map((entry) => entry.id)).toEqual(agents.slice(0, perAgent).map((who) => who.id));
      expect(known.agents.every((entry) => Object.keys(entry.answers).length === tools.length)).toBe(true);
    },
  );
});
