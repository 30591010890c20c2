// What an approver does with a held call: see the calls they may decide, open one (only the group
// the policy named sees its arguments), and approve or reject it. Decisions are conditional writes
// guarded by the arguments' hash and the approval time, then handed to the call's approval run.

import type { ApprovalRuns } from '../approvals/approval-runs.js';
import type { Approver } from '../approvals/approver.js';
import { type Clock, isoAt } from '../clock.js';
import { rejectedBecause, statusMessages } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';
import { isUuid } from '../ids.js';
import type { Log } from '../log.js';
import { decisionRecorded, openExecutions, settleOverdue } from './held-calls.js';
import type { CallStep } from './run-once.js';

export interface DecisionDeps {
  readonly store: ExecutionStore;
  readonly clock: Clock;
  readonly log: Log;
  readonly approvalRuns: ApprovalRuns;
  readonly probe?: (step: CallStep, executionId: string) => void;
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
 * The group this approver decides the call as: the policy's, or, once the call has waited as long
 * as its @escalate says (whether or not the escalation was recorded yet), the escalation group;
 * null when neither is theirs.
 */
export const decidingGroup = (approver: Approver, execution: Execution, now: number): string | null => {
  const step = execution.decision?.step ?? null;
  if (step === null || step.staff === null) return null;
  if (approver.groups.includes(step.staff)) return step.staff;
  const escalation = step.escalation;
  if (escalation === null || !approver.groups.includes(escalation.group)) return null;
  return Date.parse(execution.created_at) + escalation.after_ms <= now ? escalation.group : null;
};

/** Whether the sign-in is as recent as the policy's @reauth asks (an unknown time never is). */
const signedInRecently = (approver: Approver, reauthMs: number | null, now: number): boolean =>
  reauthMs === null ||
  (approver.signedInAt !== undefined && approver.signedInAt !== null && now - approver.signedInAt <= reauthMs);

/** Whether the sign-in's class is one the policy's @acr names (any, without @acr). */
const strongEnough = (approver: Approver, acr: readonly string[] | null): boolean =>
  acr === null || (approver.acr !== undefined && approver.acr !== null && acr.includes(approver.acr));

/**
 * Whether this approver may decide this call at `now` (epoch ms): the one rule the call page, the
 * decision and the inbox share. A member of the deciding group, not the requester, not someone who
 * approved it already, signed in as recently and as strongly as the policy asks.
 */
export const mayDecide = (approver: Approver, execution: Execution, now: number): DecisionRefusal | null => {
  const step = execution.decision?.step ?? null;
  if (step === null || decidingGroup(approver, execution, now) === null) return 'not_an_approver';
  if (approver.id === execution.agent_id) return 'own_call';
  if (execution.approvals.some((approval) => approval.by === approver.id)) return 'already_approved';
  if (!signedInRecently(approver, step.reauth_ms, now)) return 'sign_in_again';
  if (!strongEnough(approver, step.acr)) return 'acr_not_met';
  return null;
};

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
  const refusal = mayDecide(approver, execution, deps.clock.now());
  if (refusal === 'not_an_approver') return { kind: 'refused', reason: 'not_an_approver' };
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

export const decide = async (
  deps: DecisionDeps,
  approver: Approver,
  request: DecisionRequest,
): Promise<DecisionResult> => {
  const execution = await deps.store.get(request.execution_id);
  if (execution === undefined) return { kind: 'refused', reason: 'not_found' };
  const refusal = mayDecide(approver, execution, deps.clock.now());
  if (refusal !== null) return { kind: 'refused', reason: refusal, execution };
  if (execution.status !== 'pending_approval') return { kind: 'refused', reason: closedReason(execution), execution };
  const now = isoAt(deps.clock);
  if (execution.expires_at !== null && execution.expires_at <= now) {
    return { kind: 'refused', reason: 'expired', execution };
  }
  if (request.arguments_hash !== execution.arguments_hash) {
    return { kind: 'refused', reason: 'arguments_changed', execution };
  }
  // The customer confirms first; staff approve after (a confirmation is never taken back).
  if (
    request.outcome === 'approve' &&
    execution.decision?.step?.customer === true &&
    execution.customer_confirmed_at === null
  ) {
    return { kind: 'refused', reason: 'customer_confirms', execution };
  }
  const note = request.outcome === 'reject' ? cleanNote(request.note) : null;
  if (note !== null && note.length > maxNoteLength) return { kind: 'refused', reason: 'invalid_note', execution };

  const approve = request.outcome === 'approve';
  const decided = await deps.store.transition(execution, {
    from: 'pending_approval',
    to: approve ? 'approved' : 'rejected',
    at: now,
    guard: { argumentsHash: request.arguments_hash, notExpiredAt: now },
    patch: {
      decided_by: approver.id,
      decided_at: now,
      decision_note: note,
      ...(approve ? { code: null, message: statusMessages.approved } : rejectedBecause(note)),
    },
  });
  if (decided.kind === 'conflict') {
    const current = decided.current ?? execution;
    if (current.status !== 'pending_approval')
      return { kind: 'refused', reason: closedReason(current), execution: current };
    return {
      kind: 'refused',
      reason: current.expires_at !== null && current.expires_at <= now ? 'expired' : 'arguments_changed',
      execution: current,
    };
  }
  await decisionRecorded(deps, decided.execution, 'held call decided', { approver: approver.id });
  return { kind: 'decided', execution: decided.execution };
};

/** Held calls this approver may decide now, soonest expiry first. */
export const decidableBy = async (
  deps: Pick<DecisionDeps, 'store' | 'clock'>,
  approver: Approver,
  limit = 200,
): Promise<Execution[]> => {
  const found: Execution[] = [];
  const now = deps.clock.now();
  for await (const execution of openExecutions(deps.store)) {
    if (execution.status === 'pending_approval' && mayDecide(approver, execution, now) === null) found.push(execution);
    if (found.length >= limit) break;
  }
  return found
    .sort((a, b) => (a.expires_at ?? '').localeCompare(b.expires_at ?? '') || a.created_at.localeCompare(b.created_at))
    .slice(0, limit);
};
