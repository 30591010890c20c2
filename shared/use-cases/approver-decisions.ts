// What an approver does with a held call: see the calls they may decide, open one (only the group
// the policy named sees its arguments), and approve or reject it. Decisions are conditional writes
// guarded by the arguments' hash, the approval time and the approvals given so far; a call asking a
// quorum waits for its last approval, which alone is handed to the call's approval run.

import type { ApprovalRuns } from '../approvals/approval-runs.js';
import type { Approver } from '../approvals/approver.js';
import type { Notifier } from '../approvals/notifier.js';
import { approvalsNeeded, groupDecidingAt, signedInRecently, signInStrongEnough } from '../approvals/quorum.js';
import type { Clock } from '../clock.js';
import { rejectedBecause, statusMessages } from '../errors.js';
import type { Execution, StaffApproval } from '../executions/execution.js';
import type { ExecutionStore, TransitionResult } from '../executions/store.js';
import { isUuid } from '../ids.js';
import type { Log } from '../log.js';
import { maxQuorum } from '../policy/human-step.js';
import { noticeOf } from './held-call-steps.js';
import { decisionRecorded, openExecutions, settleOverdue } from './held-calls.js';
import type { CallStep } from './run-once.js';

export interface DecisionDeps {
  readonly store: ExecutionStore;
  readonly clock: Clock;
  readonly log: Log;
  readonly approvalRuns: ApprovalRuns;
  readonly probe?: (step: CallStep, executionId: string) => void;
  /**
   * Where the group hears again how many approvals a call still needs after one short of its
   * quorum, and the console link it carries; without them, only the log says so.
   */
  readonly notifier?: Notifier;
  readonly consoleUrl?: (executionId: string) => string;
}

/** How long a rejection's reason may be. */
export const maxNoteLength = 500;

export type DecisionRefusal =
  /** No such execution. */
  | 'not_found'
  /**
   * The approver is not in the group the policy names, nor in its escalation group once the call
   * waited that long (or the call waits for the customer only).
   */
  | 'not_an_approver'
  /** The approver made the call. */
  | 'own_call'
  /** The approver approved this call already: a quorum counts distinct people. */
  | 'already_approved'
  /** The policy asks a recent sign-in (@reauth) and this one is older, or its time is unknown. */
  | 'sign_in_again'
  /** The policy names the sign-in classes that may decide (@acr) and this sign-in's is not one of them. */
  | 'acr_not_met'
  /** The call was decided already; `execution` says how. */
  | 'already_decided'
  /** The approval time ran out. */
  | 'expired'
  /** The arguments hash sent with the decision is not the one of the arguments held. */
  | 'arguments_changed'
  /** The call also needs the customer's confirmation, and they have not given it yet. */
  | 'customer_confirms'
  /** The reason is too long or empty after clean-up. */
  | 'invalid_note';

export type DecisionResult =
  | { readonly kind: 'decided'; readonly execution: Execution }
  /** An approval short of the quorum: recorded, and the call still waits (`execution`: as it is now). */
  | { readonly kind: 'approval_recorded'; readonly execution: Execution }
  | { readonly kind: 'refused'; readonly reason: DecisionRefusal; readonly execution?: Execution };

export interface DecisionRequest {
  readonly execution_id: string;
  readonly outcome: 'approve' | 'reject';
  /** The hash of the arguments the approver was shown. */
  readonly arguments_hash: string;
  /** For a rejection: a short reason the agent will read. */
  readonly note?: string | null;
}

/** A reason as the agent will read it: one line, normalized, no control or invisible characters. */
export const cleanNote = (note: string | null | undefined): string | null => {
  if (note === null || note === undefined) return null;
  const cleaned = note
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned.length === 0 ? null : cleaned;
};

/**
 * The group this approver decides the call as at `now` (epoch ms): the policy's, or its escalation
 * group once due; null when neither is theirs.
 */
export const decidingGroup = (approver: Approver, execution: Execution, now: number): string | null => {
  const step = execution.decision?.step ?? null;
  return step === null ? null : groupDecidingAt(approver.groups, step, execution.created_at, now);
};

/** This approver's approval at `now`, as the record would keep it: who, when, as which group, on which sign-in. */
const approvalBy = (approver: Approver, group: string, now: number): StaffApproval => ({
  by: approver.id,
  at: new Date(now).toISOString(),
  group,
  signed_in_at:
    approver.signedInAt === undefined || approver.signedInAt === null
      ? null
      : new Date(approver.signedInAt).toISOString(),
  acr: approver.acr ?? null,
});

/** A judgement of who may decide: why not, or the approval they would give now. */
type Judged = { readonly refusal: DecisionRefusal } | { readonly refusal: null; readonly approval: StaffApproval };

