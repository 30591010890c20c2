// The lifecycle's rules for one write, checked on the plans themselves (no store): which moves are
// legal, what a write sets, when a final call may be deleted, the index of open calls, the agents'
// places, and the conditions a record must meet. The store contract (test/contracts) checks that
// each adapter persists plans; the lifecycle property test checks the rules under interleavings.
import { describe, expect, it } from 'vitest';
import {
  allowedTransitions,
  type Execution,
  IllegalTransitionError,
  openStatuses,
  type Settlement,
  settlementTransitions,
  terminalStatuses,
} from '../../../shared/executions/execution.js';
import {
  applyPlan,
  legalPlan,
  meetsConditions,
  openEntryOf,
  planAnnotation,
  planClaim,
  planTransition,
  type WritePlan,
} from '../../../shared/executions/write-plan.js';
import { ExecutionStatus } from '../../../shared/result.js';
import { anExecution } from '../../support/executions.js';
import { verifies } from '../../support/requirements.js';

const base = Date.parse('2026-11-29T12:00:00.000Z');
const at = (offsetMs: number): string => new Date(base + offsetMs).toISOString();
const seconds = (offsetMs: number): number => Math.floor((base + offsetMs) / 1_000);

/** Every move the lifecycle allows, as (from, to) pairs. */
const legalMoves = ExecutionStatus.options.flatMap((from) => allowedTransitions[from].map((to) => [from, to] as const));

/** The record after a legal move from its status to `to`; fails the test on a conflict. */
const moved = (record: Execution, to: ExecutionStatus, offsetMs: number): Execution => {
  const next = applyPlan(record, legalPlan({ from: record.status, to, at: at(offsetMs) }));
  if (next === null) throw new Error(`expected ${record.status} → ${to} to apply`);
  return next;
};

describe('the moves of the lifecycle', () => {
  it(
    verifies(
      ['store.conditional-transitions', 'store.lifecycle-plan'],
      'plans exactly the lifecycle’s moves and refuses every other pair, saying why',
    ),
    () => {
      const refused: string[] = [];
      for (const from of ExecutionStatus.options) {
        for (const to of ExecutionStatus.options) {
          const planned = planTransition({ from, to, at: at(0) });
          if (allowedTransitions[from].includes(to)) {
            expect(planned.legal, `${from} → ${to}`).toBe(true);
            continue;
          }
          // Out of unknown only a settlement moves (below).
          const reason =
            settlementTransitions[from] === undefined
              ? `An execution cannot move from ${from} to ${to}.`
              : 'An unknown outcome moves only by a settlement, to succeeded or failed.';
          expect(planned).toEqual({ legal: false, reason });
          expect(() => legalPlan({ from, to, at: at(0) })).toThrow(new IllegalTransitionError(reason));
          refused.push(`${from} → ${to}`);
        }
      }
      // 8 statuses, 7 moves: the other 57 pairs, staying put included, are refused.
      expect(legalMoves).toHaveLength(7);
      expect(refused).toHaveLength(57);
    },
  );

  it(
    verifies(
      ['store.conditional-transitions', 'store.lifecycle-plan'],
      'a move sets the status, its time and the patch’s set fields, and adds to the history',
    ),
    () => {
      const record = anExecution({ status: 'pending_approval', message: 'waiting', created_at: at(0) });
      const plan = legalPlan({
        from: 'pending_approval',
        to: 'approved',
        at: at(1_000),
        patch: { decided_by: 'farah', code: undefined },
      });
      expect(plan.sets).toEqual({ status: 'approved', updated_at: at(1_000), decided_by: 'farah' });
      expect(applyPlan(record, plan)).toEqual({
        ...record,
        status: 'approved',
        decided_by: 'farah',
        updated_at: at(1_000),
        history: [
          { status: 'pending_approval', at: at(0) },
          { status: 'approved', at: at(1_000) },
        ],
      });
    },
  );
});

