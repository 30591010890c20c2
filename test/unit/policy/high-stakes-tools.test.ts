// The policy tools on a high-stakes staff approval: policy:explain puts its quorum, escalation and
// sign-in rules in words, a policy case can expect each of them (a wrong one fails saying expected
// and got), and the demo organization holds purchase orders of 50000 and more for two of finance.
import { describe, expect, it } from 'vitest';
import { readCaseFile } from '../../../shared/policy/case-file.js';
import { stepWords } from '../../../shared/policy/explain.js';
import { anAgent } from '../../support/agents.js';
import { humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';
import { canonical, lines, loadDemo, rehearsedOnDemo, toolNamed } from './policy-fixtures.js';

const finance = { staff: 'finance', customer: false };

describe('policy:explain in words', () => {
  it(
    verifies('annotations.explained', 'names the quorum, the escalation, the sign-in time and the sign-in classes'),
    () => {
      expect(
        stepWords(
          humanStep(finance, {
            quorum: 2,
            escalation: { after_ms: 4 * 3_600_000, group: 'operations' },
            reauth_ms: 300_000,
            acr: ['phr'],
          }),
        ),
      ).toBe('staff approval by 2 of finance (escalates to operations after 4h; sign-in within 5m; sign-in class phr)');
      expect(stepWords(humanStep(finance, { acr: ['phr', 'phrh'] }))).toBe(
        'staff approval by finance (sign-in class phr or phrh)',
      );
      expect(stepWords(humanStep({ staff: 'finance', customer: true }, { quorum: 3, reauth_ms: 90 * 60_000 }))).toBe(
        'customer confirmation, then staff approval by 3 of finance (sign-in within 90m)',
      );
      // One approver and nothing more reads as before.
      expect(stepWords(humanStep(finance))).toBe('staff approval by finance');
    },
  );
});

/** A purchase order case by procurement, expecting `expectation`. */
const orderCase = (amount: string, expectation: string): string =>
  lines(
    '- name: an order',
    '  agent: procurement-agent',
    '  tool: erp.purchase_orders.create',
    `  arguments: { vendor_id: V-100, amount: "${amount}", currency: EUR }`,
    `  expect: ${expectation}`,
  );

describe('policy:test expectations', () => {
  it(
    verifies(
      'annotations.policy-test',
      'passes a high-stakes order expected with all four, as each annotation writes it',
    ),
    async () => {
      const result = await rehearsedOnDemo(
        orderCase(
          '50000',
          '{ decision: hold, approval: finance, quorum: 2, escalate: "4h operations", reauth: 300s, acr: none }',
        ),
      );
      expect(result.failures).toEqual([]);
      // A case that does not mention them still passes: the case file's older form.
      expect((await rehearsedOnDemo(orderCase('50000', '{ decision: hold, approval: finance }'))).failures).toEqual([]);
      expect(
        (await rehearsedOnDemo(orderCase('1000', '{ decision: hold, quorum: 1, escalate: none, reauth: none }')))
          .failures,
      ).toEqual([]);
    },
  );

  it(verifies('annotations.policy-test', 'fails each wrong expectation, saying expected and got'), async () => {
    const result = await rehearsedOnDemo(
      orderCase('50000', '{ decision: hold, quorum: 3, escalate: none, reauth: 10m, acr: [phrh, phr] }'),
    );
    const words = 'staff approval by 2 of finance (escalates to operations after 4h; sign-in within 5m)';
    expect(result.failures).toEqual([
      `expected quorum 3, got 2 (${words})`,
      `expected escalate none, got 4h, operations (${words})`,
      `expected reauth 10m, got 5m (${words})`,
      `expected acr [phr, phrh], got none (${words})`,
    ]);
    const small = await rehearsedOnDemo(orderCase('10', '{ decision: run, quorum: 2, escalate: "1h, operations" }'));
    expect(small.failures).toEqual([
      'expected quorum 2, got 1 (runs at once)',
      'expected escalate 1h, operations, got none (runs at once)',
    ]);
  });

  it(verifies('annotations.policy-test', 'refuses a malformed expectation at its line'), () => {
    const file = readCaseFile(
      lines(
        '- name: wrong',
        '  agent: procurement-agent',
        '  tool: erp.purchase_orders.create',
        '  expect:',
        '    decision: hold',
        '    quorum: 11',
        '    escalate: soon',
        '    reauth: 5 minutes',
        '    acr: " , "',
      ),
    );
    expect(file).toEqual({
      ok: false,
      problems: [
        {
          line: 6,
          message: 'case 1 ("wrong"), expect.quorum: expected how many approvers, a whole number from 1 to 10',
        },
        {
          line: 7,
          message:
            'case 1 ("wrong"), expect.escalate: expected a time and a group, as @escalate writes them ("4h, operations"), or none',
        },
        {
          line: 8,
          message:
            'case 1 ("wrong"), expect.reauth: expected how recent the sign-in must be, as @reauth writes it ("5m"), or none',
        },
        {
          line: 9,
          message:
            'case 1 ("wrong"), expect.acr: expected the sign-in classes, as @acr writes them ("phr, phrh"), or none',
        },
      ],
    });
  });
});

describe('the demo organization', () => {
  it(
    verifies('annotations.demo', 'holds a purchase order of 50000 and more for two of finance, below it for one'),
    async () => {
      const snapshot = await loadDemo();
      const tool = toolNamed(snapshot, 'erp.purchase_orders.create');
      const decide = (amount: string) =>
        snapshot.policy.decide(
          anAgent('procurement-agent', ['procurement']),
          tool,
          canonical(tool, `{"vendor_id":"V-100","amount":${amount},"currency":"EUR"}`),
        );
      const highStakes = humanStep(finance, {
        quorum: 2,
        escalation: { after_ms: 4 * 3_600_000, group: 'operations' },
        reauth_ms: 5 * 60_000,
      });
      for (const amount of ['50000', '"50000.00"', '"1000000"']) {
        expect(decide(amount)).toMatchObject({
          kind: 'allow',
          step: highStakes,
          determining: [{ name: 'high-stakes-purchase-orders' }],
        });
      }
      for (const amount of ['"49999.9999"', '1000']) {
        expect(decide(amount)).toMatchObject({
          kind: 'allow',
          step: humanStep(finance),
          determining: [{ name: 'large-purchase-orders' }],
        });
      }
      // Two approvers of finance, so the quorum can be met on the local runtime.
      expect(
        snapshot.config.approvers.filter((approver) => approver.groups.includes('finance')).map((found) => found.id),
      ).toEqual(['finance-approver', 'finance-approver-2']);
    },
  );
});
