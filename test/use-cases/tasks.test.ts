// An agent's calls as tasks, as use-cases: withdrawing a held call (a conditional write, the
// approval run told to end, nothing sent), refusing to withdraw one already decided, and reading or
// listing only the agent's own calls.
import { describe, expect, it } from 'vitest';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { findOwnCall, listOwnCalls, withdrawCall } from '../../shared/use-cases/tasks.js';
import { verifies } from '../support/requirements.js';
import { financeApprover, holdLargeOrder, procurementAgent, useCaseBed } from '../support/use-case-bed.js';

const otherAgent = { id: 'support-agent', groups: ['procurement'], customerId: null };

describe('withdrawing a held call (tasks/cancel)', () => {
  it(
    verifies('mcp.tasks-cancel', 'moves a pending call to rejected / withdrawn, tells the run to close, sends nothing'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'token-1' });
      bed.clock.advance(1_000);

      const result = await withdrawCall(bed.deps, procurementAgent, held.execution_id);

      const now = new Date(bed.clock.now()).toISOString();
      expect(result).toMatchObject({ kind: 'withdrawn', execution: { status: 'rejected', code: 'withdrawn' } });
      expect(await bed.record(held.execution_id)).toMatchObject({
        status: 'rejected',
        code: 'withdrawn',
        message: 'The call was withdrawn before anyone decided it; nothing ran.',
        decided_at: now,
        history: [{ status: 'pending_approval' }, { status: 'rejected', at: now }],
      });
      expect(bed.signals).toEqual([{ token: 'token-1', outcome: 'closed' }]);
      expect(bed.sent).toEqual([]);
      // An approver arriving afterwards finds it closed.
      const late = await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(late).toMatchObject({ kind: 'refused', reason: 'already_decided' });
      expect(bed.sent).toEqual([]);
    },
  );

  it(verifies('mcp.tasks-cancel', 'refuses to withdraw a call already approved, and changes nothing'), async () => {
    const bed = await useCaseBed();
    const held = await holdLargeOrder(bed);
    const approved = await decide(bed.deps, financeApprover, {
      execution_id: held.execution_id,
      outcome: 'approve',
      arguments_hash: held.arguments_hash ?? '',
    });
    expect(approved.kind).toBe('decided');

    const result = await withdrawCall(bed.deps, procurementAgent, held.execution_id);

    expect(result).toMatchObject({ kind: 'too_late', execution: { status: 'approved' } });
    expect((await bed.record(held.execution_id)).status).toBe('approved');
    expect(bed.signals).toEqual([]);
    // Withdrawing twice: the second finds it final.
    const again = await useCaseBed();
    const second = await holdLargeOrder(again);
    expect((await withdrawCall(again.deps, procurementAgent, second.execution_id)).kind).toBe('withdrawn');
    expect(await withdrawCall(again.deps, procurementAgent, second.execution_id)).toMatchObject({
      kind: 'too_late',
      execution: { status: 'rejected', code: 'withdrawn' },
    });
  });
});

describe('own calls only', () => {
  it(
    verifies('mcp.tasks-own-only', "answers another agent's id exactly like an unknown one, and leaves it alone"),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);

      expect(await withdrawCall(bed.deps, otherAgent, held.execution_id)).toEqual({ kind: 'not_found' });
      expect(await withdrawCall(bed.deps, otherAgent, '0190a5a0-0000-7000-8000-000000000000')).toEqual({
        kind: 'not_found',
      });
      expect(await withdrawCall(bed.deps, otherAgent, 'not-a-uuid')).toEqual({ kind: 'not_found' });
      expect(await findOwnCall(bed.deps, otherAgent, held.execution_id)).toBeUndefined();
      expect((await bed.record(held.execution_id)).status).toBe('pending_approval');
      expect(await findOwnCall(bed.deps, procurementAgent, held.execution_id.toUpperCase())).toMatchObject({
        execution_id: held.execution_id,
      });
    },
  );

  it(
    verifies(
      'mcp.tasks-own-only',
      "lists the agent's own calls only, newest first, refusing a cursor it did not give out",
    ),
    async () => {
      const bed = await useCaseBed();
      const mine = [];
      for (let index = 0; index < 3; index += 1) {
        mine.push(await holdLargeOrder(bed, `${1500 + index}`));
        bed.clock.advance(1_000);
      }
      await holdLargeOrder(bed, '2000', otherAgent);

      const first = await listOwnCalls(bed.deps, procurementAgent, undefined);
      if (first.kind !== 'page') throw new Error('expected a page');
      expect(first.page.items.map((item) => item.execution_id)).toEqual(
        mine.map((item) => item.execution_id).reverse(),
      );
      expect(first.page.items.every((item) => item.agent_id === procurementAgent.id)).toBe(true);
      expect(await listOwnCalls(bed.deps, procurementAgent, 'not a cursor')).toEqual({ kind: 'invalid_cursor' });
    },
  );
});
