// Which staff approvals count toward a held call's human step: of the group the policy names, or
// of its escalation group once the call waited that long, each from a sign-in as recent and as
// strong as the policy asks, each person once. The decision (who may approve now) and the check
// before an approved call runs (does what was given still meet what the policy asks) read the same
// rule, so a policy change between the two is judged as the decision was.
import type { Execution, StaffApproval } from '../executions/execution.js';
import type { HumanStep } from '../policy/human-step.js';
import { escalationTime } from './escalation.js';

/** What a staff step asks of its approvals. */
export type StaffStep = Pick<HumanStep, 'staff' | 'quorum' | 'escalation' | 'reauth_ms' | 'acr'>;

/**
 * The group a member of `groups` decides as at `at` (epoch ms): the policy's, or, once the call
 * has waited as long as its @escalate says (recorded or not), the escalation group; null for neither.
 */
export const groupDecidingAt = (
  groups: readonly string[],
  step: StaffStep,
  createdAt: string,
  at: number,
): string | null => {
  if (step.staff === null) return null;
  if (groups.includes(step.staff)) return step.staff;
  const escalation = step.escalation;
  if (escalation === null || !groups.includes(escalation.group)) return null;
  const escalates = escalationTime(createdAt, escalation);
  return escalates !== null && escalates <= at ? escalation.group : null;
};

/** Whether the approval's sign-in was as recent as @reauth asks when it was given (an unknown time never is). */
export const signedInRecently = (approval: Pick<StaffApproval, 'at' | 'signed_in_at'>, step: StaffStep): boolean =>
  step.reauth_ms === null ||
  (approval.signed_in_at !== null && Date.parse(approval.at) - Date.parse(approval.signed_in_at) <= step.reauth_ms);

/** Whether the approval's sign-in class is one @acr names (any, without @acr). */
export const signInStrongEnough = (approval: Pick<StaffApproval, 'acr'>, step: StaffStep): boolean =>
  step.acr === null || (approval.acr !== null && step.acr.includes(approval.acr));

/**
 * The staff approvals a call holds, in order: those kept one by one; a record approved before they
 * were holds its one approver, of the group its policy named then (their sign-in unknown).
 */
export const staffApprovalsOf = (execution: Execution): readonly StaffApproval[] => {
  const staff = execution.decision?.step?.staff ?? null;
  const { decided_by: by, decided_at: at } = execution;
  if (execution.approvals.length > 0 || staff === null || by === null || at === null) return execution.approvals;
  if (execution.status === 'pending_approval' || execution.status === 'rejected') return [];
  return [{ by, at, group: staff, signed_in_at: null, acr: null }];
};

/** Whether the approvals given meet what `step` asks: enough distinct people whose approvals count. */
export const quorumMet = (execution: Execution, step: StaffStep): boolean => {
  const counted = staffApprovalsOf(execution).filter(
    (approval) =>
      groupDecidingAt([approval.group], step, execution.created_at, Date.parse(approval.at)) === approval.group &&
      signedInRecently(approval, step) &&
      signInStrongEnough(approval, step),
  );
  return new Set(counted.map((approval) => approval.by)).size >= step.quorum;
};

/**
 * How many staff approvals the call still needs before it runs: its policy's quorum, less those
 * given (none when only the customer confirms it).
 */
export const approvalsNeeded = (execution: Pick<Execution, 'decision' | 'approvals'>): number => {
  const step = execution.decision?.step ?? null;
  return step === null || step.staff === null ? 0 : Math.max(0, step.quorum - execution.approvals.length);
};
