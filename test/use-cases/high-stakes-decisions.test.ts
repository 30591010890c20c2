// High-stakes approvals as use-cases: who may decide a call whose policy asks a quorum, an
// escalation, a recent sign-in and a strong one, and what each refusal leaves (nothing changed).
import { describe, expect, it } from 'vitest';
import type { Approver } from '../../shared/approvals/approver.js';
import { decidableBy, decide, viewHeldCall } from '../../shared/use-cases/approver-decisions.js';
import { executeApproved, registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { verifiedReceipt } from '../support/receipts.js';
import { verifies } from '../support/requirements.js';
import {
  approvalOf as approve,
  benchGatewayUrl,
  benchSnapshot,
  financeApprover,
  highStakesPolicy,
  holdLargeOrder,
  operationsApprover,
  procurementAgent,
  secondFinanceApprover,
  testReceiptSigner,
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
    verifies('quorum.escalation-group-decides', 'the escalation group never sees a call decided before it escalated'),
    async () => {
      const bed = await highStakesBed();
      const held = await holdLargeOrder(bed);
      const finance = signedIn(financeApprover, bed.clock.now());
      expect(await decide(bed.deps, finance, { ...approve(held), outcome: 'reject' })).toMatchObject({
        kind: 'decided',
      });
      bed.clock.advance(escalationMs);
      const late = signedIn(operationsApprover, bed.clock.now());
      expect(await viewHeldCall(bed.deps, late, held.execution_id)).toEqual({
        kind: 'refused',
        reason: 'not_an_approver',
      });
      // The policy's own group still reads it.
      expect(await viewHeldCall(bed.deps, finance, held.execution_id)).toMatchObject({ kind: 'shown' });
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
        // The inbox lists it all the same: signing in again lets them decide it.
        expect((await decidableBy(bed.deps, approver)).map((call) => call.execution_id)).toEqual([held.execution_id]);
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
      expect((await decidableBy(bed.deps, approver)).map((call) => call.execution_id)).toEqual([held.execution_id]);
    }
    expect(await bed.record(held.execution_id)).toEqual(held);
  });
});

describe('a quorum of approvers', () => {
  it(
    verifies(
      'quorum.approvals-recorded',
      'the first approval is recorded and the call waits; the second approves it and only then reaches the run',
    ),
    async () => {
      const bed = await highStakesBed();
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'token-q' });
      const farah = signedIn(financeApprover, bed.clock.now() - 1_000);
      bed.clock.advance(60_000);
      const first = new Date(bed.clock.now()).toISOString();

      const partial = await decide(bed.deps, farah, approve(held));
      expect(partial).toMatchObject({ kind: 'approval_recorded', execution: { status: 'pending_approval' } });
      const waiting = await bed.record(held.execution_id);
      expect(waiting.approvals).toEqual([
        {
          by: 'farah',
          at: first,
          group: 'finance',
          signed_in_at: new Date(farah.signedInAt ?? 0).toISOString(),
          acr: 'phr',
        },
      ]);
      expect(waiting).toMatchObject({ status: 'pending_approval', decided_by: null, history: held.history });
      expect(bed.signals).toEqual([]);
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'pending_approval' });
      expect(bed.sent).toEqual([]);
      // The same person again is refused; the page no longer offers them the decision.
      expect(await decide(bed.deps, farah, approve(held))).toMatchObject({
        kind: 'refused',
        reason: 'already_approved',
      });
      expect(await decide(bed.deps, farah, { ...approve(held), outcome: 'reject' })).toMatchObject({
        reason: 'already_approved',
      });
      expect(await decidableBy(bed.deps, farah)).toEqual([]);

      // After the escalation time, operations completes the quorum, as its own group.
      bed.clock.advance(escalationMs);
      const oskar = signedIn(operationsApprover, bed.clock.now(), 'phrh');
      const second = new Date(bed.clock.now()).toISOString();
      expect(await decide(bed.deps, oskar, approve(held))).toMatchObject({
        kind: 'decided',
        execution: { status: 'approved' },
      });
      const approved = await bed.record(held.execution_id);
      expect(approved).toMatchObject({ status: 'approved', decided_by: 'oskar', decided_at: second });
      expect(approved.approvals.map(({ by, group, acr }) => ({ by, group, acr }))).toEqual([
        { by: 'farah', group: 'finance', acr: 'phr' },
        { by: 'oskar', group: 'operations', acr: 'phrh' },
      ]);
      expect(approved.history.map((entry) => entry.status)).toEqual(['pending_approval', 'approved']);
      expect(bed.signals).toEqual([{ token: 'token-q', outcome: 'approved' }]);
      await executeApproved(bed.deps, held);
      expect(bed.sentFor(held.execution_id)).toHaveLength(1);
    },
  );

  it(verifies('quorum.rejection-ends', 'one rejection after an approval ends the call rejected at once'), async () => {
    const bed = await highStakesBed();
    const held = await holdLargeOrder(bed);
    await registerApproval(bed.deps, { ...held, task_token: 'token-r' });
    const now = bed.clock.now();
    await decide(bed.deps, signedIn(financeApprover, now), approve(held));

    const rejected = await decide(bed.deps, signedIn(secondFinanceApprover, now), {
      ...approve(held),
      outcome: 'reject',
      note: 'Not this quarter',
    });
    expect(rejected).toMatchObject({ kind: 'decided', execution: { status: 'rejected', decided_by: 'fiona' } });
    expect(bed.signals).toEqual([{ token: 'token-r', outcome: 'closed' }]);
    await executeApproved(bed.deps, held);
    expect(bed.sent).toEqual([]);
  });

  it(
    verifies(
      'quorum.approval-write',
      'approvers at once: each approval counts once, the losers read again, one completes the quorum',
    ),
    async () => {
      const bed = await highStakesBed();
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'token-c' });
      const now = bed.clock.now();
      const farah = signedIn(financeApprover, now);
      const fiona = signedIn(secondFinanceApprover, now);

      const results = await Promise.all([
        decide(bed.deps, farah, approve(held)),
        decide(bed.deps, fiona, approve(held)),
        decide(bed.deps, farah, approve(held)),
      ]);

      expect(results.map((result) => result.kind).sort()).toEqual(['approval_recorded', 'decided', 'refused']);
      expect(results.find((result) => result.kind === 'refused')).toMatchObject({ reason: 'already_approved' });
      const record = await bed.record(held.execution_id);
      expect(record.status).toBe('approved');
      expect(record.approvals.map((approval) => approval.by).sort()).toEqual(['farah', 'fiona']);
      expect(bed.signals).toEqual([{ token: 'token-c', outcome: 'approved' }]);
    },
  );
});

