// A request from a customer signed in: the customer cookie read and the customer it names checked
// with the sign-in source, in one place (which call the session opens is the router's check).
import type { Customer } from '../../shared/approvals/approver.js';
import type { CustomerPageContext } from '../../shared/edge/console/customer-pages.js';
import { customerOf, type Session } from '../../shared/sessions/session.js';
import type { ConsoleRequest } from './request.js';

/** A request from a customer signed in (for the call the route names: the router checks). */
export interface CustomerRequest extends ConsoleRequest {
  readonly session: Session;
  readonly customer: Customer;
  /** The call the session was signed in for. */
  readonly call: string;
  readonly context: CustomerPageContext;
}

/** Who the customer cookie names, as the sign-in source knows them now; null without a genuine one. */
export const withCustomer = async (
  request: ConsoleRequest,
  current: (customer: Customer) => Promise<Customer | null>,
): Promise<CustomerRequest | null> => {
  const session = await request.cookies.open('customer');
  if (session?.call === undefined) return null;
  const customer = await current(customerOf(session));
  if (customer === null) return null;
  return { ...request, session, customer, call: session.call, context: { customer, now: request.now() } };
};
