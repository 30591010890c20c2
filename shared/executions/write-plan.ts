// The lifecycle's rules for one write, as data: whether a requested move is legal, the fields it
// sets, what the record must still hold, when the record may be deleted, its place in the index of
// open calls and whether its agent's place for held calls comes back. The store adapters persist a
// plan in one single-item conditional write (no transactions) and report a conflict when the
// record no longer meets the plan's conditions; they hold no rule of their own.
import { errorText, settledMessages } from '../errors.js';
import type { Log } from '../log.js';
import type { ExecutionStatus } from '../result.js';
import {
  allowedTransitions,
  Execution,
  IllegalTransitionError,
  openStatuses,
  type Settlement,
  settlementTransitions,
  terminalStatuses,
} from './execution.js';
import { epochSeconds, retainUntilFrom } from './retention.js';
import type { ApprovalRequest, ClaimRequest, ExecutionKey, ExecutionPatch, TransitionRequest } from './store.js';

/** What the record must hold for the write to apply; anything else is a conflict. */
export interface PlanConditions {
  readonly status: ExecutionStatus;
  /** The canonical arguments' hash must be this (what the approver saw). */
  readonly argumentsHash?: string;
  /** The approval time must run out after this instant. */
  readonly expiresAfter?: string;
  /** This field must be unset (null or absent): a claim, a notice or a customer's answer is given once. */
  readonly unset?: keyof ExecutionPatch;
  /**
   * The record must hold exactly this many staff approvals (a record written before approvals were
   * kept holds none): an approval counts only toward the approvals it was given after.
   */
  readonly approvalsGiven?: number;
}

/** A transition's guard as the conditions the record must meet besides its status. */
const guardConditions = (guard: NonNullable<TransitionRequest['guard']>): Omit<PlanConditions, 'status'> => ({
  ...(guard.argumentsHash === undefined ? {} : { argumentsHash: guard.argumentsHash }),
  ...(guard.notExpiredAt === undefined ? {} : { expiresAfter: guard.notExpiredAt }),
  // A confirmation the customer already gave is never answered again.
  ...(guard.customerUnanswered === true ? { unset: 'customer_confirmed_at' } : {}),
  ...(guard.approvalsGiven === undefined ? {} : { approvalsGiven: guard.approvalsGiven }),
});

/** What a write does to the record's entry in the index of open calls. */
type OpenIndexChange =
  | { readonly kind: 'keep' }
  /** The call is over: it leaves the index. */
  | { readonly kind: 'leave' }
  /** The call's next deadline moves (a claim's deadline): its entry is due then. */
  | { readonly kind: 'due'; readonly until: string }
  /**
   * The call ended unknown: it moves to the index's partition of outcomes not yet settled (never
   * one of the open partitions, so recovery never takes it for a call still waiting), since `since`.
   */
  | { readonly kind: 'unsettled'; readonly since: string };

export interface WritePlan {
  readonly conditions: PlanConditions;
  /** The fields written, each set to its value (only set values: an unset field keeps the record's). */
  readonly sets: Readonly<Record<string, unknown>>;
  /** The status change the history gains, when the status moves. */
  readonly historyEntry: { readonly status: ExecutionStatus; readonly at: string } | null;
  /**
   * The write makes the call final: it may be deleted this many epoch seconds from now plus the
   * record's own retention (retention_s, else the default). Null: retain_until is left as it is.
   */
  readonly retainFrom: number | null;
  readonly openIndex: OpenIndexChange;
  /** The call stops waiting for a decision: its agent's place is given back once the write applied. */
  readonly releasesPendingPlace: boolean;
}

/** A requested move, planned: the plan, or why the lifecycle refuses it (nothing is written). */
export type PlannedMove =
  | { readonly legal: true; readonly plan: WritePlan }
  | { readonly legal: false; readonly reason: string };

/** The patch's set fields (a field given as undefined is no change). */
const setFields = (patch: ExecutionPatch): Record<string, unknown> =>
  Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));

/**
 * A status move: legal only along the lifecycle's `allowedTransitions`, or, for an unknown outcome,
 * as a settlement (`settlementTransitions`, the settlement given); a settlement of anything else is refused.
 */