const judge = (approver: Approver, execution: Execution, now: number): Judged => {
  const step = execution.decision?.step ?? null;
  const group = decidingGroup(approver, execution, now);
  if (step === null || group === null) return { refusal: 'not_an_approver' };
  if (approver.id === execution.agent_id) return { refusal: 'own_call' };
  if (execution.approvals.some((approval) => approval.by === approver.id)) return { refusal: 'already_approved' };
  const approval = approvalBy(approver, group, now);
  if (!signedInRecently(approval, step)) return { refusal: 'sign_in_again' };
  if (!signInStrongEnough(approval, step)) return { refusal: 'acr_not_met' };
  return { refusal: null, approval };
};

/**
 * Whether this approver may decide this call at `now` (epoch ms): the one rule the call page, the
 * decision and the inbox share. A member of the deciding group, not the requester, not someone who
 * approved it already, signed in as recently and as strongly as the policy asks.
 */
export const mayDecide = (approver: Approver, execution: Execution, now: number): DecisionRefusal | null =>
  judge(approver, execution, now).refusal;

/** One of the agent's other calls of the same tool, as the approver sees it beside the held one. */
export type RecentCall = Pick<Execution, 'execution_id' | 'created_at' | 'status' | 'code'>;

/** How many of the agent's recent calls are read, and how many of the same tool are shown. */
const recentCallsRead = 25;
export const recentCallsShown = 10;

export type HeldCallView =
  /**
   * The call, its overdue state settled, why this approver may not decide it (null: they may), and
   * the agent's recent calls of the same tool, newest first (a burst of refunds is worth seeing).
   */
  | {
      readonly kind: 'shown';
      readonly execution: Execution;
      readonly refusal: DecisionRefusal | null;
      readonly recent: readonly RecentCall[];
    }
  /** No such call, or not one this approver may see: the group the policy named sees its arguments. */
  | { readonly kind: 'refused'; readonly reason: 'not_found' | 'not_an_approver' };

/**
 * Whether a member of `group` sees the call: the policy's group always; the escalation group only a
 * call it was asked to decide (still waiting past its escalation time, escalated, or approved by
 * it), never one decided or expired before it escalated.
 */
const seenAs = (group: string | null, execution: Execution): boolean =>
  group !== null &&
  (group === execution.decision?.step?.staff ||
    execution.status === 'pending_approval' ||
    execution.escalated_at !== null ||
    execution.approvals.some((approval) => approval.group === group));

/**
 * One held call as an approver may see it. Only members of the group the policy named see the
 * arguments (the requester among them sees them, and may not decide).
 */
export const viewHeldCall = async (
  deps: Pick<DecisionDeps, 'store' | 'clock'>,
  approver: Approver,
  executionId: string,
): Promise<HeldCallView> => {
  const found = isUuid(executionId) ? await deps.store.get(executionId) : undefined;
  if (found === undefined) return { kind: 'refused', reason: 'not_found' };
  const execution = await settleOverdue(deps, found);
  const now = deps.clock.now();
  const refusal = mayDecide(approver, execution, now);
  if (refusal === 'not_an_approver' || !seenAs(decidingGroup(approver, execution, now), execution)) {
    return { kind: 'refused', reason: 'not_an_approver' };
  }
  const page = await deps.store.listByAgent(execution.agent_id, { limit: recentCallsRead });
  const recent = page.items
    .filter((other) => other.tool === execution.tool && other.execution_id !== execution.execution_id)
    .slice(0, recentCallsShown)
    .map(({ execution_id, created_at, status, code }) => ({ execution_id, created_at, status, code }));
  return { kind: 'shown', execution, refusal, recent };
};

/** Why a call that left pending cannot be decided: it expired, or someone decided it. */
const closedReason = (execution: Execution): DecisionRefusal =>
  execution.status === 'expired' ? 'expired' : 'already_decided';

/** Why this decision cannot be made on the record as read at `now` (epoch ms), or the approval it gives. */
const judgeDecision = (approver: Approver, execution: Execution, request: DecisionRequest, now: number): Judged => {
  const judged = judge(approver, execution, now);
  // Someone who may not decide learns nothing more of the call; anyone else learns it is closed.
  if (judged.refusal === 'not_an_approver' || judged.refusal === 'own_call') return judged;
  if (execution.status !== 'pending_approval') return { refusal: closedReason(execution) };
  if (judged.refusal !== null) return judged;
  if (execution.expires_at !== null && Date.parse(execution.expires_at) <= now) return { refusal: 'expired' };
  if (request.arguments_hash !== execution.arguments_hash) return { refusal: 'arguments_changed' };
  // The customer confirms first; staff approve after (a confirmation is never taken back).
  const step = execution.decision?.step;
  if (request.outcome === 'approve' && step?.customer === true && execution.customer_confirmed_at === null) {
    return { refusal: 'customer_confirms' };
  }
  const note = request.outcome === 'reject' ? cleanNote(request.note) : null;
  return note !== null && note.length > maxNoteLength ? { refusal: 'invalid_note' } : judged;
};

