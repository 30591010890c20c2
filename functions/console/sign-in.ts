// How approvers sign in is a strategy the console is given: in AWS through OpenID Connect (the
// only one the Lambda bundle holds), locally with the passwords of the configuration (which only
// the local runtime imports, so no password check ships to AWS). Both end the same way, here.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Approver } from '../../shared/approvals/approver.js';
import { consolePaths } from '../../shared/edge/console/pages.js';
import { newSession } from '../../shared/sessions/session.js';
import type { HttpResult } from '../commons/middleware.js';
import type { ApproverRequest, SessionRequest } from './request.js';
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
  /**
   * Signs the approver in again for a call that asks a fresh or strong sign-in, leading back to the
   * call's page (`next`): the provider asked for a new authentication at most `maxAgeMs` old (and of
   * one of the `acr` classes); locally the password form again.
   */
  again(request: ApproverRequest, asked: SignInAgain): Promise<HttpResult>;
}

/** What a call asks of the sign-in that may decide it, and the page to come back to. */
interface SignInAgain {
  readonly next: string;
  /** How old the new authentication may be at most (@reauth); null when the call asks no fresh sign-in. */
  readonly maxAgeMs: number | null;
  /** The classes the sign-in must be of (@acr); null when the call names none. */
  readonly acr: readonly string[] | null;
}

/** Where to go after signing in: a console page, never elsewhere (an open redirect otherwise). */
export const safeNext = (next: string | null | undefined): string =>
  next !== null && next !== undefined && /^\/console(\/[A-Za-z0-9/_.-]*)?$/.test(next) && !next.includes('..')
    ? next
    : consolePaths.home;

/**
 * A confirmed approver: a new session (and a new CSRF token), the sign-in cookie gone, on to `next`.
 * The session the browser held before (signing in again for a call, or another person) ends in the
 * server's list: a copy of its cookie is worth nothing after, and nothing it was shown carries over.
 */
export const signedIn = async (
  request: SessionRequest,
  logger: Logger,
  approver: Approver,
  next: string | null | undefined,
): Promise<HttpResult> => {
  logger.info('approver signed in', { approver: approver.id });
  if (request.session !== null) await request.cookies.end(request.session);
  return request.redirect(safeNext(next), [
    await request.cookies.keep(newSession(approver, request.now())),
    request.cookies.clear('sign-in'),
  ]);
};