/** The high-stakes policy asking two finance approvers and nothing more. */
const quorumPolicy = highStakesPolicy.replace('\n@escalate("30m, operations")\n@reauth("5m")\n@acr("phr, phrh")', '');

describe('an approved call, checked again before it runs', () => {
  it(
    verifies('quorum.policy-rechecked', 'one approval does not stand for the two a changed policy asks now'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      expect(await decide(bed.deps, financeApprover, approve(held))).toMatchObject({ kind: 'decided' });
      // One approver decides as before, in one write, and is kept as the call's one approval.
      const approved = await bed.record(held.execution_id);
      expect(approved.approvals).toEqual([
        { by: financeApprover.id, at: approved.decided_at, group: 'finance', signed_in_at: null, acr: null },
      ]);
      expect(approved.history.map((entry) => entry.status)).toEqual(['pending_approval', 'approved']);

      bed.use(await benchSnapshot({ policy: quorumPolicy }));
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'denied', code: 'policy_denied' });
      expect(bed.sent).toEqual([]);
    },
  );

  it(
    verifies(
      ['quorum.policy-rechecked', 'quorum.receipt-approvals'],
      'a quorum met runs, its receipt naming every approver in order',
    ),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ policy: quorumPolicy }) });
      const held = await holdLargeOrder(bed);
      const firstAt = new Date(bed.clock.now()).toISOString();
      await decide(bed.deps, financeApprover, approve(held));
      bed.clock.advance(1_000);
      const secondAt = new Date(bed.clock.now()).toISOString();
      expect(await decide(bed.deps, secondFinanceApprover, approve(held))).toMatchObject({ kind: 'decided' });

      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'succeeded' });
      const claims = await verifiedReceipt(
        bed.sent[0]?.headers['approval-receipt'],
        testReceiptSigner,
        benchGatewayUrl,
      );
      expect(claims.approvals).toEqual([
        { role: 'staff', by: financeApprover.id, at: firstAt },
        { role: 'staff', by: secondFinanceApprover.id, at: secondAt },
      ]);
    },
  );
});

describe('notices of a quorum', () => {
  it(
    verifies('quorum.notices-count', 'the group hears how many approvals are needed, and again after each short of it'),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ policy: quorumPolicy }) });
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'token-n' });
      expect(bed.notices).toMatchObject([{ staff_group: 'finance', approvals_needed: 2, escalated_to: null }]);

      await decide(bed.deps, financeApprover, approve(held));
      expect(bed.notices).toHaveLength(2);
      expect(bed.notices[1]).toMatchObject({ execution_id: held.execution_id, approvals_needed: 1 });

      // The approval that completes the quorum tells no one to approve.
      await decide(bed.deps, secondFinanceApprover, approve(held));
      expect(bed.notices).toHaveLength(2);
    },
  );
});
