// A retry after a URL elicitation, as a use-case: which recorded call it answers (by the state's
// binding in 2026-07-28, by tool and canonical arguments in 2025-11-25), and that only the record
// says whether the customer's step is over. On the in-memory store with the real policy engine.
import { describe, expect, it } from 'vitest';
import type { Customer } from '../../shared/approvals/approver.js';
import type { Execution } from '../../shared/executions/execution.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { customerAnswer } from '../../shared/use-cases/customer-decisions.js';
import { resumeByArguments, resumeByState } from '../../shared/use-cases/customer-handover.js';
import { registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  benchSnapshot,
  customerPolicy,
  procurementAgent,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const customerOnlyPolicy = customerPolicy.replace(
  '@id("small-orders")\npermit',
  '@id("small-orders")\n@approval("customer")\npermit',
);
const dana: Customer = { id: 'customer-1042', name: 'Dana' };
const forDana = { ...procurementAgent, customerId: dana.id };
const otherAgent = { ...forDana, id: 'other-agent' };

/** `joinPending`: false where a test holds the same call twice (settings.join_pending_calls off). */
const bedWith = async (joinPending = true): Promise<UseCaseBed> => {
  const snapshot = await benchSnapshot({ policy: customerOnlyPolicy });
  const { settings } = snapshot.config;
  return useCaseBed({
    snapshot: {
      ...snapshot,
      config: { ...snapshot.config, settings: { ...settings, join_pending_calls: joinPending } },
    },
  });
};

const order = (amount: string) => argumentsOf({ vendor: 'acme', amount });

const hold = async (bed: UseCaseBed, amount: string): Promise<Execution> => {
  const answer = await callTool(bed.deps, forDana, tools.create, order(amount));
  if (answer.execution_id === null) throw new Error(`nothing was held: ${JSON.stringify(answer)}`);
  await registerApproval(bed.deps, { execution_id: answer.execution_id, agent_id: forDana.id, task_token: 'token' });
  return bed.record(answer.execution_id);
};

const confirm = (bed: UseCaseBed, execution: Execution) =>
  customerAnswer(bed.deps, dana, {
    execution_id: execution.execution_id,
    outcome: 'confirm',
    arguments_hash: execution.arguments_hash ?? '',
  });

const stateOf = (execution: Execution) => ({
  execution_id: execution.execution_id,
  tool: execution.tool,
  arguments_hash: execution.arguments_hash ?? '',
});

describe('a retry after a URL elicitation', () => {
  it(
    verifies(
      'mcp.url-elicitation-confirmed',
      "2026-07-28: answers the state's call only once the record shows the customer confirmed",
    ),
    async () => {
      const bed = await bedWith();
      const held = await hold(bed, '20');
      const state = stateOf(held);
      expect(await resumeByState(bed.deps, forDana, state, tools.create, order('20'))).toMatchObject({
        kind: 'waiting_for_customer',
        execution: { execution_id: held.execution_id },
      });
      expect(await confirm(bed, held)).toMatchObject({ kind: 'answered' });
      const resumed = await resumeByState(bed.deps, forDana, state, tools.create, order('20'));
      expect(resumed).toMatchObject({
        kind: 'customer_step_over',
        result: { execution_id: held.execution_id, status: 'approved' },
      });
      // Nothing new was recorded by the retries.
      expect((await bed.store.listByAgent(forDana.id)).items).toHaveLength(1);
    },
  );

  it(
    verifies(
      'mcp.request-state-sealed',
      '2026-07-28: a state presented on another request or by another agent names no call',
    ),
    async () => {
      const bed = await bedWith();
      const held = await hold(bed, '20');
      const state = stateOf(held);
      // Other arguments (canonically different), another tool, a forged hash, another agent.
      for (const [agent, stateGiven, name, args] of [
        [forDana, state, tools.create, order('21')],
        [forDana, state, tools.list, argumentsOf({ vendor: 'acme' })],
        [forDana, { ...state, tool: tools.list }, tools.list, argumentsOf({ vendor: 'acme' })],
        [forDana, { ...state, arguments_hash: 'b'.repeat(64) }, tools.create, order('20')],
        [otherAgent, state, tools.create, order('20')],
      ] as const) {
        expect(await resumeByState(bed.deps, agent, stateGiven, name, args)).toEqual({ kind: 'no_such_call' });
      }
      // The same arguments written differently canonicalize alike: still the same request.
      expect((await resumeByState(bed.deps, forDana, state, tools.create, order('20.0'))).kind).toBe(
        'waiting_for_customer',
      );
    },
  );

  it(
    verifies(
      'mcp.url-elicitation-confirmed',
      '2025-11-25: finds the newest matching customer-held call within its approval time, and nothing else',
    ),
    async () => {
      const bed = await bedWith(false);
      expect(await resumeByArguments(bed.deps, forDana, tools.create, order('20'))).toEqual({ kind: 'no_such_call' });
      const older = await hold(bed, '20');
      bed.clock.advance(1_000);
      const newer = await hold(bed, '20');
      await hold(bed, '30');
      expect(await resumeByArguments(bed.deps, forDana, tools.create, order('20'))).toMatchObject({
        kind: 'waiting_for_customer',
        execution: { execution_id: newer.execution_id },
      });
      expect(older.execution_id).not.toBe(newer.execution_id);
      await confirm(bed, newer);
      expect(await resumeByArguments(bed.deps, forDana, tools.create, order('20'))).toMatchObject({
        kind: 'customer_step_over',
        result: { execution_id: newer.execution_id },
      });
      // Other arguments, another agent, or past the approval time: no call to resume.
      expect(await resumeByArguments(bed.deps, forDana, tools.create, order('25'))).toEqual({ kind: 'no_such_call' });
      expect(await resumeByArguments(bed.deps, otherAgent, tools.create, order('20'))).toEqual({
        kind: 'no_such_call',
      });
      bed.clock.advance(approvalMs);
      expect(await resumeByArguments(bed.deps, forDana, tools.create, order('20'))).toEqual({ kind: 'no_such_call' });
    },
  );
});