export const planTransition = (change: TransitionRequest): PlannedMove => {
  const { from, to, at, guard = {}, settlement } = change;
  if (settlement !== undefined || settlementTransitions[from] !== undefined) return planSettlement(change);
  if (!allowedTransitions[from].includes(to)) {
    return { legal: false, reason: `An execution cannot move from ${from} to ${to}.` };
  }
  return {
    legal: true,
    plan: {
      conditions: { status: from, ...guardConditions(guard) },
      sets: { ...setFields(change.patch ?? {}), status: to, updated_at: at },
      historyEntry: { status: to, at },
      // Final: kept for the call's own retention from now, in this same write.
      retainFrom: terminalStatuses.has(to) ? epochSeconds(at) : null,
      // A call that is over leaves the index of waiting calls; one that ended unknown waits to be settled.
      openIndex: openStatuses.has(to)
        ? { kind: 'keep' }
        : to === 'unknown'
          ? { kind: 'unsettled', since: at }
          : { kind: 'leave' },
      releasesPendingPlace: from === 'pending_approval',
    },
  };
};

/**
 * An operator's settlement of an unknown outcome: only while the record is unknown (so once: the
 * move leaves unknown), to the outcome they found. The history gains the settled status after
 * unknown; the settlement keeps who, when, why and the code it ended unknown with (the record's
 * code stays for a failure and is cleared for a success, which has none). Final again: kept for
 * its retention from the settlement. It leaves the partition of unsettled outcomes.
 */
const planSettlement = (change: TransitionRequest): PlannedMove => {
  const { from, to, at, settlement } = change;
  const outcomes: readonly ExecutionStatus[] = settlementTransitions[from] ?? [];
  if (settlement === undefined || !outcomes.includes(to) || settlement.outcome !== to || settlement.at !== at) {
    return {
      legal: false,
      reason:
        outcomes.length === 0
          ? `Only an unknown outcome is settled; an execution cannot be settled from ${from}.`
          : `An unknown outcome moves only by a settlement, to ${outcomes.join(' or ')}.`,
    };
  }
  const settled: Settlement = settlement;
  return {
    legal: true,
    plan: {
      conditions: { status: from },
      sets: {
        status: to,
        updated_at: at,
        settlement: settled,
        message: settledMessages[to === 'succeeded' ? 'succeeded' : 'failed'],
        ...(to === 'succeeded' ? { code: null } : {}),
      },
      historyEntry: { status: to, at },
      retainFrom: epochSeconds(at),
      openIndex: { kind: 'leave' },
      releasesPendingPlace: false,
    },
  };
};

/** The plan of a legal move; a move outside the lifecycle is a bug of the caller, thrown. */
export const legalPlan = (change: TransitionRequest): WritePlan => {
  const planned = planTransition(change);
  if (!planned.legal) throw new IllegalTransitionError(planned.reason);
  return planned.plan;
};

/**
 * Claiming an approved call for sending: only once (claimed_at unset), so one approved call is sent
 * at most once; the claim's deadline becomes its next deadline in the index of open calls.
 */
export const planClaim = (claim: ClaimRequest): WritePlan => ({
  conditions: { status: 'approved', unset: 'claimed_at' },
  sets: {
    claimed_at: claim.at,
    deadline_at: claim.deadline,
    updated_at: claim.at,
    ...(claim.receipt === undefined ? {} : { receipt: claim.receipt }),
  },
  historyEntry: null,
  retainFrom: null,
  openIndex: { kind: 'due', until: claim.deadline },
  releasesPendingPlace: false,
});

/**
 * A staff approval short of the quorum: the approvals grow by one, only while the call is pending
 * with the arguments the approver saw, within its approval time, and holds the approvals read.
 */
export const planApproval = (approval: ApprovalRequest): WritePlan => ({
  conditions: {
    status: 'pending_approval',
    ...guardConditions({
      argumentsHash: approval.argumentsHash,
      notExpiredAt: approval.at,
      approvalsGiven: approval.approvals.length - 1,
    }),
  },
  sets: { approvals: approval.approvals, updated_at: approval.at },
  historyEntry: null,
  retainFrom: null,
  openIndex: { kind: 'keep' },
  releasesPendingPlace: false,
});

