// The DynamoDB store's condition expressions: an attribute that must be unset is written without
// a parenthesized group, and the written condition means what the grouped one did.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbExecutionStore } from '../../../shared/adapters/dynamodb/execution-store.js';
import { conditionOf } from '../../../shared/adapters/dynamodb/plan-update.js';
import { anExecution } from '../../support/executions.js';
import { quietLog } from '../../support/logs.js';
import { verifies } from '../../support/requirements.js';

/** A client that records each command's condition and answers an applied update. */
const recordingClient = (conditions: string[]) =>
  ({
    send: async (command: { input: { ConditionExpression?: string } }) => {
      if (command.input.ConditionExpression !== undefined) conditions.push(command.input.ConditionExpression);
      return { Attributes: anExecution() };
    },
  }) as unknown as DynamoDBDocumentClient;

/** Evaluates a condition of names, AND, OR and NOT over truth values (DynamoDB's precedence). */
const evaluate = (condition: string, truth: Record<string, boolean>): boolean =>
  condition.split(' OR ').some((conjunction) =>
    conjunction.split(' AND ').every((term) => {
      const value = truth[term];
      if (value === undefined) throw new Error(`no truth value for ${term}`);
      return value;
    }),
  );

describe('conditions on an unset attribute', () => {
  it(
    verifies(
      'perf.store-conditions-flat',
      'the notice, the claim and the customer’s answer are checked without groups',
    ),
    async () => {
      const conditions: string[] = [];
      const store = new DynamoDbExecutionStore(recordingClient(conditions), 'executions', quietLog);
      const key = { execution_id: anExecution().execution_id, agent_id: anExecution().agent_id };
      await store.annotate(key, 'pending_approval', { notified_at: '2026-01-01T00:00:00.000Z' }, 'notified_at');
      await store.claim(key, { at: '2026-01-01T00:00:00.000Z', deadline: '2026-01-01T00:01:00.000Z' });
      await store.transition(key, {
        from: 'pending_approval',
        to: 'approved',
        at: '2026-01-01T00:00:00.000Z',
        guard: { customerUnanswered: true },
      });

      // A parenthesis only ever opens a function's arguments.
      for (const condition of conditions) expect(condition).not.toMatch(/(^|[\s(])\(/);
      const unset = conditions.filter((condition) => condition.includes(':null'));
      expect(unset).toHaveLength(3);
      for (const [index, name] of ['#notified_at', '#claimed_at', '#customer_confirmed_at'].entries()) {
        expect(unset[index]).toContain(` AND attribute_not_exists(${name}) OR `);
        expect(unset[index]).toMatch(new RegExp(` AND attribute_type\\(${name}, :null\\)$`));
      }
    },
  );

  it(verifies('perf.store-conditions-flat', 'means all the conditions, and the attribute absent or NULL'), () => {
    const written = conditionOf(['a', 'b'], ['attribute_not_exists(x)', 'attribute_type(x, :null)']);
    expect(written).toBe('a AND b AND attribute_not_exists(x) OR a AND b AND attribute_type(x, :null)');
    for (const a of [true, false])
      for (const b of [true, false])
        for (const absent of [true, false])
          for (const isNull of [true, false]) {
            if (absent && isNull) continue;
            const truth = { a, b, 'attribute_not_exists(x)': absent, 'attribute_type(x, :null)': isNull };
            expect(evaluate(written, truth)).toBe(a && b && (absent || isNull));
          }
    expect(conditionOf(['a', 'b'])).toBe('a AND b');
  });

  it(verifies('quorum.approval-write', 'two choices mean one of each, all the conditions besides'), () => {
    const written = conditionOf(['a'], ['x', 'y'], ['u', 'v']);
    expect(written).toBe('a AND x AND u OR a AND x AND v OR a AND y AND u OR a AND y AND v');
    for (const a of [true, false])
      for (const x of [true, false])
        for (const y of [true, false])
          for (const u of [true, false])
            for (const v of [true, false]) expect(evaluate(written, { a, x, y, u, v })).toBe(a && (x || y) && (u || v));
  });
});
