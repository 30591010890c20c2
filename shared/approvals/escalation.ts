// When a held call nobody decided is escalated: the policy's @escalate names a time after the call
// was made and a second group. From that instant the group may decide the call too (whether or not
// the escalation pass has recorded it yet), and the pass tells it once; the approval time is unchanged.
import type { Execution } from '../executions/execution.js';
import type { Escalation } from '../policy/human-step.js';

/** The instant (epoch ms) a call made at `createdAt` escalates under `escalation`, or null without one. */
export const escalationTime = (createdAt: string, escalation: Escalation | null): number | null =>
  escalation === null ? null : Date.parse(createdAt) + escalation.after_ms;

/** The instant (epoch ms) the call escalates, or null when its policy names no escalation. */
export const escalatesAt = (execution: Pick<Execution, 'decision' | 'created_at'>): number | null =>
  escalationTime(execution.created_at, execution.decision?.step?.escalation ?? null);

/** The group a call escalates to, or null. */
export const escalationGroupOf = (execution: Pick<Execution, 'decision'>): string | null =>
  execution.decision?.step?.escalation?.group ?? null;
