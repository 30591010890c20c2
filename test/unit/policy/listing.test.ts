// What each agent sees: a tool is listed unless no argument value could get it permitted. Cedar
// evaluates with the arguments unknown; the residual conditions are then searched exactly.
//
// Long: each kind of residual condition has its own cases at its exact edges.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentIdentity } from '../../../shared/auth/agent.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import { cedarModelOf } from '../../../shared/policy/cedar-schema.js';
import { PolicyEngine } from '../../../shared/policy/engine.js';
import { compilePolicies } from '../../../shared/policy/policy-set.js';
import { anAgent } from '../../support/agents.js';
import { verifies } from '../../support/requirements.js';
import { lines, loadedShop, toolNamed } from './policy-fixtures.js';

const internal = anAgent('bot', ['buyers']);
const forCustomer = anAgent('helper', ['buyers'], 'c-1');

/** Whether the shop tool is listed for the agent under the policies of p.cedar. */
const listed = async (cedar: string, tool = 'shop.pay', who: AgentIdentity = internal): Promise<boolean> => {
  const snapshot = await loadedShop({ 'p.cedar': cedar });
  return snapshot.policy.isListed(who, toolNamed(snapshot, tool));
};

const pay = 'action == Action::"shop.pay"';
const amount = 'context.arguments.amount';

