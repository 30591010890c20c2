// The console as the local runtime serves it: the same route table as in AWS, with sign-in by the
// ids and passwords under `approvers:` in the configuration. It lives here, imported only by the
// local runtime, so the password check and its throttle never ship in the Lambda bundle.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { HttpResult } from '../../functions/commons/middleware.js';
import { type ConsoleDeps, createConsole } from '../../functions/console/app.js';
import type { SessionRequest } from '../../functions/console/request.js';
import { notAllowed } from '../../functions/console/router.js';
import { type SignInStrategy, safeNext, signedIn } from '../../functions/console/sign-in.js';
import type { Clock } from '../../shared/clock.js';
import type { ResolvedPerson } from '../../shared/config/load.js';
import { checkPassword } from '../../shared/console/identity.js';
import { consolePaths, signInPage, timeLeft } from '../../shared/console/pages.js';
import { newSignIn } from '../../shared/console/session.js';
import { SignInThrottle } from '../../shared/console/throttle.js';

export interface LocalConsoleSignIn {
  readonly kind: 'local';
  /** Asked on every request: an approver removed from the configuration is signed out at once. */
  readonly people: () => Promise<readonly ResolvedPerson[]>;
}

export interface LocalConsoleDeps extends ConsoleDeps {
  readonly signIn: LocalConsoleSignIn;
}

/** A sign-in form with a fresh CSRF token, kept in the sign-in cookie it sets. */
const freshForm = async (
  request: SessionRequest,
  statusCode: number,
  next: string,
  error: string | null,
): Promise<HttpResult> => {
  const pending = newSignIn(request.now());
  return request.page(statusCode, signInPage(request.anonymous, { csrf: pending.csrf, next, error }), {
    cookies: [await request.cookies.keep(pending)],
  });
};

const passwordSignIn = (
  people: () => Promise<readonly ResolvedPerson[]>,
  clock: Clock,
  logger: Logger,
): SignInStrategy => {
  // Failed sign-ins, per approver id and per address, in this process.
  const throttle = new SignInThrottle(clock);

  const check = async (request: SessionRequest): Promise<HttpResult> => {
    const fields = request.form();
    const pending = await request.cookies.open('sign-in');
    if (pending === null || !request.fromThisConsole(fields, pending.csrf)) {
      return freshForm(request, 403, safeNext(fields?.get('next')), 'The sign-in form expired; please sign in again.');
    }
    const again = (statusCode: number, error: string, extra: { headers?: Record<string, string> } = {}) =>
      request.page(
        statusCode,
        signInPage(request.anonymous, { csrf: pending.csrf, next: safeNext(fields.get('next')), error }),
        extra,
      );
    // The id as checkPassword compares it; the address as the connection (not a header) gives it.
    const account = (fields.get('approver') ?? '').trim().slice(0, 256);
    const address = request.event.requestContext.http.sourceIp;
    const waitMs = throttle.waitMs(account, address);
    if (waitMs > 0) {
      logger.warn('console sign-in throttled', { approver: account.slice(0, 64), address });
      return again(
        429,
        `Too many failed sign-ins for this approver id or from this address; nothing was checked. Try again in ${timeLeft(waitMs)}.`,
        { headers: { 'retry-after': String(Math.ceil(waitMs / 1000)) } },
      );
    }
    const checked = checkPassword(await people(), fields.get('approver') ?? '', fields.get('password') ?? '');
    if (!checked.ok) {
      throttle.failed(account, address);
      logger.warn('console sign-in refused', { approver: account.slice(0, 64) });
      return again(401, 'Wrong approver id or password.');
    }
    throttle.succeeded(account);
    return signedIn(request, logger, checked.approver, fields.get('next'));
  };

  return {
    current: async (approver) => {
      const person = (await people()).find((candidate) => candidate.id === approver.id);
      return person === undefined ? null : { id: person.id, name: person.name, groups: person.groups };
    },
    routes: [
      {
        access: 'anyone',
        path: consolePaths.signIn,
        methods: {
          GET: (request) => freshForm(request, 200, safeNext(request.query.get('next')), null),
          POST: check,
        },
        otherwise: notAllowed('Sign in with the form.', 'anonymous'),
      },
    ],
  };
};

/** The console function with local password sign-in. */
export const createConsoleFunction = (deps: LocalConsoleDeps) =>
  createConsole(deps, passwordSignIn(deps.signIn.people, deps.services.clock, deps.logger));
