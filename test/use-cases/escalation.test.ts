// When nobody decides: a held call whose policy names @escalate is escalated once, at its time, and
// its escalation group told once, whichever pass (the reconciler, the local upkeep, a local timer)
// gets there first; a decision first means no escalation, and a failed notice loses nothing.
import { describe, expect, it } from 'vitest';
import { EmfMetrics } from '../../shared/adapters/emf-metrics.js';
import type { Execution } from '../../shared/executions/execution.js';
import { measuredStore } from '../../shared/executions/measured-store.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { escalateIfDue, passOverHeldCalls } from '../../shared/use-cases/escalation.js';
import { expireApproval } from '../../shared/use-cases/held-call-steps.js';
import { parseEmfLines, valuesOf } from '../support/emf.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  benchSnapshot,
  financeApprover,
  holdLargeOrder,
  operationsApprover,
  operationsPolicy,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const escalationMs = 30 * 60_000;

/** The bench's policy with large orders decided by finance, escalated to operations after 30 minutes. */
const escalatingPolicy = operationsPolicy.replace(
  '@approvers("operations")',
  '@approvers("finance")\n@escalate("30m, operations")',
);

const escalatingBed = async (): Promise<UseCaseBed> =>
  useCaseBed({ snapshot: await benchSnapshot({ policy: escalatingPolicy }) });

const at = (bed: UseCaseBed): string => new Date(bed.clock.now()).toISOString();

describe('the escalation pass', () => {
  it(
    verifies(
      'escalation.once',
      'escalates a call nobody decided once, however many passes race, and tells the group once',
    ),
    async () => {
      const bed = await escalatingBed();
      const held = await holdLargeOrder(bed);
      expect(held.decision?.step?.escalation).toEqual({ after_ms: escalationMs, group: 'operations' });
      bed.clock.advance(escalationMs);
      const escalatedAt = at(bed);

      const [first, second, third] = await Promise.all([
        passOverHeldCalls(bed.deps),
        passOverHeldCalls(bed.deps),
        escalateIfDue(bed.deps, held),
      ]);
      expect((first?.escalated ?? 0) + (second?.escalated ?? 0) + (third ? 1 : 0)).toBe(1);
      expect(bed.notices).toEqual([
        expect.objectContaining({
          execution_id: held.execution_id,
          staff_group: 'operations',
          escalated_to: 'operations',
          approvals_needed: 1,
          expires_at: held.expires_at,
        }),
      ]);
      expect(await bed.record(held.execution_id)).toMatchObject({
        status: 'pending_approval',
        escalated_at: escalatedAt,
        expires_at: held.expires_at,
      });

      // Later passes find it escalated: nothing is recorded or told again.
      bed.clock.advance(60_000);
      expect((await passOverHeldCalls(bed.deps)).escalated).toBe(0);
      expect(bed.notices).toHaveLength(1);
      expect((await bed.record(held.execution_id)).escalated_at).toBe(escalatedAt);
    },
  );

  it(verifies('escalation.once', 'does not escalate before its time, and names the instant it will'), async () => {
    const bed = await escalatingBed();
    const held = await holdLargeOrder(bed);
    bed.clock.advance(escalationMs - 1);
    const upcoming: [string, number][] = [];
    const pass = await passOverHeldCalls(bed.deps, (execution, when) => upcoming.push([execution.execution_id, when]));
    expect(pass.escalated).toBe(0);
    expect(upcoming).toEqual([[held.execution_id, Date.parse(held.created_at) + escalationMs]]);
    expect(bed.notices).toEqual([]);
    expect((await bed.record(held.execution_id)).escalated_at).toBeNull();
  });

  it(verifies('escalation.once', 'never escalates a call decided or expired before its time'), async () => {
    const bed = await escalatingBed();
    const approved = await holdLargeOrder(bed);
    const lapsed = await holdLargeOrder(bed, '2000');
    bed.clock.advance(60_000);
    const decided = await decide(bed.deps, financeApprover, {
      execution_id: approved.execution_id,
      outcome: 'approve',
      arguments_hash: approved.arguments_hash ?? '',
    });
    expect(decided.kind).toBe('decided');
    bed.clock.advance(approvalMs);
    await expireApproval(bed.deps, lapsed);

    expect((await passOverHeldCalls(bed.deps)).escalated).toBe(0);
    expect(await escalateIfDue(bed.deps, await bed.record(approved.execution_id))).toBe(false);
    expect(bed.notices).toEqual([]);
    for (const call of [approved, lapsed]) expect((await bed.record(call.execution_id)).escalated_at).toBeNull();
  });

  it(
    verifies(
      'escalation.notice-failure',
      'a notice that fails leaves the escalation recorded, once, and the pass going',
    ),
    async () => {
      const bed = await escalatingBed();
      const calls: Execution[] = [await holdLargeOrder(bed), await holdLargeOrder(bed, '2500')];
      bed.clock.advance(escalationMs);
      let tries = 0;
      const failing = {
        ...bed.deps,
        notifier: {
          heldCall: async () => {
            tries += 1;
            throw new Error('the webhook answered 500');
          },
        },
      };

      expect((await passOverHeldCalls(failing)).escalated).toBe(2);
      expect(tries).toBe(2);
      for (const call of calls) expect((await bed.record(call.execution_id)).escalated_at).toBe(at(bed));
      expect(bed.warnings).toContain('the escalation group could not be told; the call stays escalated');
      // Recorded, so not repeated: the group may decide it (the policy's rule) and sees it on its page.
      expect((await passOverHeldCalls(failing)).escalated).toBe(0);
      expect(tries).toBe(2);
    },
  );
});

