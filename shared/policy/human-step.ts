// What a permit asks before a call it allows runs (its human step), as the policy's annotations
// say: kept apart from the policy engine so that the console and the approvals' rules read it
// without loading Cedar.

/** @escalate("4h, operations"): after this long without a decision, this group may decide too. */
export interface Escalation {
  readonly after_ms: number;
  readonly group: string;
}

/** The most approvers a quorum may ask for (@quorum). */
export const maxQuorum = 10;

export interface HumanStep {
  /** The staff group whose approval is needed, or null for none. */
  readonly staff: string | null;
  /** Whether the customer the agent acts for must confirm. */
  readonly customer: boolean;
  /** How many distinct approvers must approve (1 unless the policy says @quorum). */
  readonly quorum: number;
  /** Who else may decide when nobody did in time (@escalate), or null. */
  readonly escalation: Escalation | null;
  /** How recently an approver must have signed in to decide (@reauth), in milliseconds, or null. */
  readonly reauth_ms: number | null;
  /** The sign-in classes (`acr`) that may decide (@acr), or null for any. */
  readonly acr: readonly string[] | null;
}
