// What a customer does with a call an agent made on their behalf: open it (only the customer the
// agent acts for, while their step is open) and confirm or decline it. Confirming either approves
// the call (the policy asked for the customer alone) or hands it on to staff (it asked for both:
// the customer first, then staff); declining rejects it. Each is one conditional write, guarded
// like a staff decision, then handed to the call's approval run.
import type { Customer } from '../approvals/approver.js';
import { isoAt } from '../clock.js';
import { coded, statusMessages } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import { heldAfter } from '../executions/store.js';
import { isUuid } from '../ids.js';
import type { DecisionDeps } from './approver-decisions.js';
import { decisionRecorded, settleOverdue } from './held-calls.js';

export type CustomerRefusal =
  /** No such call, or not one made for this customer: both look the same from outside. */
  | 'not_found'
  /** The call does not wait for the customer (the policy asked for none, or they already answered). */
  | 'not_waiting_for_customer'
  /** The call was decided already, or withdrawn. */
  | 'already_decided'
  /** The approval time ran out. */
  | 'expired'
  /** The hash sent with the answer is not the one of the arguments held. */
  | 'arguments_changed';

/** Whether the call still waits for this customer's answer; null when it does. */
const customerMayAnswer = (customer: Customer, execution: Execution, now: string): CustomerRefusal | null => {
  if (execution.customer_id === null || execution.customer_id !== customer.id) return 'not_found';
  if (execution.status === 'expired') return 'expired';
  if (execution.status !== 'pending_approval') return 'already_decided';
  if (execution.decision?.step?.customer !== true || execution.customer_confirmed_at !== null) {
    return 'not_waiting_for_customer';
  }
  if (execution.expires_at !== null && execution.expires_at <= now) return 'expired';
  return null;
};

export type CustomerView =
  /** The call, its overdue state settled, and why the customer may not answer it now (null: they may). */
  | { readonly kind: 'shown'; readonly execution: Execution; readonly refusal: CustomerRefusal | null }
  | { readonly kind: 'refused'; readonly reason: 'not_found' };

/** One call as its customer sees it; another customer's call, or an unknown id, is not found. */
export const viewCustomerCall = async (
  deps: Pick<DecisionDeps, 'store' | 'clock'>,
  customer: Customer,
  executionId: string,
): Promise<CustomerView> => {
  const found = isUuid(executionId) ? await deps.store.get(executionId) : undefined;
  if (found === undefined || found.customer_id === null || found.customer_id !== customer.id) {
    return { kind: 'refused', reason: 'not_found' };
  }
  const execution = await settleOverdue(deps, found);
  return { kind: 'shown', execution, refusal: customerMayAnswer(customer, execution, isoAt(deps.clock)) };
};

export interface CustomerAnswer {
  readonly execution_id: string;
  readonly outcome: 'confirm' | 'decline';
  /** The hash of the arguments the customer was shown. */
  readonly arguments_hash: string;
}

export type CustomerAnswerResult =
  | { readonly kind: 'answered'; readonly execution: Execution }
  | { readonly kind: 'refused'; readonly reason: CustomerRefusal; readonly execution?: Execution };

/** Why an answer lost its race: what the record says now. */
const lostTo = (customer: Customer, current: Execution, now: string): CustomerRefusal =>
  customerMayAnswer(customer, current, now) ?? 'arguments_changed';

export const customerAnswer = async (
  deps: DecisionDeps,
  customer: Customer,
  answer: CustomerAnswer,
): Promise<CustomerAnswerResult> => {
  const execution = isUuid(answer.execution_id) ? await deps.store.get(answer.execution_id) : undefined;
  if (execution === undefined) return { kind: 'refused', reason: 'not_found' };
  const now = isoAt(deps.clock);
  const refusal = customerMayAnswer(customer, execution, now);
  if (refusal === 'not_found') return { kind: 'refused', reason: 'not_found' };
  if (refusal !== null) return { kind: 'refused', reason: refusal, execution };
  if (answer.arguments_hash !== execution.arguments_hash) {
    return { kind: 'refused', reason: 'arguments_changed', execution };
  }
  const guard = { argumentsHash: answer.arguments_hash, notExpiredAt: now, customerUnanswered: true } as const;
  const staff = execution.decision?.step?.staff ?? null;

  if (answer.outcome === 'confirm' && staff !== null) {
    // The customer's step closes; the call waits for staff, within the same approval time.
    const annotated = await deps.store.annotate(
      execution,
      'pending_approval',
      { customer_confirmed_at: now, approval_url: null, message: statusMessages.waiting_for_staff },
      'customer_confirmed_at',
    );
    if (annotated.kind === 'conflict') {
      const current = heldAfter(annotated, execution);
      return { kind: 'refused', reason: lostTo(customer, current, now), execution: current };
    }
    deps.log.info('customer confirmed; the call waits for staff', {
      execution_id: execution.execution_id,
      customer: customer.id,
    });
    return { kind: 'answered', execution: annotated.execution };
  }

  const confirm = answer.outcome === 'confirm';
  const decided = await deps.store.transition(execution, {
    from: 'pending_approval',
    to: confirm ? 'approved' : 'rejected',
    at: now,
    guard,
    patch: {
      decided_by: customer.id,
      decided_at: now,
      approval_url: null,
      ...(confirm
        ? { customer_confirmed_at: now, code: null, message: statusMessages.approved }
        : coded('customer_declined')),
    },
  });
  if (decided.kind === 'conflict') {
    const current = heldAfter(decided, execution);
    return { kind: 'refused', reason: lostTo(customer, current, now), execution: current };
  }
  await decisionRecorded(deps, decided.execution, 'customer answered a held call', { customer: customer.id });
  return { kind: 'answered', execution: decided.execution };
};
