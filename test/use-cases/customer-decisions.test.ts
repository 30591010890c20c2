// The customer's step as a use-case: the approval_url a held call carries while the customer's
// step is open, what a confirmation and a decline record, the order (the customer first, then
// staff), and who may answer at all. On the in-memory store with the real policy engine.
import { describe, expect, it } from 'vitest';
import type { Customer } from '../../shared/approvals/approver.js';
import { statusMessages } from '../../shared/errors.js';
import type { Execution } from '../../shared/executions/execution.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { customerAnswer, viewCustomerCall } from '../../shared/use-cases/customer-decisions.js';
import { getExecutionStatus } from '../../shared/use-cases/get-execution-status.js';
import { executeApproved, registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { humanStep } from '../support/executions.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  benchSnapshot,
  customerPolicy,
  financeApprover,
  procurementAgent,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

/** The customer confirms small orders alone; large ones need the customer, then finance. */
const customerOnlyPolicy = customerPolicy.replace(
  '@id("small-orders")\npermit',
  '@id("small-orders")\n@approval("customer")\npermit',
);
const dana: Customer = { id: 'customer-1042', name: 'Dana' };
const otherCustomer: Customer = { id: 'customer-2001', name: 'Omar' };
const forDana = { ...procurementAgent, customerId: dana.id };

const bedWith = async (): Promise<UseCaseBed> =>
  useCaseBed({ snapshot: await benchSnapshot({ policy: customerOnlyPolicy }) });

const hold = async (bed: UseCaseBed, amount: string): Promise<Execution> => {
  const answer = await callTool(bed.deps, forDana, tools.create, argumentsOf({ vendor: 'acme', amount }));
  if (answer.execution_id === null) throw new Error(`nothing was held: ${JSON.stringify(answer)}`);
  await registerApproval(bed.deps, { execution_id: answer.execution_id, agent_id: forDana.id, task_token: 'token' });
  return bed.record(answer.execution_id);
};

const answerOf = (execution: Execution, outcome: 'confirm' | 'decline') => ({
  execution_id: execution.execution_id,
  outcome,
  arguments_hash: execution.arguments_hash ?? '',
});

describe("the customer's step", () => {
  it(
    verifies(
      'customer.approval-url',
      'a call waiting for the customer answers approval_url and the message, and the status tool answers the same',
    ),
    async () => {
      const bed = await bedWith();
      const answer = await callTool(bed.deps, forDana, tools.create, argumentsOf({ vendor: 'acme', amount: '20' }));
      expect(answer).toMatchObject({
        status: 'pending_approval',
        approval_url: `http://127.0.0.1/customer/calls/${answer.execution_id}`,
        message:
          'Waiting for the customer: ask them to open approval_url and confirm. Then check with the status tool.',
      });
      // The link names the call and nothing else: no token, no argument, no secret.
      expect(new URL(answer.approval_url ?? '').search).toBe('');
      expect(await getExecutionStatus(bed.deps, forDana, { execution_id: answer.execution_id ?? '' })).toEqual(answer);
      // A call held for staff only has no customer link.
      const staffOnly = await callTool(bed.deps, procurementAgent, tools.list, argumentsOf({ vendor: 'restricted' }));
      expect(staffOnly).toMatchObject({ status: 'pending_approval', approval_url: null });
    },
  );

  it(
    verifies('customer.then-staff', 'the customer confirms first, then staff approve, and the call runs once'),
    async () => {
      const bed = await bedWith();
      const held = await hold(bed, '1500');
      expect(held.decision?.step).toEqual(humanStep({ staff: 'finance', customer: true }));
      // Staff cannot approve before the customer confirmed (rejecting stays possible).
      expect(
        await decide(bed.deps, financeApprover, { ...answerOf(held, 'confirm'), outcome: 'approve' }),
      ).toMatchObject({ kind: 'refused', reason: 'customer_confirms' });

      bed.clock.advance(60_000);
      const confirmed = await customerAnswer(bed.deps, dana, answerOf(held, 'confirm'));
      const at = new Date(bed.clock.now()).toISOString();
      expect(confirmed).toMatchObject({ kind: 'answered' });
      const waiting = await bed.record(held.execution_id);
      // Still pending through both steps; the customer's link is closed, the message says who is next.
      expect(waiting).toMatchObject({
        status: 'pending_approval',
        customer_confirmed_at: at,
        approval_url: null,
        message: statusMessages.waiting_for_staff,
        expires_at: held.expires_at,
      });
      expect(bed.signals).toEqual([]);

      const approved = await decide(bed.deps, financeApprover, { ...answerOf(held, 'confirm'), outcome: 'approve' });
      expect(approved).toMatchObject({ kind: 'decided', execution: { status: 'approved' } });
      expect(bed.signals).toEqual([{ token: 'token', outcome: 'approved' }]);
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'succeeded' });
      expect(bed.sentFor(held.execution_id)).toHaveLength(1);
      expect((await bed.record(held.execution_id)).history.map((change) => change.status)).toEqual([
        'pending_approval',
        'approved',
        'succeeded',
      ]);
    },
  );

  it(
    verifies(
      'customer.then-staff',
      'a call only the customer must confirm is approved by the confirmation and runs once',
    ),
    async () => {
      const bed = await bedWith();
      const held = await hold(bed, '20');
      expect(held.decision?.step).toEqual(humanStep({ staff: null, customer: true }));
      expect(await customerAnswer(bed.deps, dana, answerOf(held, 'confirm'))).toMatchObject({
        kind: 'answered',
        execution: { status: 'approved', decided_by: dana.id, approval_url: null },
      });
      expect(bed.signals).toEqual([{ token: 'token', outcome: 'approved' }]);
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'succeeded' });
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'succeeded' });
      expect(bed.sentFor(held.execution_id)).toHaveLength(1);
    },
  );

  it(verifies('customer.then-staff', 'declining ends the call rejected as declined, and nothing runs'), async () => {
    const bed = await bedWith();
    const held = await hold(bed, '1500');
    expect(await customerAnswer(bed.deps, dana, answerOf(held, 'decline'))).toMatchObject({ kind: 'answered' });
    expect(await bed.record(held.execution_id)).toMatchObject({
      status: 'rejected',
      code: 'customer_declined',
      message: 'The customer declined the call; nothing ran.',
      decided_by: dana.id,
      approval_url: null,
    });
    expect(bed.signals).toEqual([{ token: 'token', outcome: 'closed' }]);
    expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'rejected' });
    expect(bed.sentFor(held.execution_id)).toEqual([]);
  });

  it(
    verifies(
      'customer.fresh-sign-in',
      'another customer, a wrong hash, a second answer and an expired call change nothing',
    ),
    async () => {
      const bed = await bedWith();
      const held = await hold(bed, '1500');
      // Another customer's call is not theirs to see, and looks like no call at all.
      expect(await viewCustomerCall(bed.deps, otherCustomer, held.execution_id)).toEqual({
        kind: 'refused',
        reason: 'not_found',
      });
      expect(await customerAnswer(bed.deps, otherCustomer, answerOf(held, 'confirm'))).toEqual({
        kind: 'refused',
        reason: 'not_found',
      });
      expect(
        await customerAnswer(bed.deps, dana, { ...answerOf(held, 'confirm'), arguments_hash: 'f'.repeat(64) }),
      ).toMatchObject({ kind: 'refused', reason: 'arguments_changed' });
      expect(await bed.record(held.execution_id)).toEqual(held);

      // Two confirmations at once (a double click): one is recorded, the other told it is done.
      const [first, second] = await Promise.all([
        customerAnswer(bed.deps, dana, answerOf(held, 'confirm')),
        customerAnswer(bed.deps, dana, answerOf(held, 'decline')),
      ]);
      expect([first.kind, second.kind].sort()).toEqual(['answered', 'refused']);
      const after = await bed.record(held.execution_id);
      expect(await customerAnswer(bed.deps, dana, answerOf(held, 'decline'))).toMatchObject({ kind: 'refused' });
      expect(await bed.record(held.execution_id)).toEqual(after);

      // Past the approval time the customer can no longer answer.
      const late = await hold(bed, '1200');
      bed.clock.advance(approvalMs);
      expect(await customerAnswer(bed.deps, dana, answerOf(late, 'confirm'))).toMatchObject({
        kind: 'refused',
        reason: 'expired',
      });
      expect((await bed.record(late.execution_id)).customer_confirmed_at).toBeNull();
      expect(await viewCustomerCall(bed.deps, dana, late.execution_id)).toMatchObject({
        kind: 'shown',
        refusal: 'expired',
      });
    },
  );

  it(
    verifies('approvals.policy-rechecked', 'an approved call whose customer step was never recorded is not sent'),
    async () => {
      const bed = await bedWith();
      const held = await hold(bed, '1500');
      // A record approved without the customer's confirmation (as an older gateway could leave it).
      await bed.store.transition(held, {
        from: 'pending_approval',
        to: 'approved',
        at: new Date(bed.clock.now()).toISOString(),
        patch: { decided_by: financeApprover.id },
      });
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'denied', code: 'policy_denied' });
      expect(bed.sentFor(held.execution_id)).toEqual([]);
    },
  );
});
