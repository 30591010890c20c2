// Waiting for a call's record to change, where waiting costs nothing and something can tell: the
// local runtime is one process that writes every decision and outcome itself, so its store's writes
// wake whoever waits on them. In AWS the writers are other functions and a waiting function is
// billed for the wait, so nothing waits there: the answer is the one read made.
import type { Execution } from './execution.js';

/** How long a wait may last: until the request's signal ends it, or the limit passes. */
export interface WriteWait {
  readonly signal: AbortSignal;
  readonly limitMs: number;
}

export interface ExecutionWrites {
  /**
   * Waits until a write of this execution leaves a record `settles` accepts, or the wait ends;
   * true once it is over. False at once where no write can be seen from here (nothing waits).
   */
  awaitWrite(executionId: string, settles: (execution: Execution) => boolean, wait: WriteWait): Promise<boolean>;
}

/** Where the writers are other processes (AWS): no write can be seen, so nothing waits. */
export const unseenWrites: ExecutionWrites = { awaitWrite: async () => false };