/**
 * The decision's one conditional write: an approval short of the quorum is added to the record
 * (still pending); the approval that completes it, or a rejection, ends the wait. Each holds only
 * on the record as read: still pending, same arguments, time left, and the same approvals.
 */
const writeDecision = (
  deps: DecisionDeps,
  approver: Approver,
  request: DecisionRequest,
  execution: Execution,
  approval: StaffApproval,
): Promise<TransitionResult> => {
  const at = approval.at;
  const guard = { argumentsHash: request.arguments_hash, notExpiredAt: at };
  // Who ended the wait, when, as a member of which group.
  const decider = { decided_by: approver.id, decided_at: at, decided_as: approval.group };
  if (request.outcome === 'reject') {
    const note = cleanNote(request.note);
    const patch = { ...decider, decision_note: note, ...rejectedBecause(note) };
    return deps.store.transition(execution, { from: 'pending_approval', to: 'rejected', at, guard, patch });
  }
  const approvals = [...execution.approvals, approval];
  if (approvalsNeeded(execution) > 1) {
    return deps.store.addApproval(execution, { at, approvals, argumentsHash: request.arguments_hash });
  }
  return deps.store.transition(execution, {
    from: 'pending_approval',
    to: 'approved',
    at,
    guard: { ...guard, approvalsGiven: execution.approvals.length },
    patch: {
      approvals,
      ...decider,
      decision_note: null,
      code: null,
      message: statusMessages.approved,
    },
  });
};

/**
 * How often a decision is tried again on the record as it is now after another write won: each
 * lost race is another approval added, or the call's end, so a quorum's size bounds the tries.
 */
const decisionTries = maxQuorum + 1;

/**
 * An approver approves or rejects a held call. An approval short of the policy's quorum is
 * recorded and the call waits for the next approver; the one that completes it approves the call
 * and hands it to the approval run; any eligible approver's rejection ends it at once. When another
 * decision landed first, the record is read again and the decision judged anew.
 */
export const decide = async (
  deps: DecisionDeps,
  approver: Approver,
  request: DecisionRequest,
): Promise<DecisionResult> => {
  let execution = await deps.store.get(request.execution_id);
  for (let tries = 0; execution !== undefined && tries < decisionTries; tries += 1) {
    const judged = judgeDecision(approver, execution, request, deps.clock.now());
    if (judged.refusal !== null) return { kind: 'refused', reason: judged.refusal, execution };
    const written = await writeDecision(deps, approver, request, execution, judged.approval);
    if (written.kind === 'conflict') {
      execution = written.current;
      continue;
    }
    return decisionWritten(deps, approver, written.execution);
  }
  return execution === undefined
    ? { kind: 'refused', reason: 'not_found' }
    : { kind: 'refused', reason: closedReason(execution), execution };
};

/** After the write: a partial approval waits for the next approver; a decision reaches the approval run. */
const decisionWritten = async (
  deps: DecisionDeps,
  approver: Approver,
  execution: Execution,
): Promise<DecisionResult> => {
  if (execution.status === 'pending_approval') {
    deps.log.info('held call approved, more approvals needed', {
      execution_id: execution.execution_id,
      approver: approver.id,
      approvals_needed: approvalsNeeded(execution),
    });
    const { notifier, consoleUrl } = deps;
    if (notifier !== undefined && consoleUrl !== undefined)
      await notifier.heldCall(noticeOf({ consoleUrl }, execution));
    return { kind: 'approval_recorded', execution };
  }
  await decisionRecorded(deps, execution, 'held call decided', { approver: approver.id });
  return { kind: 'decided', execution };
};

/**
 * Whether a call goes in an approver's inbox: one they may decide, or may once they sign in again
 * (more recently, or by a stronger method): the call's page tells them how.
 */
const listedFor = (refusal: DecisionRefusal | null): boolean =>
  refusal === null || refusal === 'sign_in_again' || refusal === 'acr_not_met';

/** Held calls this approver may decide now, or after signing in again, soonest expiry first. */
export const decidableBy = async (
  deps: Pick<DecisionDeps, 'store' | 'clock'>,
  approver: Approver,
  limit = 200,
): Promise<Execution[]> => {
  const found: Execution[] = [];
  const now = deps.clock.now();
  for await (const execution of openExecutions(deps.store)) {
    if (execution.status === 'pending_approval' && listedFor(mayDecide(approver, execution, now)))
      found.push(execution);
    if (found.length >= limit) break;
  }
  return found
    .sort((a, b) => (a.expires_at ?? '').localeCompare(b.expires_at ?? '') || a.created_at.localeCompare(b.created_at))
    .slice(0, limit);
};
