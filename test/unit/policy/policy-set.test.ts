// Policy files checked when the configuration loads: Cedar's parser and strict validator against
// the schema generated from the catalog, the human-step annotations, and every problem reported
// with its file (relative to the configuration's folder), its line in that file and the message.
//
// Long: one case per way a policy file can be refused, each with its file, line and message.
import { describe, expect, it } from 'vitest';
import type { ConfigProblem } from '../../../shared/config/resolved.js';
import { loadSnapshot } from '../../../shared/control-plane/snapshot.js';
import { anAgent } from '../../support/agents.js';
import { humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';
import { lines, loadedShop, refusedShop, shopConfig, toolNamed } from './policy-fixtures.js';

const problem = (file: string, line: number | null, message: string): ConfigProblem => ({
  file,
  path: 'policies',
  line,
  message,
});

/** Problems without repeats (Cedar may report one mistake once per operand). */
const distinct = (problems: readonly ConfigProblem[]): ConfigProblem[] =>
  problems.filter(
    (found, index) => problems.findIndex((other) => JSON.stringify(other) === JSON.stringify(found)) === index,
  );

const fine = 'permit (principal, action == Action::"shop.look", resource);';

describe('validation against the generated schema', () => {
  it(verifies('policy.schema-validation', 'refuses an unknown action, at its line in the second file'), async () => {
    const problems = await refusedShop({
      'a.cedar': fine,
      'b.cedar': lines('// b', '', 'permit (', '  principal,', '  action == Action::"shop.nope",', '  resource', ');'),
    });
    expect(problems).toEqual([
      problem(
        'b.cedar',
        5,
        'for policy "b.cedar:3", unrecognized action `Action::"shop.nope"`; did you mean `Action::"shop"`?',
      ),
    ]);
  });

  it(verifies('policy.schema-validation', 'refuses an unknown argument field, at the line that reads it'), async () => {
    const problems = await refusedShop({
      'a.cedar': lines(
        '',
        '',
        'permit (principal, action == Action::"shop.pay", resource)',
        'when {',
        '  context.arguments.nope == "x"',
        '};',
      ),
    });
    expect(problems).toEqual([
      problem(
        'a.cedar',
        5,
        'for policy "a.cedar:3", attribute `arguments.nope` in context for Action::"shop.pay" not found; did you mean `note`?',
      ),
    ]);
  });

  it(
    verifies(
      'policy.schema-validation',
      'refuses a field Cedar cannot hold exactly (a plain number is left out of the model)',
    ),
    async () => {
      const problems = await refusedShop({
        'a.cedar': 'permit (principal, action == Action::"shop.pay", resource) when { context.arguments.ratio == 1 };',
      });
      expect(problems).toEqual([
        problem(
          'a.cedar',
          1,
          'for policy "a.cedar:1", attribute `arguments.ratio` in context for Action::"shop.pay" not found; did you mean `meta`?',
        ),
      ]);
    },
  );

  it(
    verifies('policy.schema-validation', 'checks a field for every action the scope allows: one problem per tool'),
    async () => {
      const problems = await refusedShop({
        'a.cedar':
          'permit (principal, action in [Action::"shop.look", Action::"shop.pay"], resource)\nwhen { context.arguments.nope == 1 };',
      });
      expect([...problems].sort((left, right) => left.message.localeCompare(right.message))).toEqual([
        problem(
          'a.cedar',
          2,
          'for policy "a.cedar:1", attribute `arguments.nope` in context for Action::"shop.look" not found',
        ),
        problem(
          'a.cedar',
          2,
          'for policy "a.cedar:1", attribute `arguments.nope` in context for Action::"shop.pay" not found; did you mean `note`?',
        ),
      ]);
    },
  );

  it(verifies('policy.schema-validation', 'refuses comparing a decimal amount with <'), async () => {
    const problems = await refusedShop({
      'a.cedar': lines(
        'permit (principal, action == Action::"shop.pay", resource)',
        'when { context.arguments.amount < decimal("1000.0") };',
      ),
    });
    expect(distinct(problems)).toEqual([
      problem(
        'a.cedar',
        2,
        'for policy "a.cedar:1", unexpected type: expected datetime, or duration, or Long but saw decimal',
      ),
    ]);
  });

  it(verifies('policy.schema-validation', 'refuses comparing a string field with a number'), async () => {
    const equality = await refusedShop({
      'a.cedar': lines(
        'permit (principal, action == Action::"shop.pay", resource)',
        'when { context.arguments.currency == 5 };',
      ),
    });
    expect(equality).toEqual([
      problem(
        'a.cedar',
        2,
        'the types Long and String are not compatible; for policy "a.cedar:1", both operands to a `==` expression must have compatible types. Types must be exactly equal to be compatible',
      ),
    ]);
    const order = await refusedShop({
      'a.cedar': lines(
        'permit (principal, action == Action::"shop.pay", resource)',
        '',
        'when { context.arguments.currency > 5 };',
      ),
    });
    expect(order).toEqual([
      problem('a.cedar', 3, 'for policy "a.cedar:1", unexpected type: expected Long but saw String'),
    ]);
  });

  it(
    verifies('policy.schema-validation', 'refuses reading an optional field or the customer without has'),
    async () => {
      expect(
        await refusedShop({
          'a.cedar':
            'forbid (principal, action == Action::"shop.pay", resource) when { context.arguments.note == "x" };',
        }),
      ).toEqual([
        problem(
          'a.cedar',
          1,
          'for policy "a.cedar:1", unable to guarantee safety of access to optional attribute `arguments.note` in context for Action::"shop.pay"; try testing for the attribute\'s presence with `context.arguments has note && ..`',
        ),
      ]);
      expect(
        await refusedShop({ 'a.cedar': 'permit (principal, action, resource) when { principal.customer == "c" };' }),
      ).toEqual([
        problem(
          'a.cedar',
          1,
          'for policy "a.cedar:1", unable to guarantee safety of access to optional attribute `customer` on entity type `Agent`; try testing for the attribute\'s presence with `e has customer && ..`',
        ),
      ]);
    },
  );

  it(verifies('policy.schema-validation', 'refuses an unknown entity type'), async () => {
    expect(
      await refusedShop({ 'a.cedar': fine, 'b.cedar': 'permit (principal in Team::"x", action, resource);' }),
    ).toEqual([
      problem('b.cedar', 1, 'for policy "b.cedar:1", unrecognized entity type `Team`; did you mean `Agent`?'),
    ]);
  });

  it(
    verifies('policy.schema-validation', 'accepts a policy naming a turned-off tool, which still applies to it'),
    async () => {
      const snapshot = await loadedShop({
        'a.cedar': '@id("off") permit (principal, action == Action::"shop.off", resource);',
      });
      expect(snapshot.catalog.byName.has('shop.off')).toBe(false);
      expect(snapshot.policy.decide(anAgent('a'), toolNamed(snapshot, 'shop.off'), {})).toMatchObject({
        kind: 'allow',
        step: null,
        determining: [{ name: 'off' }],
      });
    },
  );

  it(verifies('policy.schema-validation', 'accepts an explicit empty list of policy files'), async () => {
    await expect(loadedShop({})).resolves.toMatchObject({ catalog: { disabled: [{ name: 'shop.off' }] } });
  });

  it(
    verifies('config.no-half-written', 'refuses a policy file that holds no policy, naming each such file'),
    async () => {
      // An empty file (or one with only comments) is what an editor caught mid-save leaves behind.
      const problems = await refusedShop({ 'a.cedar': '', 'b.cedar': '// nothing yet\n', 'c.cedar': fine });
      expect(problems).toEqual([
        {
          file: 'gateway.config.yaml',
          path: 'policies[0]',
          line: 2,
          message: 'the policy file a.cedar holds no policy',
        },
        {
          file: 'gateway.config.yaml',
          path: 'policies[1]',
          line: 3,
          message: 'the policy file b.cedar holds no policy',
        },
      ]);
    },
  );
});

describe('parse errors', () => {
  it(
    verifies('policy.schema-validation', 'reports a missing ; in the second file at its line within that file'),
    async () => {
      const problems = await refusedShop({
        'a.cedar': lines(fine, fine),
        'b.cedar': lines(
          '// second',
          'permit (principal, action == Action::"shop.look", resource)',
          '',
          'permit (principal, action == Action::"shop.pay", resource);',
        ),
      });
      expect(problems).toEqual([
        problem('b.cedar', 4, 'failed to parse policy from string: unexpected token `(` (expected `{`)'),
      ]);
    },
  );

  it(
    verifies(
      'policy.schema-validation',
      'reports an unclosed parenthesis in the second file at its line within that file',
    ),
    async () => {
      const problems = await refusedShop({
        'a.cedar': fine,
        'b.cedar': lines(
          '',
          '',
          'permit (principal, action == Action::"shop.pay", resource)',
          'when { (context.arguments.count > 1 };',
        ),
      });
      expect(problems).toEqual([
        problem('b.cedar', 4, 'failed to parse policy from string: unexpected token `}` (expected `)`)'),
      ]);
    },
  );

  it(verifies('policy.schema-validation', 'reports a scope left open at the end of the second file'), async () => {
    const problems = await refusedShop({
      'a.cedar': fine,
      'b.cedar': lines('', '', 'permit (principal, action == Action::"shop.pay", resource'),
    });
    expect(problems).toEqual([
      problem(
        'b.cedar',
        3,
        'failed to parse policy from string: unexpected end of input (expected `!=`, `)`, `,`, `:`, `<`, `<=`, `==`, `>`, `>=`, `in`, or `is`)',
      ),
    ]);
  });

  it(
    verifies('policy.schema-validation', 'reports an unclosed parenthesis in the first file in that file'),
    async () => {
      const problems = await refusedShop({
        'a.cedar': 'permit (principal, action, resource) when { (true };\n',
        'b.cedar': fine,
      });
      expect(problems).toEqual([
        problem('a.cedar', 1, 'failed to parse policy from string: unexpected token `}` (expected `)`)'),
      ]);
    },
  );

  // Each file is a policy set of its own: a policy left unterminated at the end of one file is
  // that file's mistake, whatever the next file begins with.
  it(
    verifies(
      'policy.schema-validation',
      'reports a missing ; at the end of the first file in that file, not in the next',
    ),
    async () => {
      const problems = await refusedShop({
        'a.cedar': lines('// a', 'permit (principal, action == Action::"shop.look", resource)'),
        'b.cedar': lines('// b', '@id("b")', 'permit (principal, action == Action::"shop.pay", resource);'),
      });
      expect(problems).toEqual([
        expect.objectContaining({
          file: 'a.cedar',
          line: 2,
          message: expect.stringMatching(/^failed to parse policy from string/),
        }),
      ]);
    },
  );

  it(verifies('policy.schema-validation', 'refuses a policy that only ends in the next file'), async () => {
    const result = await loadSnapshot({
      text: shopConfig(['a.cedar', 'b.cedar']),
      file: 'gateway.config.yaml',
      environment: {},
      files: {
        read: async (path) =>
          path === 'a.cedar'
            ? 'permit (principal, action == Action::"shop.look", resource)\n'
            : path === 'b.cedar'
              ? ';\n'
              : undefined,
      },
    });
    expect(result.ok).toBe(false);
  });
});

describe('human-step annotations', () => {
  it(
    verifies('policy.schema-validation', 'refuses @approval naming someone other than staff or customer'),
    async () => {
      expect(
        await refusedShop({
          'a.cedar': lines(fine, '@approval("boss")', 'permit (principal, action, resource);'),
        }),
      ).toEqual([
        problem(
          'a.cedar',
          2,
          '@approval("boss") names "boss"; expected "staff", "customer" or both ("staff, customer")',
        ),
      ]);
      expect(
        await refusedShop({
          'a.cedar': lines(
            '@approval("staff, manager")',
            '@approvers("finance")',
            'permit (principal, action, resource);',
          ),
        }),
      ).toEqual([
        problem(
          'a.cedar',
          1,
          '@approval("staff, manager") names "manager"; expected "staff", "customer" or both ("staff, customer")',
        ),
      ]);
    },
  );

  it(verifies('policy.schema-validation', 'refuses @approval naming nobody'), async () => {
    expect(
      await refusedShop({
        'a.cedar': lines(
          '@approval("")',
          'permit (principal, action, resource);',
          '@approval(" , ")',
          'permit (principal, action, resource);',
        ),
      }),
    ).toEqual([
      problem('a.cedar', 1, '@approval("") names nobody; expected "staff", "customer" or both'),
      problem('a.cedar', 3, '@approval(" , ") names nobody; expected "staff", "customer" or both'),
    ]);
  });

  it(
    verifies('policy.schema-validation', 'refuses a staff approval without @approvers, or with a blank group'),
    async () => {
      expect(
        await refusedShop({
          'a.cedar': fine,
          'b.cedar': lines('', '@approval("staff")', 'permit (principal, action, resource);'),
        }),
      ).toEqual([problem('b.cedar', 2, 'a staff approval names the group that decides: @approvers("<group>")')]);
      expect(
        await refusedShop({
          'a.cedar': lines('@approval("staff")', '@approvers("  ")', 'permit (principal, action, resource);'),
        }),
      ).toEqual([problem('a.cedar', 1, 'a staff approval names the group that decides: @approvers("<group>")')]);
      expect(
        await refusedShop({
          'a.cedar': lines('@approval("customer, staff")', 'permit (principal, action, resource);'),
        }),
      ).toEqual([problem('a.cedar', 1, 'a staff approval names the group that decides: @approvers("<group>")')]);
    },
  );

  it(verifies('policy.schema-validation', 'refuses @approvers without a staff approval'), async () => {
    expect(
      await refusedShop({
        'a.cedar': lines(
          '@approvers("finance")',
          'permit (principal, action, resource);',
          '@approval("customer")',
          '@approvers("finance")',
          'permit (principal, action, resource);',
        ),
      }),
    ).toEqual([
      problem('a.cedar', 1, '@approvers names who decides a staff approval; add @approval("staff")'),
      problem('a.cedar', 3, '@approvers names who decides a staff approval; add @approval("staff")'),
    ]);
  });

  it(verifies('policy.schema-validation', 'refuses annotations on a forbid'), async () => {
    expect(
      await refusedShop({
        'a.cedar': lines(fine, '@approval("staff")', '@approvers("finance")', 'forbid (principal, action, resource);'),
      }),
    ).toEqual([
      problem('a.cedar', 2, '@approval and @approvers belong on permit policies; a forbid is never approved'),
    ]);
    expect(
      await refusedShop({ 'a.cedar': lines('@approval("customer")', 'forbid (principal, action, resource);') }),
    ).toEqual([
      problem('a.cedar', 1, '@approval and @approvers belong on permit policies; a forbid is never approved'),
    ]);
  });

  it(
    verifies('policy.schema-validation', 'reports annotation and validation problems of several files together'),
    async () => {
      const problems = await refusedShop({
        'a.cedar': lines('// a', '@approval("boss")', 'permit (principal, action, resource);'),
        'b.cedar': lines('// b', 'permit (principal, action == Action::"shop.nope", resource);'),
      });
      expect(problems).toEqual([
        problem(
          'a.cedar',
          2,
          '@approval("boss") names "boss"; expected "staff", "customer" or both ("staff, customer")',
        ),
        problem(
          'b.cedar',
          2,
          'for policy "b.cedar:2", unrecognized action `Action::"shop.nope"`; did you mean `Action::"shop"`?',
        ),
      ]);
    },
  );

  it(
    verifies(
      ['policy.schema-validation', 'policy.human-step'],
      'reads both parties in any spelling, and trims the group',
    ),
    async () => {
      for (const spelling of ['staff, customer', 'customer staff', 'customer+staff', 'staff,staff, customer']) {
        const snapshot = await loadedShop({
          'a.cedar': lines(
            `@approval("${spelling}")`,
            '@approvers(" finance ")',
            'permit (principal, action, resource);',
          ),
        });
        expect(snapshot.policy.decide(anAgent('a', [], 'c-1'), toolNamed(snapshot, 'shop.look'), {})).toEqual({
          kind: 'allow',
          step: humanStep({ staff: 'finance', customer: true }),
          determining: [
            {
              id: 'policy0',
              name: 'a.cedar:1',
              file: 'a.cedar',
              line: 1,
              effect: 'permit',
              approvals: ['customer', 'staff'],
              approvers: 'finance',
              quorum: 1,
              escalation: null,
              reauth_ms: null,
              acr: null,
            },
          ],
        });
      }
    },
  );
});

describe('where problems and policies are placed', () => {
  it(verifies('policy.schema-validation', "joins the policy path to the configuration file's folder"), async () => {
    const files = { 'policies/a.cedar': lines('// a', '@approval("boss")', 'permit (principal, action, resource);') };
    const message = '@approval("boss") names "boss"; expected "staff", "customer" or both ("staff, customer")';
    expect(await refusedShop(files, 'org/gateway.config.yaml')).toEqual([problem('org/policies/a.cedar', 2, message)]);
    expect(await refusedShop(files, 'gateway.config.yaml')).toEqual([problem('policies/a.cedar', 2, message)]);
    expect(await refusedShop(files, 'org\\deep\\gateway.config.yaml')).toEqual([
      problem('org/deep/policies/a.cedar', 2, message),
    ]);
    expect(
      await refusedShop(
        { 'policies/a.cedar': fine, 'b.cedar': 'permit (principal, action == Action::"shop.x", resource);' },
        'org/gateway.config.yaml',
      ),
    ).toEqual([
      problem(
        'org/b.cedar',
        1,
        'for policy "b.cedar:1", unrecognized action `Action::"shop.x"`; did you mean `Action::"shop"`?',
      ),
    ]);
  });

  it(verifies('policy.schema-validation', 'names each policy by its @id, or by its file and line'), async () => {
    const snapshot = await loadedShop({
      'policies/a.cedar': lines(
        '// reads',
        '@id("lookups")',
        'permit (principal in Group::"readers", action == Action::"shop.look", resource);',
      ),
      'policies/b.cedar': lines(
        '// a comment',
        '',
        '',
        'permit (principal in Group::"writers", action == Action::"shop.look", resource);',
        '',
        '@approval("staff") @approvers("finance")',
        'permit (principal in Group::"careful", action == Action::"shop.look", resource);',
      ),
    });
    const look = toolNamed(snapshot, 'shop.look');
    expect(snapshot.policy.decide(anAgent('r', ['readers']), look, {}).determining).toEqual([
      {
        id: 'policy0',
        name: 'lookups',
        file: 'policies/a.cedar',
        line: 2,
        effect: 'permit',
        approvals: [],
        approvers: null,
        quorum: 1,
        escalation: null,
        reauth_ms: null,
        acr: null,
      },
    ]);
    expect(snapshot.policy.decide(anAgent('w', ['writers']), look, {}).determining).toEqual([
      {
        id: 'policy1',
        name: 'policies/b.cedar:4',
        file: 'policies/b.cedar',
        line: 4,
        effect: 'permit',
        approvals: [],
        approvers: null,
        quorum: 1,
        escalation: null,
        reauth_ms: null,
        acr: null,
      },
    ]);
    expect(snapshot.policy.decide(anAgent('c', ['careful']), look, {}).determining).toEqual([
      {
        id: 'policy2',
        name: 'policies/b.cedar:6',
        file: 'policies/b.cedar',
        line: 6,
        effect: 'permit',
        approvals: ['staff'],
        approvers: 'finance',
        quorum: 1,
        escalation: null,
        reauth_ms: null,
        acr: null,
      },
    ]);
  });

  it(verifies('policy.schema-validation', 'places two identical policies at their own lines'), async () => {
    const snapshot = await loadedShop({
      'a.cedar': lines(fine, fine),
      'b.cedar': lines('', fine),
    });
    const determining = snapshot.policy.decide(anAgent('a'), toolNamed(snapshot, 'shop.look'), {}).determining;
    expect([...determining].sort((left, right) => left.id.localeCompare(right.id))).toEqual([
      expect.objectContaining({ id: 'policy0', name: 'a.cedar:1' }),
      expect.objectContaining({ id: 'policy1', name: 'a.cedar:2' }),
      expect.objectContaining({ id: 'policy2', name: 'b.cedar:2' }),
    ]);
  });

  // Cedar lists the policies of a set sorted by id as text (policy10 before policy2); each keeps
  // its own name and line all the same.
  it(verifies('policy.schema-validation', 'names and places every policy of a set of more than ten'), async () => {
    const snapshot = await loadedShop({
      'a.cedar': lines(
        ...Array.from({ length: 12 }, (_, index) =>
          index % 2 === 0
            ? `permit (principal in Group::"g${index}", action, resource);`
            : `@id("p${index}") permit (principal in Group::"g${index}", action, resource);`,
        ),
      ),
    });
    const look = toolNamed(snapshot, 'shop.look');
    for (let index = 0; index < 12; index++) {
      const name = index % 2 === 0 ? `a.cedar:${index + 1}` : `p${index}`;
      expect(snapshot.policy.decide(anAgent('a', [`g${index}`]), look, {}).determining).toEqual([
        {
          id: `policy${index}`,
          name,
          file: 'a.cedar',
          line: index + 1,
          effect: 'permit',
          approvals: [],
          approvers: null,
          quorum: 1,
          escalation: null,
          reauth_ms: null,
          acr: null,
        },
      ]);
    }
  });

  it(
    verifies(
      'policy.schema-validation',
      'reports an annotation problem at its line in a set of more than ten policies',
    ),
    async () => {
      expect(
        await refusedShop({
          'a.cedar': lines(
            ...Array.from({ length: 12 }, (_, index) =>
              index === 2
                ? `@approval("boss") permit (principal in Group::"g${index}", action, resource);`
                : `permit (principal in Group::"g${index}", action, resource);`,
            ),
          ),
        }),
      ).toEqual([
        problem(
          'a.cedar',
          3,
          '@approval("boss") names "boss"; expected "staff", "customer" or both ("staff, customer")',
        ),
      ]);
    },
  );

  // A commented-out copy of a policy must not be taken for the policy itself.
  it(
    verifies('policy.schema-validation', 'places a policy at its own line when a comment above repeats its text'),
    async () => {
      const snapshot = await loadedShop({ 'a.cedar': lines(`// ${fine}`, fine) });
      expect(snapshot.policy.decide(anAgent('a'), toolNamed(snapshot, 'shop.look'), {}).determining).toEqual([
        expect.objectContaining({ id: 'policy0', name: 'a.cedar:2', line: 2 }),
      ]);
    },
  );

  it(
    verifies(
      'policy.schema-validation',
      "reports an annotation problem at the policy's line when a comment above repeats it",
    ),
    async () => {
      expect(
        await refusedShop({
          'a.cedar': lines(
            '// @approval("boss") permit (principal, action, resource);',
            '@approval("boss") permit (principal, action, resource);',
          ),
        }),
      ).toEqual([
        problem(
          'a.cedar',
          2,
          '@approval("boss") names "boss"; expected "staff", "customer" or both ("staff, customer")',
        ),
      ]);
    },
  );
});
