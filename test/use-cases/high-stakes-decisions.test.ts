// High-stakes approvals as use-cases: who may decide a call whose policy asks a quorum, an
// escalation, a recent sign-in and a strong one, and what each refusal leaves (nothing changed).
import { describe, expect, it } from 'vitest';
import type { Approver } from '../../shared/approvals/approver.js';
import { decidableBy, decide, viewHeldCall } from '../../shared/use-cases/approver-decisions.js';
import { verifies } from '../support/requirements.js';
import {
  benchSnapshot,
  financeApprover,
  highStakesPolicy,
  holdLargeOrder,
  operationsApprover,
  procurementAgent,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const escalationMs = 30 * 60_000;
const reauthMs = 5 * 60_000;

const highStakesBed = async (): Promise<UseCaseBed> =>
  useCaseBed({ snapshot: await benchSnapshot({ policy: highStakesPolicy }) });

/** An approver as the console knows them after a phishing-resistant sign-in at `at`. */
const signedIn = (approver: Approver, at: number, acr: string | null = 'phr'): Approver => ({
  ...approver,
  signedInAt: at,
  acr,
});

const approve = (execution: { execution_id: string; arguments_hash: string | null }) => ({
  execution_id: execution.execution_id,
  outcome: 'approve' as const,
  arguments_hash: execution.arguments_hash ?? '',
});

describe('who may decide a high-stakes call', () => {
  it(
    verifies('quorum.escalation-group-decides', 'the escalation group may decide only once the escalation time passed'),
    async () => {
      const bed = await highStakesBed();
      const held = await holdLargeOrder(bed);
      expect(held.decision?.step).toMatchObject({
        staff: 'finance',
        quorum: 2,
        escalation: { after_ms: escalationMs, group: 'operations' },
      });
      bed.clock.advance(escalationMs - 1);
      const early = signedIn(operationsApprover, bed.clock.now());
      expect(await decide(bed.deps, early, approve(held))).toMatchObject({
        kind: 'refused',
        reason: 'not_an_approver',
      });
      expect(await viewHeldCall(bed.deps, early, held.execution_id)).toEqual({
        kind: 'refused',
        reason: 'not_an_approver',
      });
      expect(await decidableBy(bed.deps, early)).toEqual([]);
      expect(await bed.record(held.execution_id)).toEqual(held);

      bed.clock.advance(1);
      const due = signedIn(operationsApprover, bed.clock.now());
      expect((await decidableBy(bed.deps, due)).map((call) => call.execution_id)).toEqual([held.execution_id]);
      expect(await viewHeldCall(bed.deps, due, held.execution_id)).toMatchObject({ kind: 'shown', refusal: null });
      // The requester never decides, in the escalation group either.
      const requester = signedIn({ ...operationsApprover, id: procurementAgent.id }, bed.clock.now());
      expect(await decide(bed.deps, requester, approve(held))).toMatchObject({ kind: 'refused', reason: 'own_call' });
    },
  );

  it(
    verifies('quorum.fresh-sign-in-rule', 'a sign-in older than @reauth allows, or of unknown time, changes nothing'),
    async () => {
      const bed = await highStakesBed();
      const signedInAt = bed.clock.now();
      const held = await holdLargeOrder(bed);
      bed.clock.advance(reauthMs + 1);

      for (const approver of [signedIn(financeApprover, signedInAt), { ...financeApprover, acr: 'phr' }]) {
        expect(await decide(bed.deps, approver, approve(held))).toMatchObject({
          kind: 'refused',
          reason: 'sign_in_again',
        });
        expect(await decide(bed.deps, approver, { ...approve(held), outcome: 'reject' })).toMatchObject({
          kind: 'refused',
          reason: 'sign_in_again',
        });
        // The page still shows the call, and why this sign-in cannot decide it.
        expect(await viewHeldCall(bed.deps, approver, held.execution_id)).toMatchObject({
          kind: 'shown',
          refusal: 'sign_in_again',
        });
        expect(await decidableBy(bed.deps, approver)).toEqual([]);
      }
      expect(await bed.record(held.execution_id)).toEqual(held);
    },
  );

  it(verifies('quorum.acr-rule', 'a sign-in without a named acr changes nothing'), async () => {
    const bed = await highStakesBed();
    const held = await holdLargeOrder(bed);
    for (const acr of ['pwd', null]) {
      const approver = signedIn(financeApprover, bed.clock.now(), acr);
      expect(await decide(bed.deps, approver, approve(held))).toMatchObject({ kind: 'refused', reason: 'acr_not_met' });
      expect(await viewHeldCall(bed.deps, approver, held.execution_id)).toMatchObject({ refusal: 'acr_not_met' });
    }
    expect(await bed.record(held.execution_id)).toEqual(held);
  });
});
