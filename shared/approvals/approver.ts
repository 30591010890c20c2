// Who decides: an approver signed in to the console (locally a configured identity, in AWS the
// identity provider's user), with the groups policies name in @approvers.
export interface Approver {
  readonly id: string;
  readonly name: string | null;
  readonly groups: readonly string[];
  /**
   * When this session's sign-in happened (epoch ms: the provider's auth_time, or the local
   * password's check), for decisions that ask a fresh sign-in; null or absent when unknown.
   */
  readonly signedInAt?: number | null;
  /** The sign-in's authentication class (the ID token's `acr`), null or absent when it named none. */
  readonly acr?: string | null;
}

/** A customer signed in to confirm a call an agent made for them (locally a configured identity). */
export interface Customer {
  readonly id: string;
  readonly name: string | null;
}
