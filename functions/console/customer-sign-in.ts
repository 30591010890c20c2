// How customers sign in to answer a call made for them: a strategy the console is given (locally
// the `customers:` of the configuration, in infra/local; in AWS OpenID Connect with a fresh
// authentication, customer-oidc-sign-in.ts). A customer's session is its own cookie, short-lived
// and bound to the one call it was opened for, so a customer signs in again for every call, and a
// staff session never counts as a customer's.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Customer } from '../../shared/approvals/approver.js';
import { customerPaths } from '../../shared/edge/console/paths.js';
import { newCustomerSession } from '../../shared/sessions/session.js';
import type { HttpResult } from '../commons/middleware.js';
import type { ConsoleRequest } from './request.js';
import type { Route } from './router.js';

export interface CustomerSignIn {
  /** The routes of signing in: at least the sign-in page (`customerPaths.signIn`). */
  readonly routes: readonly Route[];
  /** The customer a session names as the sign-in source knows them now; null when no longer one. */
  current(customer: Customer): Promise<Customer | null>;
}

const callPage = /^\/customer\/calls\/[0-9a-f-]{36}$/;

/** Where a customer's sign-in leads: one call's page, or nowhere (null) when `next` names none. */
export const customerNext = (next: string | null | undefined): string | null =>
  next !== null && next !== undefined && callPage.test(next.toLowerCase()) ? next.toLowerCase() : null;

/** The call a `next` page names (it was checked by customerNext). */
const callOf = (next: string): string => next.slice(customerPaths.call('').length);

/** A confirmed customer: a session for the call `next` names only, the sign-in cookie gone, on to it. */
export const customerSignedIn = async (
  request: ConsoleRequest,
  logger: Logger,
  customer: Customer,
  next: string,
): Promise<HttpResult> => {
  const executionId = callOf(next);
  logger.info('customer signed in', { customer: customer.id, execution_id: executionId });
  return request.redirect(next, [
    await request.cookies.keep(newCustomerSession(customer, executionId, request.now())),
    request.cookies.clear('sign-in'),
  ]);
};
