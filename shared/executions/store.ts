// The execution store port. Adapters (DynamoDB in AWS and locally against dynalite) implement it
// with single-item conditional writes only; a lost race is an ordinary answer, not an exception.
import type { ExecutionStatus } from '../result.js';
import type { Execution } from './execution.js';

export interface ExecutionKey {
  readonly execution_id: string;
  readonly agent_id: string;
}

/** Fields a transition may set besides the status itself. */
export type ExecutionPatch = Partial<
  Pick<Execution, 'code' | 'message' | 'result_json' | 'approval_url' | 'input_errors' | 'arguments_json'>
>;

export interface TransitionRequest {
  readonly from: ExecutionStatus;
  readonly to: ExecutionStatus;
  readonly at: string;
  readonly patch?: ExecutionPatch;
}

export type TransitionResult =
  | { readonly kind: 'applied'; readonly execution: Execution }
  /** Someone else moved it first (or it does not exist): `current` is what the store holds now. */
  | { readonly kind: 'conflict'; readonly current: Execution | undefined };

export type CreateResult = { readonly kind: 'created' } | { readonly kind: 'exists' };

export interface ExecutionPage {
  readonly items: readonly Execution[];
  /** Opaque cursor for the next page, absent on the last one. */
  readonly next?: string;
}

export interface ExecutionStore {
  /** Records a new execution; refuses to overwrite an existing id. */
  create(execution: Execution): Promise<CreateResult>;
  /** Reads an execution by id and owner: another agent's id is simply not found. */
  getOwned(key: ExecutionKey): Promise<Execution | undefined>;
  /** Reads an execution by id alone (console, workflow, reconciler). */
  get(executionId: string): Promise<Execution | undefined>;
  /** Moves an execution from one status to the next, only if it still holds the expected one. */
  transition(key: ExecutionKey, change: TransitionRequest): Promise<TransitionResult>;
  /** An agent's executions, newest first. */
  listByAgent(agentId: string, options?: { limit?: number; cursor?: string }): Promise<ExecutionPage>;
}

export class IllegalTransitionError extends Error {
  constructor(from: ExecutionStatus, to: ExecutionStatus) {
    super(`An execution cannot move from ${from} to ${to}.`);
    this.name = 'IllegalTransitionError';
  }
}
