// How approvers sign in is a strategy the console is given: in AWS through OpenID Connect (the
// only one the Lambda bundle holds), locally with the passwords of the configuration (which only
// the local runtime imports, so no password check ships to AWS). Both end the same way, here.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Approver } from '../../shared/approvals/approver.js';
import { consolePaths } from '../../shared/edge/console/pages.js';
import { newSession } from '../../shared/sessions/session.js';
import type { HttpResult } from '../commons/middleware.js';
import type { ConsoleRequest } from './request.js';
import type { Route } from './router.js';

export interface SignInStrategy {
  /** The routes of signing in: at least the sign-in page (`consolePaths.signIn`). */
  readonly routes: readonly Route[];
  /** The approver a session names as the sign-in source knows them now; null when no longer one. */
  current(approver: Approver): Promise<Approver | null>;
  /**
   * Where the browser goes once the console's session is cleared, given the console's base URL:
   * the provider's logout, so its session ends too (and it sends the browser back to sign-in); the
   * sign-in page when the source keeps no session of its own (local passwords).
   */
  signedOut(base: string): Promise<string>;
}

/** Where to go after signing in: a console page, never elsewhere (an open redirect otherwise). */
export const safeNext = (next: string | null | undefined): string =>
  next !== null && next !== undefined && /^\/console(\/[A-Za-z0-9/_.-]*)?$/.test(next) && !next.includes('..')
    ? next
    : consolePaths.home;

/** A confirmed approver: a new session (and a new CSRF token), the sign-in cookie gone, on to `next`. */
export const signedIn = async (
  request: ConsoleRequest,
  logger: Logger,
  approver: Approver,
  next: string | null | undefined,
): Promise<HttpResult> => {
  logger.info('approver signed in', { approver: approver.id });
  return request.redirect(safeNext(next), [
    await request.cookies.keep(newSession(approver, request.now())),
    request.cookies.clear('sign-in'),
  ]);
};