describe('listing by partial evaluation', () => {
  it(verifies('policy.listing', 'lists a tool an unconditional permit covers, and not the others'), async () => {
    const cedar = `permit (principal, ${pay}, resource);`;
    expect(await listed(cedar)).toBe(true);
    expect(await listed(cedar, 'shop.look')).toBe(false);
    expect(await listed(cedar, 'shop.refund')).toBe(false);
  });

  it(
    verifies(
      'policy.listing',
      'does not list a tool with only forbids, or with an unconditional forbid beside permits',
    ),
    async () => {
      expect(await listed(`forbid (principal, ${pay}, resource);`)).toBe(false);
      expect(await listed(`forbid (principal, ${pay}, resource) when { ${amount}.greaterThan(decimal("5.0")) };`)).toBe(
        false,
      );
      expect(
        await listed(
          lines(
            `permit (principal, ${pay}, resource) when { ${amount}.greaterThan(decimal("5.0")) };`,
            `forbid (principal, ${pay}, resource);`,
          ),
        ),
      ).toBe(false);
    },
  );

  it(verifies('policy.listing', 'follows the principal: groups, the agent itself, outside'), async () => {
    const cedar = lines(
      `permit (principal in Group::"buyers", ${pay}, resource);`,
      'permit (principal == Agent::"special", action == Action::"shop.look", resource);',
      'permit (principal, action == Action::"shop.refund", resource) when { principal.outside };',
    );
    expect(await listed(cedar, 'shop.pay', internal)).toBe(true);
    expect(await listed(cedar, 'shop.pay', anAgent('x', ['sellers']))).toBe(false);
    expect(await listed(cedar, 'shop.look', anAgent('special'))).toBe(true);
    expect(await listed(cedar, 'shop.look', internal)).toBe(false);
    expect(await listed(cedar, 'shop.refund', forCustomer)).toBe(true);
    expect(await listed(cedar, 'shop.refund', internal)).toBe(false);
  });

  it(verifies('policy.listing', 'lists a tool a conditional permit covers'), async () => {
    expect(await listed(`permit (principal, ${pay}, resource) when { ${amount}.greaterThan(decimal("5.0")) };`)).toBe(
      true,
    );
    expect(await listed(`permit (principal, ${pay}, resource) when { context.arguments.count == 3 };`)).toBe(true);
  });

  it(verifies('policy.listing', 'does not list a tool whose permit can only hold where a forbid holds'), async () => {
    const permit = `permit (principal, ${pay}, resource) when { ${amount}.greaterThan(decimal("5.0")) };`;
    expect(
      await listed(
        lines(permit, `forbid (principal, ${pay}, resource) when { ${amount}.greaterThan(decimal("3.0")) };`),
      ),
    ).toBe(false);
    expect(
      await listed(
        lines(permit, `forbid (principal, ${pay}, resource) when { ${amount}.greaterThan(decimal("10.0")) };`),
      ),
    ).toBe(true);
    // Only 5.0001 is left, one step of Cedar's four decimals above 5.
    expect(
      await listed(
        lines(permit, `forbid (principal, ${pay}, resource) when { ${amount}.greaterThanOrEqual(decimal("5.0002")) };`),
      ),
    ).toBe(true);
    expect(
      await listed(
        lines(permit, `forbid (principal, ${pay}, resource) when { ${amount}.greaterThanOrEqual(decimal("5.0001")) };`),
      ),
    ).toBe(false);
  });

  it(verifies('policy.listing', 'finds no decimal strictly between two neighbours four places apart'), async () => {
    const between = (low: string, high: string) =>
      `permit (principal, ${pay}, resource) when { ${amount}.greaterThan(decimal("${low}")) && ${amount}.lessThan(decimal("${high}")) };`;
    expect(await listed(between('5.0', '5.0001'))).toBe(false);
    expect(await listed(between('5.0', '5.0002'))).toBe(true);
    expect(await listed(between('-0.0001', '0.0001'))).toBe(true);
    expect(await listed(between('1000.0', '999.9999'))).toBe(false);
  });

  it(verifies('policy.listing', 'compares integers exactly'), async () => {
    const permit = `permit (principal, ${pay}, resource) when { context.arguments.count > 5 };`;
    expect(
      await listed(lines(permit, `forbid (principal, ${pay}, resource) when { context.arguments.count > 3 };`)),
    ).toBe(false);
    expect(
      await listed(lines(permit, `forbid (principal, ${pay}, resource) when { context.arguments.count >= 7 };`)),
    ).toBe(true);
    expect(
      await listed(lines(permit, `forbid (principal, ${pay}, resource) when { context.arguments.count >= 6 };`)),
    ).toBe(false);
  });

  it(verifies('policy.listing', 'decides string equality conditions'), async () => {
    const eur = `permit (principal, ${pay}, resource) when { context.arguments.currency == "EUR" };`;
    expect(await listed(eur)).toBe(true);
    expect(
      await listed(lines(eur, `forbid (principal, ${pay}, resource) when { context.arguments.currency == "EUR" };`)),
    ).toBe(false);
    expect(
      await listed(lines(eur, `forbid (principal, ${pay}, resource) when { context.arguments.currency != "EUR" };`)),
    ).toBe(true);
    expect(
      await listed(
        `permit (principal, ${pay}, resource) when { context.arguments.currency == "EUR" && context.arguments.currency == "USD" };`,
      ),
    ).toBe(false);
    expect(
      await listed(
        lines(
          `permit (principal, ${pay}, resource) when { context.arguments.currency == "EUR" && ${amount}.lessThan(decimal("10.0")) };`,
          `forbid (principal, ${pay}, resource) when { context.arguments.currency == "EUR" && ${amount}.lessThan(decimal("20.0")) };`,
        ),
      ),
    ).toBe(false);
  });

  it(verifies('policy.listing', 'decides boolean flags'), async () => {
    const flagged = `permit (principal, ${pay}, resource) when { context.arguments has flag && context.arguments.flag };`;
    expect(await listed(flagged)).toBe(true);
    expect(
      await listed(
        lines(
          flagged,
          `forbid (principal, ${pay}, resource) when { context.arguments has flag && context.arguments.flag == true };`,
        ),
      ),
    ).toBe(false);
    expect(
      await listed(
        lines(
          `permit (principal, ${pay}, resource) when { context.arguments has flag && !context.arguments.flag };`,
          `forbid (principal, ${pay}, resource) when { context.arguments has flag && context.arguments.flag };`,
        ),
      ),
    ).toBe(true);
  });

  it(verifies('policy.listing', 'decides optional fields with has'), async () => {
    const refund = 'action == Action::"shop.refund"';
    const withReason = `permit (principal, ${refund}, resource) when { context.arguments has reason };`;
    expect(await listed(withReason, 'shop.refund')).toBe(true);
    expect(
      await listed(
        lines(withReason, `forbid (principal, ${refund}, resource) when { context.arguments has reason };`),
        'shop.refund',
      ),
    ).toBe(false);
    expect(
      await listed(
        lines(withReason, `forbid (principal, ${refund}, resource) unless { context.arguments has reason };`),
        'shop.refund',
      ),
    ).toBe(true);
    expect(
      await listed(
        lines(
          withReason,
          `forbid (principal, ${refund}, resource) when { context.arguments has reason && context.arguments.reason == "late" };`,
        ),
        'shop.refund',
      ),
    ).toBe(true);
  });

  // An optional record can only be read behind `has`, so presence of a record must be searched
  // like presence of a plain field; otherwise no condition on a nested field is ever decided.
  it(verifies('policy.listing', 'decides fields of an optional nested record, read behind has'), async () => {
    const nested = `permit (principal, ${pay}, resource) when { context.arguments has meta && context.arguments.meta.a > 2 };`;
    expect(await listed(nested)).toBe(true);
    expect(
      await listed(lines(nested, `forbid (principal, ${pay}, resource) when { context.arguments has meta };`)),
    ).toBe(false);
    expect(
      await listed(
        lines(
          nested,
          `forbid (principal, ${pay}, resource) when { context.arguments has meta && context.arguments.meta.a >= 3 };`,
        ),
      ),
    ).toBe(false);
    expect(
      await listed(
        lines(
          nested,
          `forbid (principal, ${pay}, resource) when { context.arguments has meta && context.arguments.meta.a >= 4 };`,
        ),
      ),
    ).toBe(true);
  });

  it(verifies('policy.listing', 'lists tools that only run after a human step'), async () => {
    expect(await listed(`@approval("staff") @approvers("finance") permit (principal, ${pay}, resource);`)).toBe(true);
    expect(await listed(`@approval("customer") permit (principal, ${pay}, resource);`, 'shop.pay', forCustomer)).toBe(
      true,
    );
  });

  it(
    verifies('policy.listing', 'does not list a tool only customer permits cover to an agent acting for no customer'),
    async () => {
      const unconditional = `@approval("customer") permit (principal, ${pay}, resource);`;
      expect(await listed(unconditional, 'shop.pay', internal)).toBe(false);
      const conditional = lines(
        `@approval("customer") permit (principal, ${pay}, resource) when { ${amount}.lessThan(decimal("100.0")) };`,
        `@approval("staff, customer") @approvers("finance") permit (principal, ${pay}, resource) when { ${amount}.greaterThanOrEqual(decimal("100.0")) };`,
      );
      expect(await listed(conditional, 'shop.pay', internal)).toBe(false);
      expect(await listed(conditional, 'shop.pay', forCustomer)).toBe(true);
      expect(
        await listed(
          lines(
            unconditional,
            `@approval("staff") @approvers("finance") permit (principal, ${pay}, resource) when { context.arguments.currency == "USD" };`,
          ),
          'shop.pay',
          internal,
        ),
      ).toBe(true);
    },
  );

  it(
    verifies('policy.listing', 'stays conservative (listed) where the residual is not a comparison with constants'),
    async () => {
      expect(await listed(`permit (principal, ${pay}, resource) when { context.arguments.count + 1 > 5 };`)).toBe(true);
      expect(
        await listed(
          `permit (principal, ${pay}, resource) when { context.arguments has note && context.arguments.note like "urgent*" };`,
        ),
      ).toBe(true);
    },
  );

  it(
    verifies('policy.listing', 'caches per agent: the same answer twice, different agents their own answers'),
    async () => {
      const snapshot = await loadedShop({
        'p.cedar': lines(
          `permit (principal in Group::"buyers", ${pay}, resource) when { ${amount}.greaterThan(decimal("5.0")) };`,
          `forbid (principal in Group::"cautious", ${pay}, resource) when { ${amount}.greaterThan(decimal("3.0")) };`,
        ),
      });
      const tool = toolNamed(snapshot, 'shop.pay');
      const cautious = anAgent('bot', ['buyers', 'cautious']);
      const answers = () =>
        [internal, cautious, anAgent('other', ['buyers']), anAgent('bot'), forCustomer].map((who) =>
          snapshot.policy.isListed(who, tool),
        );
      expect(answers()).toEqual([true, false, true, false, true]);
      expect(answers()).toEqual([true, false, true, false, true]);
      // The same agent id with other groups is another agent for the cache.
      expect(snapshot.policy.isListed(anAgent('bot', ['buyers', 'cautious']), tool)).toBe(false);
      expect(snapshot.policy.isListed(anAgent('bot', ['buyers']), tool)).toBe(true);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// The property: over random policy sets on one tool with an amount (decimal), a currency (string)
// and an optional flag, the listing equals "some argument value in a fine grid is allowed".

const amountPool = ['0', '5', '10', '999.99', '1000', '-3.5'] as const;
const currencies = ['EUR', 'USD'] as const;

/** The canonical decimal `steps` ten-thousandths away from a canonical decimal. */
const shifted = (decimal: string, steps: number): string => {
  const negative = decimal.startsWith('-');
  const [integer = '0', fraction = ''] = decimal.replace('-', '').split('.');
  const scaled = BigInt(`${negative ? '-' : ''}${integer}${fraction.padEnd(4, '0')}`) + BigInt(steps);
  const sign = scaled < 0n ? '-' : '';
  const digits = (scaled < 0n ? -scaled : scaled).toString().padStart(5, '0');
  const whole = digits.slice(0, -4);
  const part = digits.slice(-4).replace(/0+$/, '');
  return `${sign}${whole}${part.length > 0 ? `.${part}` : ''}`;
};

const amountGrid = [
  ...new Set([
    ...amountPool.flatMap((value) => [shifted(value, -1), value, shifted(value, 1)]),
    '-1000000',
    '-4',
    '2.5',
    '7.5',
    '500',
    '2000',
    '1000000',
    '922337203685477.5807',
    '-922337203685477.5808',
  ]),
];
const currencyGrid = [...currencies, 'GBP'];
const flagGrid = [true, false, undefined] as const;

const argumentGrid: JsonObject[] = amountGrid.flatMap((value) =>
  currencyGrid.flatMap((currency) =>
    flagGrid.map((flag) => ({ amount: value, currency, count: 1, ...(flag === undefined ? {} : { flag }) })),
  ),
);

const cedarDecimal = (value: string) => `decimal("${value.includes('.') ? value : `${value}.0`}")`;

const amountComparison = fc
  .tuple(
    fc.constantFrom('lessThan', 'lessThanOrEqual', 'greaterThan', 'greaterThanOrEqual', '==', '!='),
    fc.constantFrom(...amountPool),
  )
  .map(([operator, value]) =>
    operator === '==' || operator === '!='
      ? `${amount} ${operator} ${cedarDecimal(value)}`
      : `${amount}.${operator}(${cedarDecimal(value)})`,
  );

const currencyComparison = fc
  .tuple(fc.constantFrom('==', '!='), fc.constantFrom(...currencies))
  .map(([operator, value]) => `context.arguments.currency ${operator} "${value}"`);

const flagCondition = fc.constantFrom(
  'context.arguments has flag && context.arguments.flag',
  'context.arguments has flag && context.arguments.flag == false',
  '!(context.arguments has flag)',
  'context.arguments has flag',
);

const fields = { amount: amountComparison, currency: currencyComparison, flag: flagCondition } as const;
type Field = keyof typeof fields;
const fieldNames: Field[] = ['amount', 'currency', 'flag'];

/** No condition, one comparison, or two comparisons on different fields joined by &&. */
const condition: fc.Arbitrary<string | null> = fc.oneof(
  fc.constant(null),
  fc.constantFrom(...fieldNames).chain((field) => fields[field]),
  fc
    .uniqueArray(fc.constantFrom(...fieldNames), { minLength: 2, maxLength: 2 })
    .chain(([left = 'amount', right = 'currency']) =>
      fc.tuple(fields[left], fields[right]).map(([a, b]) => `(${a}) && (${b})`),
    ),
);

const policy = fc
  .record({
    // Permits twice as often as forbids, so that fewer sets are closed outright.
    effect: fc.oneof({ weight: 2, arbitrary: fc.constant('permit') }, { weight: 1, arbitrary: fc.constant('forbid') }),
    clause: fc.constantFrom('when', 'unless'),
    condition,
    approval: fc.constantFrom('', '@approval("staff") @approvers("finance") ', '@approval("customer") '),
  })
  .map(({ effect, clause, condition: text, approval }) => {
    const annotations = effect === 'permit' ? approval : '';
    const body = text === null ? '' : ` ${clause} { ${text} }`;
    return `${annotations}${effect} (principal, ${pay}, resource)${body};`;
  });

describe('listing equals a brute-force search', async () => {
  const snapshot = await loadedShop({});
  const tools = [...snapshot.catalog.tools, ...snapshot.catalog.disabled];
  const model = cedarModelOf(tools);
  const tool = toolNamed(snapshot, 'shop.pay');

  it(verifies('policy.listing', 'the grid covers every pool constant and its neighbours'), () => {
    expect(amountGrid).toContain('999.9899');
    expect(amountGrid).toContain('999.9901');
    expect(amountGrid).toContain('-3.5001');
    expect(amountGrid).toContain('-0.0001');
    expect(amountGrid).toContain('1000.0001');
    expect(argumentGrid).toHaveLength(amountGrid.length * 3 * 3);
  });

  it(
    verifies(
      'policy.listing',
      'never hides a tool some argument value would get permitted, never shows one none would',
    ),
    () => {
      fc.assert(
        fc.property(
          fc.array(policy, { minLength: 1, maxLength: 5 }),
          fc.constantFrom(internal, forCustomer),
          (policies, who) => {
            const text = policies.join('\n');
            const compiled = compilePolicies([{ path: 'p.cedar', text }], model.schema, 'property');
            if (!compiled.ok)
              throw new Error(`generated policies refused: ${JSON.stringify(compiled.problems)}\n${text}`);
            const engine = new PolicyEngine(compiled.policies, model);
            const truth = argumentGrid.some((args) => engine.decide(who, tool, args).kind === 'allow');
            expect(engine.isListed(who, tool)).toBe(truth);
          },
        ),
        { numRuns: 150 },
      );
    },
  );
});
