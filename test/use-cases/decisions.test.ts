// An approver's decision as a use-case: who may decide, what a decision records (a conditional
// write guarded by the arguments' hash and the approval time), and how it reaches the approval run.
import { describe, expect, it } from 'vitest';
import { decidableBy, decide, viewHeldCall } from '../../shared/use-cases/approver-decisions.js';
import { executeApproved, registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { humanStep } from '../support/executions.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  approvalOf as approve,
  benchSnapshot,
  customerPolicy,
  financeApprover,
  holdLargeOrder,
  operationsApprover,
  procurementAgent,
  requestingApprover,
  secondFinanceApprover,
  useCaseBed,
} from '../support/use-case-bed.js';

describe('deciding a held call', () => {
  it(
    verifies('approvals.decision-pushed', 'an approval is recorded, then pushed at once to the waiting run'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'token-1' });
      bed.clock.advance(1_000);

      const result = await decide(bed.deps, financeApprover, approve(held));

      const now = new Date(bed.clock.now()).toISOString();
      expect(result).toMatchObject({ kind: 'decided', execution: { status: 'approved' } });
      expect(await bed.record(held.execution_id)).toMatchObject({
        status: 'approved',
        decided_by: financeApprover.id,
        decided_at: now,
        decision_note: null,
        code: null,
        claimed_at: null,
        history: [{ status: 'pending_approval' }, { status: 'approved', at: now }],
      });
      expect(bed.signals).toEqual([{ token: 'token-1', outcome: 'approved' }]);
      // Deciding sends nothing: the approval run's execute step does.
      expect(bed.sent).toEqual([]);
    },
  );

  it(
    verifies('approvals.decision-pushed', 'a decision made before the run registered is handed over when it does'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      expect((await decide(bed.deps, financeApprover, approve(held))).kind).toBe('decided');
      expect(bed.signals).toEqual([]);

      expect(await registerApproval(bed.deps, { ...held, task_token: 'late-token' })).toEqual({ status: 'approved' });
      expect(bed.signals).toEqual([{ token: 'late-token', outcome: 'approved' }]);
      // No notice for a call already decided.
      expect(bed.notices).toEqual([]);
    },
  );

  it(
    verifies(
      'approvals.rejection-note',
      'a rejection ends the call with the cleaned note, sends nothing and frees the place',
    ),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'token-r' });

      const result = await decide(bed.deps, financeApprover, {
        ...approve(held),
        outcome: 'reject',
        note: '  Budget\n frozen\u200b ',
      });

      expect(result).toMatchObject({ kind: 'decided', execution: { status: 'rejected', code: 'rejected' } });
      const record = await bed.record(held.execution_id);
      expect(record).toMatchObject({ status: 'rejected', code: 'rejected', decision_note: 'Budget frozen' });
      expect(record.message).toContain('Budget frozen');
      expect(bed.signals).toEqual([{ token: 'token-r', outcome: 'closed' }]);
      // The run, told the call is closed, ends; an execute step reached anyway sends nothing.
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'rejected' });
      expect(bed.sent).toEqual([]);
      expect(await bed.store.reservePending(procurementAgent.id, 'probe', 0)).toEqual({ kind: 'reserved' });
    },
  );

  it(
    verifies(
      'approvals.one-outcome',
      'two approvers at once, and a double click: one decision, the others told it was decided',
    ),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);

      const results = await Promise.all([
        decide(bed.deps, financeApprover, approve(held)),
        decide(bed.deps, secondFinanceApprover, { ...approve(held), outcome: 'reject' }),
        decide(bed.deps, financeApprover, approve(held)),
      ]);

      const decided = results.filter((result) => result.kind === 'decided');
      expect(decided).toHaveLength(1);
      const record = await bed.record(held.execution_id);
      expect(record.history).toHaveLength(2);
      for (const result of results) {
        if (result.kind === 'refused') {
          expect(result.reason).toBe('already_decided');
          expect(result.execution?.status).toBe(record.status);
        }
      }
      await Promise.all([executeApproved(bed.deps, held), executeApproved(bed.deps, held)]);
      expect(bed.sentFor(held.execution_id)).toHaveLength(record.status === 'approved' ? 1 : 0);
    },
  );

  it(verifies('approvals.expiry', 'a decision after the approval time is refused and changes nothing'), async () => {
    const bed = await useCaseBed();
    const held = await holdLargeOrder(bed);
    bed.clock.advance(approvalMs);

    expect(await decide(bed.deps, financeApprover, approve(held))).toMatchObject({
      kind: 'refused',
      reason: 'expired',
    });
    expect(await bed.record(held.execution_id)).toEqual(held);
  });

  it(
    verifies('console.tampered-hash', 'a decision carrying another arguments hash is refused and changes nothing'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      const other = await holdLargeOrder(bed, '9999');

      expect(
        await decide(bed.deps, financeApprover, { ...approve(held), arguments_hash: other.arguments_hash ?? '' }),
      ).toMatchObject({ kind: 'refused', reason: 'arguments_changed' });
      expect(await bed.record(held.execution_id)).toEqual(held);
    },
  );

  it(
    verifies(
      'console.approver-group',
      'the requester never decides their own call, nor anyone outside the named group',
    ),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);

      expect(await decide(bed.deps, requestingApprover, approve(held))).toMatchObject({
        kind: 'refused',
        reason: 'own_call',
      });
      expect(await decide(bed.deps, operationsApprover, approve(held))).toMatchObject({
        kind: 'refused',
        reason: 'not_an_approver',
      });
      expect(
        await decide(bed.deps, financeApprover, { ...approve(held), execution_id: bed.deps.ids.next() }),
      ).toMatchObject({ kind: 'refused', reason: 'not_found' });
      expect(await bed.record(held.execution_id)).toEqual(held);

      // The inbox and the call page follow the same rule.
      expect((await decidableBy(bed.deps, financeApprover)).map((call) => call.execution_id)).toEqual([
        held.execution_id,
      ]);
      expect(await decidableBy(bed.deps, operationsApprover)).toEqual([]);
      expect(await decidableBy(bed.deps, requestingApprover)).toEqual([]);
      expect(await viewHeldCall(bed.deps, operationsApprover, held.execution_id)).toEqual({
        kind: 'refused',
        reason: 'not_an_approver',
      });
      expect(await viewHeldCall(bed.deps, requestingApprover, held.execution_id)).toMatchObject({
        kind: 'shown',
        refusal: 'own_call',
      });
    },
  );

  it(
    verifies(
      'console.inbox',
      'the inbox lists the calls this approver may decide, soonest expiry first, and no others',
    ),
    async () => {
      const bed = await useCaseBed();
      const later = await holdLargeOrder(bed, '3000');
      bed.clock.advance(-60_000);
      const sooner = await holdLargeOrder(bed, '2000');
      bed.clock.advance(120_000);
      const decided = await holdLargeOrder(bed, '4000');
      await decide(bed.deps, financeApprover, { ...approve(decided), outcome: 'reject' });
      // The requester's own call is shown to no one as theirs to decide.
      const own = await holdLargeOrder(bed, '5000', { ...procurementAgent, id: financeApprover.id });

      expect((await decidableBy(bed.deps, financeApprover)).map((call) => call.execution_id)).toEqual([
        sooner.execution_id,
        later.execution_id,
      ]);
      expect((await decidableBy(bed.deps, secondFinanceApprover)).map((call) => call.execution_id)).toEqual([
        sooner.execution_id,
        later.execution_id,
        own.execution_id,
      ]);
      expect(await decidableBy(bed.deps, financeApprover, 1)).toHaveLength(1);
    },
  );

  it(
    verifies('approvals.customer-step-kept', 'a call that also needs the customer is never approved by staff alone'),
    async () => {
      const bed = await useCaseBed({
        snapshot: await benchSnapshot({
          policy: customerPolicy,
        }),
      });
      // A permit asking a customer to confirm counts only for an agent acting for one.
      const held = await holdLargeOrder(bed, '1500', { ...procurementAgent, customerId: 'customer-1042' });
      expect(held.decision?.step).toEqual(humanStep({ staff: 'finance', customer: true }));

      expect(await decide(bed.deps, financeApprover, approve(held))).toMatchObject({
        kind: 'refused',
        reason: 'customer_confirms',
      });
      expect((await bed.record(held.execution_id)).status).toBe('pending_approval');
      expect(await decide(bed.deps, financeApprover, { ...approve(held), outcome: 'reject' })).toMatchObject({
        kind: 'decided',
        execution: { status: 'rejected' },
      });
    },
  );
});
