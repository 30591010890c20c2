// When a held call nobody decided is escalated: the policy's @escalate names a time after the call
// was made and a second group. From that instant the group may decide the call too (whether or not
// the escalation pass has recorded it yet), and the pass tells it once; the approval time is unchanged.
import type { Execution } from '../executions/execution.js';

/** The instant (epoch ms) the call escalates, or null when its policy names no escalation. */
export const escalatesAt = (execution: Pick<Execution, 'decision' | 'created_at'>): number | null => {
  const escalation = execution.decision?.step?.escalation ?? null;
  return escalation === null ? null : Date.parse(execution.created_at) + escalation.after_ms;
};

/** The group a call escalates to, or null. */
export const escalationGroupOf = (execution: Pick<Execution, 'decision'>): string | null =>
  execution.decision?.step?.escalation?.group ?? null;

/**
 * How many staff approvals the call still needs before it runs: its quorum less those given (none
 * when only the customer confirms it).
 */
export const approvalsNeeded = (execution: Pick<Execution, 'decision' | 'approvals'>): number => {
  const step = execution.decision?.step ?? null;
  if (step === null || step.staff === null) return 0;
  return Math.max(0, step.quorum - execution.approvals.length);
};