describe('when a final call may be deleted', () => {
  const thirtyDays = 30 * 86_400;
  const paths: readonly (readonly ExecutionStatus[])[] = [
    ['pending_approval', 'rejected'],
    ['pending_approval', 'expired'],
    ['pending_approval', 'approved', 'succeeded'],
    ['pending_approval', 'approved', 'failed'],
    ['pending_approval', 'approved', 'unknown'],
    ['pending_approval', 'approved', 'denied'],
  ];

  it(
    verifies(
      ['ops.retention', 'store.lifecycle-plan'],
      'the write that makes a call final dates it, for every final status, from its own retention; waiting and running calls get none',
    ),
    () => {
      expect(new Set(paths.map((path) => path.at(-1)))).toEqual(terminalStatuses);
      for (const retention of [thirtyDays, null]) {
        for (const path of paths) {
          let record = anExecution({ created_at: at(0), retention_s: retention });
          for (const [index, to] of path.slice(1).entries()) {
            const offset = (index + 1) * 61_500;
            record = moved(record, to, offset);
            const expected = openStatuses.has(to) ? null : seconds(offset) + (retention ?? 400 * 86_400);
            expect(record.retain_until, `${path.join(' → ')} at ${to}`).toBe(expected);
          }
        }
      }
    },
  );

  it(verifies(['ops.retention', 'store.lifecycle-plan'], 'a claim and an annotation leave the date as it is'), () => {
    for (const plan of [
      planClaim({ at: at(0), deadline: at(1) }),
      planAnnotation('approved', { notified_at: at(0) }),
    ]) {
      expect(plan.retainFrom).toBeNull();
      expect(applyPlan(anExecution({ status: 'approved' }), plan)?.retain_until).toBeNull();
    }
  });
});

describe('the index of open calls', () => {
  it(
    verifies(
      ['store.open-calls', 'store.lifecycle-plan'],
      'a call waiting enters it by its id’s last hex digit and next deadline; a call that ended has no entry',
    ),
    () => {
      const id = (digit: string) => `0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d5${digit}`;
      const pending = anExecution({ execution_id: id('b'), updated_at: at(0), expires_at: at(60_000) });
      expect(openEntryOf(pending)).toEqual({ shard: 11, until: at(60_000) });
      const claimed = anExecution({
        execution_id: id('0'),
        status: 'approved',
        expires_at: at(60_000),
        deadline_at: at(5_000),
      });
      expect(openEntryOf(claimed)).toEqual({ shard: 0, until: at(5_000) });
      expect(openEntryOf(anExecution({ execution_id: id('f'), updated_at: at(7) }))).toEqual({
        shard: 15,
        until: at(7),
      });
      for (const status of terminalStatuses) expect(openEntryOf(anExecution({ status }))).toBeNull();
    },
  );

  it(
    verifies(
      ['store.open-calls', 'store.lifecycle-plan'],
      'a move between open statuses keeps the entry, a claim moves it to its deadline, an ending move leaves',
    ),
    () => {
      for (const [from, to] of legalMoves) {
        // An unknown outcome waits in the partition of unsettled outcomes instead.
        const ended = to === 'unknown' ? { kind: 'unsettled', since: at(0) } : { kind: 'leave' };
        expect(legalPlan({ from, to, at: at(0) }).openIndex, `${from} → ${to}`).toEqual(
          openStatuses.has(to) ? { kind: 'keep' } : ended,
        );
      }
      expect(planClaim({ at: at(0), deadline: at(30_000) }).openIndex).toEqual({ kind: 'due', until: at(30_000) });
      expect(planAnnotation('pending_approval', { task_token: 't' }).openIndex).toEqual({ kind: 'keep' });
    },
  );
});

describe('the agents’ places for held calls', () => {
  it(
    verifies(
      ['limits.pending-released-on-leave', 'store.lifecycle-plan'],
      'only a move out of pending_approval gives the place back',
    ),
    () => {
      for (const [from, to] of legalMoves) {
        expect(legalPlan({ from, to, at: at(0) }).releasesPendingPlace, `${from} → ${to}`).toBe(
          from === 'pending_approval',
        );
      }
      expect(planClaim({ at: at(0), deadline: at(1) }).releasesPendingPlace).toBe(false);
      expect(planAnnotation('pending_approval', { notified_at: at(0) }).releasesPendingPlace).toBe(false);
    },
  );
});

