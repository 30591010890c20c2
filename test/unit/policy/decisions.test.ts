// Decisions for one call: Cedar's answer read fail-closed (no permit, a forbid, arguments Cedar
// cannot hold, an error in a forbid all refuse) and the human step of the least-demanding
// satisfied permit.
//
// Long: one case per way Cedar can answer, read fail-closed, and per human step.
import { describe, expect, it } from 'vitest';
import type { AgentIdentity } from '../../../shared/auth/agent.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import type { PolicyDecision } from '../../../shared/policy/engine.js';
import type { PolicyInfo } from '../../../shared/policy/policy-set.js';
import { anAgent } from '../../support/agents.js';
import { humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';
import { lines, loadedShop, toolNamed } from './policy-fixtures.js';

const internal = anAgent('bot', ['buyers']);
const forCustomer = anAgent('helper', ['buyers'], 'c-1');
const pay = { amount: '10', currency: 'EUR', count: 1 };

/** The decision for shop.pay (or another shop tool) under the policies of p.cedar. */
const decide = async (
  cedar: string,
  who: AgentIdentity = internal,
  args: JsonObject = pay,
  tool = 'shop.pay',
): Promise<PolicyDecision> => {
  const snapshot = await loadedShop({ 'p.cedar': cedar });
  return snapshot.policy.decide(who, toolNamed(snapshot, tool), args);
};

const info = (
  id: string,
  line: number,
  effect: 'permit' | 'forbid',
  approvals: PolicyInfo['approvals'] = [],
  approvers: string | null = null,
  name = `p.cedar:${line}`,
): PolicyInfo => ({
  id,
  name,
  file: 'p.cedar',
  line,
  effect,
  approvals,
  approvers,
  quorum: 1,
  escalation: null,
  reauth_ms: null,
  acr: null,
});

const noPermit: PolicyDecision = { kind: 'deny', reason: 'no_permit', determining: [] };

describe('refusals', () => {
  it(
    verifies('policy.fail-closed', 'denies with no_permit when no permit is satisfied, naming no policy'),
    async () => {
      const cedar = lines(
        'permit (principal, action == Action::"shop.look", resource);',
        'permit (principal in Group::"sellers", action, resource);',
        'permit (principal, action == Action::"shop.pay", resource) when { context.arguments.count > 1 };',
        'permit (principal, action == Action::"shop.pay", resource) unless { context.arguments.currency == "EUR" };',
      );
      expect(await decide(cedar)).toEqual(noPermit);
      expect(await decide(cedar, internal, { ...pay, currency: 'USD' })).toEqual({
        kind: 'allow',
        step: null,
        determining: [info('policy3', 4, 'permit')],
      });
    },
  );

  it(verifies('policy.fail-closed', 'lets a satisfied forbid beat every permit, naming the forbid'), async () => {
    const cedar = lines(
      'permit (principal, action, resource);',
      '@id("no-big-payments")',
      'forbid (principal, action == Action::"shop.pay", resource) when { context.arguments.amount.greaterThan(decimal("100.0")) };',
      '@approval("staff") @approvers("finance")',
      'permit (principal, action == Action::"shop.pay", resource);',
    );
    expect(await decide(cedar, internal, { ...pay, amount: '100.0001' })).toEqual({
      kind: 'deny',
      reason: 'forbidden',
      determining: [info('policy1', 2, 'forbid', [], null, 'no-big-payments')],
    });
    expect(await decide(cedar, internal, { ...pay, amount: '100' })).toEqual({
      kind: 'allow',
      step: null,
      determining: [info('policy0', 1, 'permit')],
    });
  });

  it(verifies('policy.fail-closed', 'names every satisfied forbid and no permit'), async () => {
    const decision = await decide(
      lines(
        'permit (principal, action, resource);',
        'forbid (principal in Group::"buyers", action, resource);',
        'forbid (principal, action == Action::"shop.pay", resource);',
        'forbid (principal, action == Action::"shop.look", resource);',
      ),
    );
    expect(decision.kind === 'deny' && decision.reason).toBe('forbidden');
    expect([...decision.determining].sort((left, right) => left.id.localeCompare(right.id))).toEqual([
      info('policy1', 2, 'forbid'),
      info('policy2', 3, 'forbid'),
    ]);
  });

  it(
    verifies(
      'policy.fail-closed',
      'refuses arguments Cedar cannot hold exactly as not_representable, before any policy',
    ),
    async () => {
      const cedar = 'permit (principal, action, resource);';
      const refused: PolicyDecision = { kind: 'deny', reason: 'not_representable', determining: [] };
      expect(await decide(cedar, internal, { ...pay, amount: '10.00001' })).toEqual(refused);
      expect(await decide(cedar, internal, { ...pay, amount: '922337203685477.5808' })).toEqual(refused);
      expect(await decide(cedar, internal, { ...pay, count: 2 ** 53 })).toEqual(refused);
      expect(await decide(cedar, internal, { ...pay, tags: ['a', 1] })).toEqual(refused);
      expect(await decide(cedar, internal, { amount: '10', currency: 'EUR' })).toEqual(refused);
      // The same call with representable values is permitted.
      expect(await decide(cedar, internal, { ...pay, amount: '922337203685477.5807', tags: ['a'] })).toMatchObject({
        kind: 'allow',
        step: null,
      });
    },
  );

  it(verifies('policy.fail-closed', 'denies everything and lists nothing without policies'), async () => {
    // A policy file holding no policy is refused as half-written (policy-set.test.ts).
    const sets: Record<string, string>[] = [{}];
    for (const files of sets) {
      const snapshot = await loadedShop(files);
      for (const tool of [...snapshot.catalog.tools, ...snapshot.catalog.disabled]) {
        const args = tool.name === 'shop.pay' || tool.name === 'shop.refund' ? pay : {};
        for (const who of [internal, forCustomer, anAgent('x')]) {
          expect(snapshot.policy.decide(who, tool, args)).toEqual(noPermit);
          expect(snapshot.policy.isListed(who, tool)).toBe(false);
        }
      }
    }
  });

  // count + 9223372036854775000 overflows Cedar's 64-bit integers for count ≥ 808: an error at
  // evaluation, which the strict validator cannot see.
  const overflowingForbid =
    'forbid (principal, action == Action::"shop.pay", resource) when { context.arguments.count + 9223372036854775000 > 0 };';

  it(
    verifies('policy.fail-closed', 'refuses with evaluation_error when a forbid fails to evaluate, naming the forbid'),
    async () => {
      const cedar = lines('permit (principal, action, resource);', overflowingForbid);
      expect(await decide(cedar, internal, { ...pay, count: 1000 })).toEqual({
        kind: 'deny',
        reason: 'evaluation_error',
        determining: [info('policy1', 2, 'forbid')],
      });
      // Below the overflow the same forbid simply applies.
      expect(await decide(cedar, internal, { ...pay, count: 807 })).toEqual({
        kind: 'deny',
        reason: 'forbidden',
        determining: [info('policy1', 2, 'forbid')],
      });
    },
  );

  it(
    verifies('policy.fail-closed', 'refuses with evaluation_error even when another forbid is satisfied too'),
    async () => {
      const cedar = lines(
        'permit (principal, action, resource);',
        overflowingForbid,
        'forbid (principal, action, resource);',
      );
      expect(await decide(cedar, internal, { ...pay, count: 1000 })).toEqual({
        kind: 'deny',
        reason: 'evaluation_error',
        determining: [info('policy1', 2, 'forbid')],
      });
    },
  );

  it(verifies('policy.fail-closed', 'does not count a permit that fails to evaluate'), async () => {
    const failing =
      'permit (principal, action == Action::"shop.pay", resource) when { context.arguments.count * 9223372036854775807 > 0 };';
    expect(await decide(failing, internal, { ...pay, count: 2 })).toEqual(noPermit);
    expect(
      await decide(
        lines(failing, '@approval("staff") @approvers("finance") permit (principal, action, resource);'),
        internal,
        {
          ...pay,
          count: 2,
        },
      ),
    ).toEqual({
      kind: 'allow',
      step: humanStep({ staff: 'finance', customer: false }),
      determining: [info('policy1', 2, 'permit', ['staff'], 'finance')],
    });
  });

  // Membership of a tool in its action groups must hold for forbids as much as for permits:
  // otherwise a forbid written for a whole group never applies and the call runs.
  it(verifies('policy.fail-closed', 'applies a forbid written for an action group to the tools in it'), async () => {
    const writes = lines(
      'permit (principal, action, resource);',
      'forbid (principal, action in Action::"write", resource);',
    );
    expect(await decide(writes)).toEqual({
      kind: 'deny',
      reason: 'forbidden',
      determining: [info('policy1', 2, 'forbid')],
    });
    const system = lines(
      'permit (principal, action, resource);',
      'forbid (principal, action in Action::"shop", resource);',
    );
    expect(await decide(system, internal, {}, 'shop.look')).toEqual({
      kind: 'deny',
      reason: 'forbidden',
      determining: [info('policy1', 2, 'forbid')],
    });
  });
});

describe('the human step', () => {
  const staff = (group: string) => `@approval("staff") @approvers("${group}")`;
  const customer = '@approval("customer")';
  const both = (group: string) => `@approval("staff, customer") @approvers("${group}")`;
  const everything = 'permit (principal, action, resource);';

  it(verifies('policy.human-step', 'runs at once when an unannotated permit is satisfied'), async () => {
    expect(await decide(everything)).toEqual({
      kind: 'allow',
      step: null,
      determining: [info('policy0', 1, 'permit')],
    });
  });

  it(
    verifies('policy.human-step', 'runs at once when an unannotated permit is satisfied beside annotated ones'),
    async () => {
      const cedar = lines(`${staff('finance')} ${everything}`, `${customer} ${everything}`, everything);
      for (const who of [internal, forCustomer]) {
        expect(await decide(cedar, who)).toEqual({
          kind: 'allow',
          step: null,
          determining: [info('policy2', 3, 'permit')],
        });
      }
    },
  );

  it(verifies('policy.human-step', 'asks the named staff group for a staff permit'), async () => {
    for (const who of [internal, forCustomer]) {
      expect(await decide(`${staff('finance')}\n${everything}`, who)).toEqual({
        kind: 'allow',
        step: humanStep({ staff: 'finance', customer: false }),
        determining: [info('policy0', 1, 'permit', ['staff'], 'finance')],
      });
    }
  });

  it(
    verifies('policy.human-step', 'asks the customer to confirm for a customer permit, when the agent acts for one'),
    async () => {
      expect(await decide(`${customer}\n${everything}`, forCustomer)).toEqual({
        kind: 'allow',
        step: humanStep({ staff: null, customer: true }),
        determining: [info('policy0', 1, 'permit', ['customer'])],
      });
    },
  );

  it(verifies('policy.human-step', 'asks both for a "staff, customer" permit'), async () => {
    expect(await decide(`${both('finance')}\n${everything}`, forCustomer)).toEqual({
      kind: 'allow',
      step: humanStep({ staff: 'finance', customer: true }),
      determining: [info('policy0', 1, 'permit', ['customer', 'staff'], 'finance')],
    });
  });

  it(
    verifies(
      ['policy.human-step', 'policy.fail-closed'],
      'ignores customer permits for an agent acting for no customer',
    ),
    async () => {
      expect(await decide(`${customer}\n${everything}`, internal)).toEqual(noPermit);
      expect(await decide(`${both('finance')}\n${everything}`, internal)).toEqual(noPermit);
      expect(await decide(lines(`${customer} ${everything}`, `${both('finance')} ${everything}`), internal)).toEqual(
        noPermit,
      );
      // A staff permit still counts for it, even where a customer permit would be less demanding.
      expect(
        await decide(
          lines(`${customer} ${everything}`, `${both('audit')} ${everything}`, `${staff('ops')} ${everything}`),
          internal,
        ),
      ).toEqual({
        kind: 'allow',
        step: humanStep({ staff: 'ops', customer: false }),
        determining: [info('policy2', 3, 'permit', ['staff'], 'ops')],
      });
    },
  );

  it(verifies('policy.human-step', 'prefers the permit needing fewest parties'), async () => {
    expect(await decide(lines(`${both('audit')} ${everything}`, `${staff('ops')} ${everything}`), forCustomer)).toEqual(
      {
        kind: 'allow',
        step: humanStep({ staff: 'ops', customer: false }),
        determining: [info('policy1', 2, 'permit', ['staff'], 'ops')],
      },
    );
    expect(await decide(lines(`${both('audit')} ${everything}`, `${customer} ${everything}`), forCustomer)).toEqual({
      kind: 'allow',
      step: humanStep({ staff: null, customer: true }),
      determining: [info('policy1', 2, 'permit', ['customer'])],
    });
  });

  it(verifies('policy.human-step', "prefers the customer's confirmation to staff approval"), async () => {
    expect(await decide(lines(`${staff('audit')} ${everything}`, `${customer} ${everything}`), forCustomer)).toEqual({
      kind: 'allow',
      step: humanStep({ staff: null, customer: true }),
      determining: [info('policy1', 2, 'permit', ['customer'])],
    });
  });

  it(verifies('policy.human-step', 'breaks ties by the approver group name, whatever the file order'), async () => {
    expect(
      await decide(
        lines(`${staff('ops')} ${everything}`, `${staff('finance')} ${everything}`, `${staff('legal')} ${everything}`),
      ),
    ).toEqual({
      kind: 'allow',
      step: humanStep({ staff: 'finance', customer: false }),
      determining: [info('policy1', 2, 'permit', ['staff'], 'finance')],
    });
    expect(await decide(lines(`${both('ops')} ${everything}`, `${both('audit')} ${everything}`), forCustomer)).toEqual({
      kind: 'allow',
      step: humanStep({ staff: 'audit', customer: true }),
      determining: [info('policy1', 2, 'permit', ['customer', 'staff'], 'audit')],
    });
  });

  it(verifies('policy.human-step', "breaks remaining ties by the policy's place in the files"), async () => {
    const snapshot = await loadedShop({
      'a.cedar': lines('permit (principal in Group::"sellers", action, resource);', `${customer} ${everything}`),
      'b.cedar': lines(`@id("second") ${customer}`, everything),
    });
    expect(snapshot.policy.decide(forCustomer, toolNamed(snapshot, 'shop.pay'), pay)).toEqual({
      kind: 'allow',
      step: humanStep({ staff: null, customer: true }),
      determining: [{ ...info('policy1', 2, 'permit', ['customer']), name: 'a.cedar:2', file: 'a.cedar' }],
    });
  });

  // Cedar numbers policies policy0, policy1, … in text order; its lists of them may come sorted
  // as text (policy10 before policy2). The annotations must stay with their own policy.
  it(
    verifies('policy.human-step', "keeps each policy's annotations with it in a set of more than ten policies"),
    async () => {
      const cedar = lines(
        ...Array.from(
          { length: 10 },
          (_, index) => `@id("p${index}") permit (principal in Group::"g${index}", action, resource);`,
        ),
        `@id("held") ${staff('finance')}`,
        'permit (principal in Group::"g10", action, resource);',
        '@id("p11") permit (principal in Group::"g11", action, resource);',
      );
      expect(await decide(cedar, anAgent('a', ['g10']))).toEqual({
        kind: 'allow',
        step: humanStep({ staff: 'finance', customer: false }),
        determining: [info('policy10', 11, 'permit', ['staff'], 'finance', 'held')],
      });
      expect(await decide(cedar, anAgent('a', ['g2']))).toEqual({
        kind: 'allow',
        step: null,
        determining: [info('policy2', 3, 'permit', [], null, 'p2')],
      });
      expect(await decide(cedar, anAgent('a', ['g11']))).toEqual({
        kind: 'allow',
        step: null,
        determining: [info('policy11', 13, 'permit', [], null, 'p11')],
      });
    },
  );

  it(
    verifies('policy.human-step', 'orders policies by their number, not their id text (policy2 before policy10)'),
    async () => {
      const filler = Array.from(
        { length: 10 },
        (_, index) => `permit (principal in Group::"g${index}", action, resource);`,
      );
      // policy0, policy1: fillers; policy2: finance; policy3…policy9: fillers; policy10: finance again.
      const cedar = lines(
        ...filler.slice(0, 2),
        `@id("earlier") ${staff('finance')} ${everything}`,
        ...filler.slice(2, 9),
        `@id("later") ${staff('finance')} ${everything}`,
      );
      expect(await decide(cedar)).toEqual({
        kind: 'allow',
        step: humanStep({ staff: 'finance', customer: false }),
        determining: [info('policy2', 3, 'permit', ['staff'], 'finance', 'earlier')],
      });
    },
  );

  it(verifies('policy.human-step', 'chooses among the satisfied permits only'), async () => {
    const cedar = lines(
      `${customer} permit (principal, action == Action::"shop.pay", resource) when { context.arguments.amount.lessThan(decimal("100.0")) };`,
      `${staff('finance')} ${everything}`,
    );
    expect(await decide(cedar, forCustomer, { ...pay, amount: '99.9999' })).toMatchObject({
      kind: 'allow',
      step: humanStep({ staff: null, customer: true }),
    });
    expect(await decide(cedar, forCustomer, { ...pay, amount: '100' })).toEqual({
      kind: 'allow',
      step: humanStep({ staff: 'finance', customer: false }),
      determining: [info('policy1', 2, 'permit', ['staff'], 'finance')],
    });
  });
});
