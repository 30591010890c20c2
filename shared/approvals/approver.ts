// Who decides: an approver signed in to the console (locally a configured identity, in AWS the
// identity provider's user), with the groups policies name in @approvers.
export interface Approver {
  readonly id: string;
  readonly name: string | null;
  readonly groups: readonly string[];
}

/** A customer signed in to confirm a call an agent made for them (locally a configured identity). */
export interface Customer {
  readonly id: string;
  readonly name: string | null;
}