describe('what the record must still hold', () => {
  const decision = (now: string, hash = 'a'.repeat(64)): WritePlan =>
    legalPlan({
      from: 'pending_approval',
      to: 'approved',
      at: now,
      guard: { argumentsHash: hash, notExpiredAt: now },
    });

  it(
    verifies(
      ['store.guarded-writes', 'store.lifecycle-plan'],
      'a decision holds only in the expected status, with the held arguments hash, before the expiry',
    ),
    () => {
      const held = anExecution({ arguments_hash: 'a'.repeat(64), expires_at: at(60_000) });
      expect(meetsConditions(held, decision(at(59_999)).conditions)).toBe(true);
      expect(meetsConditions(held, decision(at(0), 'b'.repeat(64)).conditions)).toBe(false);
      // At the very instant of expiry the time has run out.
      expect(meetsConditions(held, decision(at(60_000)).conditions)).toBe(false);
      expect(meetsConditions({ ...held, status: 'approved' }, decision(at(0)).conditions)).toBe(false);
      // A record with no hash or no expiry to check does not meet a guard on it.
      expect(meetsConditions({ ...held, arguments_hash: null }, decision(at(0)).conditions)).toBe(false);
      expect(meetsConditions({ ...held, expires_at: null }, decision(at(0)).conditions)).toBe(false);
      expect(applyPlan(held, decision(at(60_000)))).toBeNull();
    },
  );

  it(
    verifies(
      ['store.guarded-writes', 'store.lifecycle-plan'],
      'a claim, a customer’s answer and a notice are given once: the field must be unset',
    ),
    () => {
      const approved = anExecution({ status: 'approved' });
      const claim = planClaim({ at: at(0), deadline: at(10_000) });
      const claimed = applyPlan(approved, claim);
      expect(claimed).toEqual({ ...approved, claimed_at: at(0), deadline_at: at(10_000), updated_at: at(0) });
      if (claimed === null) throw new Error('expected the claim to apply');
      expect(applyPlan(claimed, claim)).toBeNull();
      expect(applyPlan(anExecution({ status: 'pending_approval' }), claim)).toBeNull();

      const decline = legalPlan({
        from: 'pending_approval',
        to: 'rejected',
        at: at(1),
        guard: { customerUnanswered: true },
      });
      expect(applyPlan(anExecution({ customer_confirmed_at: null }), decline)?.status).toBe('rejected');
      expect(applyPlan(anExecution({ customer_confirmed_at: at(0) }), decline)).toBeNull();

      const notice = planAnnotation('pending_approval', { notified_at: at(1) }, 'notified_at');
      const record = anExecution({ task_token: 'set' });
      // Only the field named must be unset; the status, its history and its time stay as they were.
      expect(applyPlan(record, notice)).toEqual({ ...record, notified_at: at(1) });
      expect(applyPlan({ ...record, notified_at: at(0) }, notice)).toBeNull();
    },
  );
});

describe('settling an unknown outcome', () => {
  const settlement = (outcome: Settlement['outcome'], offsetMs: number): Settlement => ({
    outcome,
    by: 'alice',
    at: at(offsetMs),
    reason: 'checked the ERP',
    unknown_code: 'timeout',
  });

  it(
    verifies(
      ['settle.only-unknown-once', 'settle.record', 'store.lifecycle-plan'],
      'plans unknown → succeeded | failed only with a settlement: kept, final again, out of the unsettled partition',
    ),
    () => {
      const unknown = anExecution({ status: 'unknown', code: 'timeout', created_at: at(0), retention_s: 86_400 });
      const given = settlement('succeeded', 5_000);
      const plan = legalPlan({ from: 'unknown', to: 'succeeded', at: at(5_000), settlement: given });
      expect(plan).toMatchObject({
        conditions: { status: 'unknown' },
        sets: { status: 'succeeded', settlement: given, code: null },
        historyEntry: { status: 'succeeded', at: at(5_000) },
        retainFrom: seconds(5_000),
        openIndex: { kind: 'leave' },
        releasesPendingPlace: false,
      });
      expect(applyPlan(unknown, plan)).toMatchObject({ status: 'succeeded', retain_until: seconds(5_000) + 86_400 });
      // Once: a settled call is no longer unknown.
      expect(applyPlan({ ...unknown, status: 'succeeded' }, plan)).toBeNull();
      // A failure keeps the code it ended unknown with.
      const failed = legalPlan({
        from: 'unknown',
        to: 'failed',
        at: at(5_000),
        settlement: settlement('failed', 5_000),
      });
      expect(failed.sets).not.toHaveProperty('code');
    },
  );

  it(
    verifies('settle.only-unknown-once', 'refuses a settlement of another status, or one that disagrees with its move'),
    () => {
      for (const from of ExecutionStatus.options.filter((status) => status !== 'unknown')) {
        expect(planTransition({ from, to: 'succeeded', at: at(1), settlement: settlement('succeeded', 1) })).toEqual({
          legal: false,
          reason: `Only an unknown outcome is settled; an execution cannot be settled from ${from}.`,
        });
      }
      const disagreeing = [
        { to: 'failed', settlement: settlement('succeeded', 1) },
        { to: 'denied', settlement: settlement('succeeded', 1) },
        { to: 'succeeded', settlement: settlement('succeeded', 2) },
      ] as const;
      for (const move of disagreeing) {
        expect(planTransition({ from: 'unknown', at: at(1), ...move }).legal, JSON.stringify(move)).toBe(false);
      }
    },
  );
});
