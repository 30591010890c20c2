// Decisions remembered by the policy engine: an equal key (tool, agent, the argument fields some
// policy reads) gets the decision a fresh evaluation would give, a field no policy reads adds no
// entry, and the memory is bounded.
import { describe, expect, it } from 'vitest';
import type { AgentIdentity } from '../../../shared/auth/agent.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import { decisionMemoEntries } from '../../../shared/policy/decision-memo.js';
import { anAgent } from '../../support/agents.js';
import { verifies } from '../../support/requirements.js';
import { lines, loadedShop, toolNamed } from './policy-fixtures.js';

const buyer = anAgent('bot', ['buyers']);
const seller = anAgent('bot', ['sellers']);
const otherBuyer = anAgent('other', ['buyers']);
const forCustomer = anAgent('bot', ['buyers'], 'c-1');
const pay = (amount: string, note: string | null = null, currency = 'EUR'): JsonObject => ({
  amount,
  currency,
  count: 1,
  note,
  ratio: 0.5,
});

/** Amount-based permits: small ones at once for buyers, large ones after finance; customers confirm. */
const amountPolicies = lines(
  'permit (principal in Group::"buyers", action == Action::"shop.pay", resource) when { context.arguments.amount.lessThan(decimal("100.0")) };',
  '@approval("staff") @approvers("finance")',
  'permit (principal in Group::"buyers", action == Action::"shop.pay", resource) when { context.arguments.amount.greaterThanOrEqual(decimal("100.0")) };',
  '@approval("customer")',
  'permit (principal, action == Action::"shop.pay", resource) when { principal.outside && context.arguments.amount.lessThan(decimal("5.0")) };',
  'forbid (principal, action, resource) when { context has arguments && context.arguments has amount && context.arguments.amount.lessThanOrEqual(decimal("0.0")) };',
);

/** The decision a fresh engine (nothing remembered) gives. */
const freshDecision = async (cedar: string, agent: AgentIdentity, args: JsonObject) => {
  const snapshot = await loadedShop({ 'p.cedar': cedar });
  return snapshot.policy.decide(agent, toolNamed(snapshot, 'shop.pay'), args);
};

describe('remembered decisions', () => {
  it(
    verifies('policy.decision-memo', 'gives, for every call of a mixed sequence, the decision a fresh engine gives'),
    async () => {
      const snapshot = await loadedShop({ 'p.cedar': amountPolicies });
      const tool = toolNamed(snapshot, 'shop.pay');
      const calls: [AgentIdentity, JsonObject][] = [
        [buyer, pay('10')],
        [buyer, pay('150')],
        [buyer, pay('10', 'a note')],
        [seller, pay('10')],
        [forCustomer, pay('3')],
        [buyer, pay('3')],
        [buyer, pay('-1')],
        [buyer, pay('150', null, 'USD')],
        [otherBuyer, pay('150')],
        [forCustomer, pay('10')],
        [buyer, pay('10')],
        [seller, pay('150')],
        [forCustomer, pay('3')],
      ];
      // Twice over: the second round is answered from memory.
      for (const round of [1, 2]) {
        for (const [agent, args] of calls) {
          const expected = await freshDecision(amountPolicies, agent, args);
          expect(snapshot.policy.decide(agent, tool, args), `round ${round}: ${JSON.stringify([agent, args])}`).toEqual(
            expected,
          );
        }
      }
      // One entry per distinct agent and amount: the note and the currency are read by no policy.
      const distinct = new Set(calls.map(([agent, args]) => JSON.stringify([agent, args.amount])));
      expect(snapshot.policy.rememberedDecisions).toBe(distinct.size);
    },
  );

  it(verifies('policy.decision-memo', 'keys on every field when a policy reads the arguments whole'), async () => {
    const whole = lines(
      'permit (principal in Group::"buyers", action == Action::"shop.pay", resource) when { context.arguments == context.arguments };',
    );
    const snapshot = await loadedShop({ 'p.cedar': whole });
    const tool = toolNamed(snapshot, 'shop.pay');
    for (const note of ['a', 'b', 'c']) {
      expect(snapshot.policy.decide(buyer, tool, pay('10', note))).toMatchObject({ kind: 'allow' });
    }
    expect(snapshot.policy.rememberedDecisions).toBe(3);
  });

  it(verifies('policy.decision-memo', 'remembers at most its bound, forgetting the oldest first'), async () => {
    const snapshot = await loadedShop({ 'p.cedar': amountPolicies });
    const tool = toolNamed(snapshot, 'shop.pay');
    const amount = (index: number) => `10.${String(index).padStart(4, '0')}`;
    for (let index = 0; index < decisionMemoEntries + 20; index += 1) {
      snapshot.policy.decide(buyer, tool, pay(amount(index)));
    }
    expect(snapshot.policy.rememberedDecisions).toBe(decisionMemoEntries);
    // The first amounts were forgotten; asking again evaluates (the count stays at its bound) and agrees.
    expect(snapshot.policy.decide(buyer, tool, pay(amount(0)))).toEqual(
      await freshDecision(amountPolicies, buyer, pay(amount(0))),
    );
    expect(snapshot.policy.rememberedDecisions).toBe(decisionMemoEntries);
  });

  it(verifies('policy.decision-memo', 'does not remember a decision made with an evaluation error'), async () => {
    // The forbid overflows for a count of 1 or more (an error: refused, fail-closed) and holds for 0.
    const overflowing = lines(
      'permit (principal, action == Action::"shop.pay", resource);',
      'forbid (principal, action == Action::"shop.pay", resource) when { context.arguments.count + 9223372036854775807 > 0 };',
    );
    const snapshot = await loadedShop({ 'p.cedar': overflowing });
    const tool = toolNamed(snapshot, 'shop.pay');
    for (const _ of [1, 2]) {
      expect(snapshot.policy.decide(buyer, tool, { ...pay('10'), count: 1 })).toMatchObject({
        kind: 'deny',
        reason: 'evaluation_error',
      });
    }
    expect(snapshot.policy.rememberedDecisions).toBe(0);
    expect(snapshot.policy.decide(buyer, tool, { ...pay('10'), count: 0 })).toMatchObject({
      kind: 'deny',
      reason: 'forbidden',
    });
    expect(snapshot.policy.rememberedDecisions).toBe(1);
  });
});