/** Fields set without a status move, only while the record holds `status` (and `onlyIfUnset` is unset). */
export const planAnnotation = (
  status: ExecutionStatus,
  patch: ExecutionPatch,
  onlyIfUnset?: keyof ExecutionPatch,
): WritePlan => ({
  conditions: { status, ...(onlyIfUnset === undefined ? {} : { unset: onlyIfUnset }) },
  sets: setFields(patch),
  historyEntry: null,
  retainFrom: null,
  openIndex: { kind: 'keep' },
  releasesPendingPlace: false,
});

/** Whether `record` meets the plan's conditions (what a conditional write checks in the store). */
export const meetsConditions = (record: Execution, conditions: PlanConditions): boolean => {
  if (record.status !== conditions.status) return false;
  if (conditions.argumentsHash !== undefined && record.arguments_hash !== conditions.argumentsHash) return false;
  const { expiresAfter, unset, approvalsGiven } = conditions;
  if (expiresAfter !== undefined && (record.expires_at === null || !(record.expires_at > expiresAfter))) return false;
  if (approvalsGiven !== undefined && record.approvals.length !== approvalsGiven) return false;
  return unset === undefined || record[unset] === null;
};

/** The record after the plan's write, or null when `current` does not meet its conditions (a conflict). */
export const applyPlan = (current: Execution, plan: WritePlan): Execution | null => {
  if (!meetsConditions(current, plan.conditions)) return null;
  return Execution.parse({
    ...current,
    ...structuredClone(plan.sets),
    ...(plan.historyEntry === null ? {} : { history: [...current.history, plan.historyEntry] }),
    ...(plan.retainFrom === null ? {} : { retain_until: retainUntilFrom(plan.retainFrom, current.retention_s) }),
  });
};

/** Where a call waiting sits in the index of open calls: one of sixteen partitions, and its next deadline. */
export interface OpenEntry {
  readonly shard: number;
  readonly until: string;
}

/** How many partitions the index of open calls is spread over. */
export const openShardCount = 16;

/**
 * A call still waiting enters the index of open calls in the partition of its id's last hex digit
 * (random in a UUIDv7, so a busy gateway's direct writes never crowd one partition), due at its
 * next deadline; a call that ended, or an id with no such digit, has no entry.
 */
export const openEntryOf = (execution: Execution): OpenEntry | null => {
  if (!openStatuses.has(execution.status)) return null;
  const shard = Number.parseInt(execution.execution_id.slice(-1), 16);
  if (Number.isNaN(shard)) return null;
  return { shard, until: execution.deadline_at ?? execution.expires_at ?? execution.updated_at };
};

/** The partition of the index of open calls that holds unknown outcomes not yet settled. */
export const unsettledShard = 'unsettled';

/**
 * Since when a call waits to be settled: an unknown outcome no operator has settled (it sits in the
 * index's partition of unsettled outcomes from then); null for any other call.
 */
export const unsettledSince = (execution: Execution): string | null =>
  execution.status === 'unknown' && execution.settlement === null ? execution.updated_at : null;

/**
 * Gives back the agent's place once a write that ends its wait applied. A failed release is logged
 * and the write stands, in every store: the next reservation that finds the agent full gives the
 * place back (shared/limits/pending-quota.ts).
 */
export const releasePlaceAfter = async (
  plan: WritePlan,
  key: ExecutionKey,
  release: (agentId: string, executionIds: readonly string[]) => Promise<void>,
  log: Log,
): Promise<void> => {
  if (!plan.releasesPendingPlace) return;
  try {
    await release(key.agent_id, [key.execution_id]);
  } catch (error) {
    log.warn('a held call’s place could not be given back; the agent’s next reservation at its limit takes it back', {
      execution_id: key.execution_id,
      agent_id: key.agent_id,
      error: errorText(error),
    });
  }
};