describe('the approval load, measured', () => {
  it(
    verifies('load.metrics', 'each pass publishes the calls waiting per group; a decision is timed by its group'),
    async () => {
      const bed = await escalatingBed();
      const written: string[] = [];
      const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
      const deps = { ...bed.deps, store: measuredStore(bed.store, metrics), metrics };
      const first = await holdLargeOrder(bed);
      await holdLargeOrder(bed, '2000');

      await passOverHeldCalls(deps);
      bed.clock.advance(4 * 60_000);
      const decided = await decide(deps, financeApprover, {
        execution_id: first.execution_id,
        outcome: 'reject',
        arguments_hash: first.arguments_hash ?? '',
      });
      expect(decided.kind).toBe('decided');
      await passOverHeldCalls(deps);
      metrics.flush();

      const points = parseEmfLines(written);
      expect(valuesOf(points, 'PendingApprovals', { Group: 'finance' })).toEqual([2, 1]);
      expect(valuesOf(points, 'HeldToDecided', { Group: 'finance' })).toEqual([4 * 60_000]);
      // The figure as a whole stays, for the alarms and the overall graph.
      expect(valuesOf(points, 'HeldToDecided')).toEqual([4 * 60_000]);
    },
  );

  it(
    verifies('load.metrics', "a call the escalation group rejected is timed as that group, not the policy's"),
    async () => {
      const bed = await escalatingBed();
      const written: string[] = [];
      const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
      const deps = { ...bed.deps, store: measuredStore(bed.store, metrics), metrics };
      const held = await holdLargeOrder(bed);
      bed.clock.advance(30 * 60_000);
      const rejected = await decide(deps, operationsApprover, {
        execution_id: held.execution_id,
        outcome: 'reject',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(rejected).toMatchObject({ kind: 'decided', execution: { status: 'rejected', decided_as: 'operations' } });
      metrics.flush();
      const points = parseEmfLines(written);
      expect(valuesOf(points, 'HeldToDecided', { Group: 'operations' })).toEqual([30 * 60_000]);
      expect(valuesOf(points, 'HeldToDecided', { Group: 'finance' })).toEqual([]);
    },
  );
});
