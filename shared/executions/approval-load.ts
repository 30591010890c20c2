// The approval load on each group of approvers: how long a held call waits for its decision, how
// many wait now, and how many nobody decided. One reading of a record serves the metrics (counted
// where the decision is written) and the audit command's --stats, so both tell the same story.
import type { Execution } from './execution.js';

/** The group of a held call only the customer decides. */
const customerGroup = '(customer)';

/**
 * The group a held call counts for: the group the staff member who decided it acted as (so an
 * escalation group that approved or rejected is counted as itself), else the policy's @approvers
 * group, or the customer when only they decide it or when they declined it. Null for a call no one held.
 */
export const approvalGroupOf = (execution: Execution): string | null => {
  const step = execution.decision?.step ?? null;
  if (step === null) return null;
  if (execution.decided_as !== null) return execution.decided_as;
  const by = execution.decided_by;
  if (step.staff === null || (by !== null && by === execution.customer_id)) return customerGroup;
  return step.staff;
};

/**
 * How long a person took to decide a held call (ms from the request to the decision), or null when
 * no person decided it: it waits, it expired, or its agent withdrew it.
 */
const decisionWaitMs = (execution: Execution): number | null => {
  if (execution.decision?.step === null || execution.decided_by === null || execution.decided_at === null) return null;
  return Math.max(0, Date.parse(execution.decided_at) - Date.parse(execution.created_at));
};

/** One group's load over a window. */
export interface GroupLoad {
  readonly group: string;
  /** Held calls made in the window that count for the group. */
  readonly held: number;
  readonly decided: number;
  /** Time from request to decision, median and 90th percentile (ms); null when nothing was decided. */
  readonly p50_ms: number | null;
  readonly p90_ms: number | null;
  /** Calls waiting for a decision now. */
  readonly pending: number;
  readonly expired: number;
  /** Of the held calls that ended (decided, expired or withdrawn), the share that expired (0 to 1); null when none ended. */
  readonly expired_share: number | null;
}

/** The nearest-rank percentile of sorted values: the smallest value with at least `share` of them at or below it. */
const percentileOf = (sorted: readonly number[], share: number): number | null =>
  sorted.length === 0 ? null : (sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)] ?? null);

interface Tally {
  held: number;
  ended: number;
  pending: number;
  expired: number;
  waits: number[];
}

const tallyOf = (execution: Execution, tally: Tally): void => {
  tally.held += 1;
  if (execution.status === 'pending_approval') tally.pending += 1;
  else tally.ended += 1;
  if (execution.status === 'expired') tally.expired += 1;
  const wait = decisionWaitMs(execution);
  if (wait !== null) tally.waits.push(wait);
};

/** Each group's load over the held calls given (those made in the window), by group name. */
export const approvalLoadOf = (executions: Iterable<Execution>): GroupLoad[] => {
  const tallies = new Map<string, Tally>();
  for (const execution of executions) {
    const group = approvalGroupOf(execution);
    if (group === null) continue;
    let tally = tallies.get(group);
    if (tally === undefined) {
      tally = { held: 0, ended: 0, pending: 0, expired: 0, waits: [] };
      tallies.set(group, tally);
    }
    tallyOf(execution, tally);
  }
  return [...tallies.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, tally]) => {
      const waits = tally.waits.sort((a, b) => a - b);
      return {
        group,
        held: tally.held,
        decided: waits.length,
        p50_ms: percentileOf(waits, 0.5),
        p90_ms: percentileOf(waits, 0.9),
        pending: tally.pending,
        expired: tally.expired,
        expired_share: tally.ended === 0 ? null : tally.expired / tally.ended,
      };
    });
};
