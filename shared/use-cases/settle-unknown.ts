// Settling an unknown outcome: an operator checked the system and says whether it did the call.
// Only an unknown call is settled, and once: the move is one conditional write, so of two operators
// settling at once one wins and the other is told who did. The record keeps its history (unknown,
// then the settled status) and who settled it, when and why.
import { type Clock, isoAt } from '../clock.js';
import { type Execution, type SettledOutcome, Settlement } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';

export interface SettlementRequest {
  readonly executionId: string;
  readonly outcome: SettledOutcome;
  readonly reason: string;
  /** The operator's identity (the OS user locally, the AWS caller's ARN against a deployed table). */
  readonly by: string;
}

export type SettlementAnswer =
  | { readonly kind: 'settled'; readonly execution: Execution }
  | { readonly kind: 'not_found' }
  /** The call did not end unknown: there is nothing to settle. */
  | { readonly kind: 'not_unknown'; readonly execution: Execution }
  /** Someone settled it already (perhaps a moment ago, racing this one): `execution.settlement` says who. */
  | { readonly kind: 'already_settled'; readonly execution: Execution };

/** What the record says now: settled already, or not unknown at all. */
const refusalOf = (execution: Execution): SettlementAnswer =>
  execution.settlement === null ? { kind: 'not_unknown', execution } : { kind: 'already_settled', execution };

/** A reason as kept: trimmed; the settlement's rules (bounded, no control characters) are checked on it. */
export const settlementReason = (text: string): { ok: true; value: string } | { ok: false; error: string } => {
  const reason = text.trim();
  const checked = Settlement.shape.reason.safeParse(reason);
  if (checked.success) return { ok: true, value: reason };
  if (reason.length === 0) return { ok: false, error: 'the reason is required: say what you found in the system' };
  return { ok: false, error: checked.error.issues[0]?.message ?? 'the reason is not accepted' };
};

export const settleUnknown = async (
  deps: { readonly store: ExecutionStore; readonly clock: Clock },
  request: SettlementRequest,
): Promise<SettlementAnswer> => {
  const execution = await deps.store.get(request.executionId);
  if (execution === undefined) return { kind: 'not_found' };
  if (execution.status !== 'unknown') return refusalOf(execution);
  const at = isoAt(deps.clock);
  const settlement = Settlement.parse({
    outcome: request.outcome,
    by: request.by,
    at,
    reason: request.reason,
    unknown_code: execution.code,
  });
  const moved = await deps.store.transition(execution, {
    from: 'unknown',
    to: request.outcome,
    at,
    settlement,
  });
  if (moved.kind === 'applied') return { kind: 'settled', execution: moved.execution };
  return moved.current === undefined ? { kind: 'not_found' } : refusalOf(moved.current);
};
