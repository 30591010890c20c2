// policy:test's parts: a case file read strictly with each problem at its line, and a case
// rehearsed through the gateway's own reading, canonicalization and policy decision (decideCall),
// compared with what it expects.
import { describe, expect, it } from 'vitest';
import { readCaseFile } from '../../../shared/policy/case-file.js';
import { humanStep } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';
import { lines, rehearsedOnDemo } from './policy-fixtures.js';

describe('a case file', () => {
  it(verifies('ops.policy-test', 'reads each case with the line it starts at'), () => {
    const file = readCaseFile(
      lines(
        '# two cases',
        '- name: first',
        '  agent: a',
        '  tool: t',
        '  expect: { decision: run }',
        '',
        '- name: second',
        '  agent: a',
        '  tool: t',
        '  arguments: \'{"x": 1}\'',
        '  expect: { decision: hold, approval: [customer, finance], policies: [p] }',
      ),
    );
    expect(file.ok && file.cases.map((found) => [found.name, found.line])).toEqual([
      ['first', 2],
      ['second', 7],
    ]);
  });

  it(verifies('ops.policy-test', 'refuses a case file that is not valid, each problem at its line'), () => {
    const file = readCaseFile(
      lines(
        '- name: x',
        '  agent: a',
        '  tool: t',
        '  expect: { decision: maybe }',
        '  extra: 1',
        '- name: y',
        '  agent: a',
        '  expect: { decision: run }',
      ),
    );
    expect(file.ok).toBe(false);
    expect(!file.ok && file.problems).toEqual([
      { line: 4, message: 'case 1 ("x"), expect.decision: Invalid option: expected one of "run"|"hold"|"deny"' },
      { line: 5, message: 'case 1 ("x"): unknown field "extra"' },
      { line: 6, message: 'case 2 ("y"), tool: missing' },
    ]);
    expect(readCaseFile('- name: [x\n')).toMatchObject({ ok: false, problems: [{ line: 2 }] });
    expect(readCaseFile('name: x\n')).toEqual({
      ok: false,
      problems: [{ line: 1, message: 'a case file is a list of cases (- name: …, agent: …, tool: …, expect: …)' }],
    });
  });
});

const refundCase = (expect: string, args = '{ order_reference: SO-1, amount: 750, currency: EUR }') =>
  lines(
    '- name: a large refund',
    '  agent: support-agent',
    '  tool: erp.refunds.create',
    `  arguments: ${args}`,
    `  expect: ${expect}`,
  );

describe('a case rehearsed', () => {
  it(
    verifies('ops.policy-test', 'passes when the decision, the human step and the policies are as expected'),
    async () => {
      const result = await rehearsedOnDemo(
        refundCase('{ decision: hold, approval: [finance, customer], policies: [large-customer-refunds] }'),
      );
      expect(result.failures).toEqual([]);
      expect(result.got).toMatchObject({
        decision: 'hold',
        reason: null,
        step: humanStep({ staff: 'finance', customer: true }),
        words: 'customer confirmation, then staff approval by finance',
        policies: [{ name: 'large-customer-refunds', effect: 'permit', at: 'policies/demo.cedar:52' }],
      });
    },
  );

  it(verifies('ops.policy-test', 'says expected and got for each way an expectation does not hold'), async () => {
    const result = await rehearsedOnDemo(
      refundCase('{ decision: run, approval: customer, policies: [customer-refunds] }'),
    );
    expect(result.failures).toEqual([
      'expected decision run, got hold',
      'expected approval customer, got customer and finance (customer confirmation, then staff approval by finance)',
      'expected policies [customer-refunds], got [large-customer-refunds]',
    ]);
  });

  it(
    verifies('ops.policy-test', 'refuses arguments as the gateway does, with its input errors, before the policy'),
    async () => {
      // A zero-width space in an identifier and an unknown field: canonicalization and validation refuse both.
      const result = await rehearsedOnDemo(
        refundCase(
          '{ decision: deny, reason: invalid_arguments }',
          '{ order_reference: "SO-\\u200B1", amount: 750, currency: EUR, note: x }',
        ),
      );
      expect(result.failures).toEqual([]);
      expect(result.got?.input_errors?.map((error) => [error.path, error.code])).toEqual([
        ['/note', 'unknown_field'],
        ['/order_reference', 'disallowed_character'],
      ]);
    },
  );

  it(verifies('ops.policy-test', 'reads arguments given as JSON text strictly, as a request is read'), async () => {
    const duplicate = await rehearsedOnDemo(
      refundCase(
        '{ decision: deny, reason: invalid_arguments }',
        `'{"order_reference": "SO-1", "amount": 1, "amount": 2, "currency": "EUR"}'`,
      ),
    );
    expect(duplicate.got?.input_errors?.map((error) => error.code)).toEqual(['duplicate_key']);
    const exact = await rehearsedOnDemo(
      refundCase(
        '{ decision: hold, approval: customer }',
        `'{"order_reference": "SO-1", "amount": 500.0000, "currency": "EUR"}'`,
      ),
    );
    expect(exact.failures).toEqual([]);
  });

  it(verifies('ops.policy-test', 'answers unknown_tool for a tool the agent cannot see, saying why'), async () => {
    const result = await rehearsedOnDemo(
      lines(
        '- name: support orders',
        '  agent: support-agent',
        '  tool: erp.vendors.delete',
        '  arguments: { vendor_id: V-1 }',
        '  expect: { decision: deny, reason: unknown_tool }',
      ),
    );
    expect(result.failures).toEqual([]);
    expect(result.got?.words).toBe(
      'refused as an unknown tool: hidden from this agent: a forbid always holds for this agent: no-vendor-deletion (policies/demo.cedar:65)',
    );
  });

  it(verifies('ops.policy-test', 'fails a case naming an agent the configuration does not have'), async () => {
    const result = await rehearsedOnDemo(refundCase('{ decision: run }').replace('support-agent', 'ghost'));
    expect(result.got).toBeNull();
    expect(result.failures).toEqual([
      'agent "ghost" is not in the configuration (its agents: procurement-agent, support-agent)',
    ]);
  });
});
