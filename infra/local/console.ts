// The console as the local runtime serves it: the same route table as in AWS, with sign-in by the
// ids and passwords under `approvers:` (and, for the customer's pages, `customers:`) in the
// configuration. It lives here, imported only by the local runtime, so the password check and its
// throttle never ship in the Lambda bundle.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { HttpResult } from '../../functions/commons/middleware.js';
import { type ConsoleDeps, createConsole } from '../../functions/console/app.js';
import { type CustomerSignIn, customerNext, customerSignedIn } from '../../functions/console/customer-sign-in.js';
import type { SessionRequest } from '../../functions/console/request.js';
import { notAllowed } from '../../functions/console/router.js';
import { type SignInStrategy, safeNext, signedIn } from '../../functions/console/sign-in.js';
import type { Clock } from '../../shared/clock.js';
import type { ResolvedPerson } from '../../shared/config/resolved.js';
import { customerMessagePage, customerSignInPage } from '../../shared/edge/console/customer-pages.js';
import { consolePaths, signInPage, timeLeft } from '../../shared/edge/console/pages.js';
import { customerPaths } from '../../shared/edge/console/paths.js';
import { warnOncePerInterval } from '../../shared/log.js';
import { newSignIn } from '../../shared/sessions/session.js';
import { checkPassword } from './console-identity.js';
import { SignInThrottle, signInLogIntervalMs } from './sign-in-throttle.js';

interface LocalConsoleSignIn {
  readonly kind: 'local';
  /** Asked on every request: an approver removed from the configuration is signed out at once. */
  readonly people: () => Promise<readonly ResolvedPerson[]>;
  /** The customers who may sign in to answer calls made for them; without it their pages answer 503. */
  readonly customers?: () => Promise<readonly ResolvedPerson[]>;
}

export interface LocalConsoleDeps extends ConsoleDeps {
  readonly signIn: LocalConsoleSignIn;
}

interface FormOptions {
  readonly csrf: string;
  readonly next: string;
  readonly error: string | null;
}

/** One password sign-in form: whose (its id field and the word for it), where it leads, and how it ends. */
interface PasswordForm {
  readonly who: 'approver' | 'customer';
  readonly people: () => Promise<readonly ResolvedPerson[]>;
  /** Where the form may lead after signing in; null when `next` names nowhere it may. */
  readonly next: (next: string | null | undefined) => string | null;
  readonly page: (request: SessionRequest, options: FormOptions) => string;
  /** Asked when `next` names nowhere (a customer's sign-in is always for one call). */
  readonly nowhere: (request: SessionRequest) => HttpResult;
  readonly signedIn: (request: SessionRequest, person: ResolvedPerson, next: string) => Promise<HttpResult>;
}

/** The GET and POST of a password sign-in page, throttled per id and per address in this process. */
const passwordRoute = (form: PasswordForm, path: string, clock: Clock, logger: Logger) => {
  const throttle = new SignInThrottle(clock);
  const log = form.who === 'approver' ? 'console sign-in' : 'customer sign-in';
  // A flood of guesses is one line a minute, not one per attempt.
  const warn = warnOncePerInterval(logger, clock, signInLogIntervalMs);

  /** A sign-in form with a fresh CSRF token, kept in the sign-in cookie it sets. */
  const freshForm = async (
    request: SessionRequest,
    statusCode: number,
    next: string,
    error: string | null,
  ): Promise<HttpResult> => {
    const pending = newSignIn(request.now());
    return request.page(statusCode, form.page(request, { csrf: pending.csrf, next, error }), {
      cookies: [await request.cookies.keep(pending)],
    });
  };

  const check = async (request: SessionRequest): Promise<HttpResult> => {
    const fields = request.form();
    const next = form.next(fields?.get('next'));
    if (next === null) return form.nowhere(request);
    const pending = await request.cookies.open('sign-in');
    if (pending === null || !request.fromThisConsole(fields, pending.csrf)) {
      return freshForm(request, 403, next, 'The sign-in form expired; please sign in again.');
    }
    const again = (statusCode: number, error: string, extra: { headers?: Record<string, string> } = {}) =>
      request.page(statusCode, form.page(request, { csrf: pending.csrf, next, error }), extra);
    // The id as checkPassword compares it; the address as the connection (not a header) gives it.
    const account = (fields.get(form.who) ?? '').trim().slice(0, 256);
    const address = request.event.requestContext.http.sourceIp;
    const waitMs = throttle.waitMs(account, address);
    if (waitMs > 0) {
      warn(`${log} throttled`, { [form.who]: account.slice(0, 64), address });
      return again(
        429,
        `Too many failed sign-ins for this ${form.who} id or from this address; nothing was checked. Try again in ${timeLeft(waitMs)}.`,
        { headers: { 'retry-after': String(Math.ceil(waitMs / 1000)) } },
      );
    }
    const people = await form.people();
    const checked = checkPassword(people, fields.get(form.who) ?? '', fields.get('password') ?? '');
    const person = checked.ok ? people.find((candidate) => candidate.id === checked.approver.id) : undefined;
    if (person === undefined) {
      throttle.failed(account, address);
      warn(`${log} refused`, { [form.who]: account.slice(0, 64), address });
      return again(401, `Wrong ${form.who} id or password.`);
    }
    throttle.succeeded(account);
    return form.signedIn(request, person, next);
  };

  const get = async (request: SessionRequest): Promise<HttpResult> => {
    const next = form.next(request.query.get('next'));
    return next === null ? form.nowhere(request) : freshForm(request, 200, next, null);
  };

  return {
    access: 'anyone' as const,
    path,
    methods: { GET: get, POST: check },
    otherwise: notAllowed('Sign in with the form.', 'anonymous'),
  };
};

const passwordSignIn = (
  people: () => Promise<readonly ResolvedPerson[]>,
  clock: Clock,
  logger: Logger,
): SignInStrategy => ({
  // Passwords keep no session elsewhere: signing out ends at the sign-in form.
  signedOut: async () => consolePaths.signIn,
  // The password again: the form leads back to the call, and its check is the new sign-in time.
  again: async (request, asked) =>
    request.redirect(`${consolePaths.signIn}?next=${encodeURIComponent(safeNext(asked.next))}`),
  current: async (approver) => {
    const person = (await people()).find((candidate) => candidate.id === approver.id);
    // The configuration names who they are now; the session keeps when and how they signed in.
    return person === undefined ? null : { ...approver, name: person.name, groups: person.groups };
  },
  routes: [
    passwordRoute(
      {
        who: 'approver',
        people,
        next: safeNext,
        page: (request, options) => signInPage(request.anonymous, options),
        // safeNext always names a console page (the inbox at worst): nothing to refuse.
        nowhere: (request) => request.redirect(consolePaths.signIn),
        // The password was checked just now: that is when this session's sign-in happened.
        signedIn: (request, person, next) =>
          signedIn(
            request,
            logger,
            { id: person.id, name: person.name, groups: person.groups, signedInAt: request.now(), acr: null },
            next,
          ),
      },
      consolePaths.signIn,
      clock,
      logger,
    ),
  ],
});

/** Customers sign in for one call each time, with the `customers:` of the configuration. */
const customerPasswordSignIn = (
  customers: () => Promise<readonly ResolvedPerson[]>,
  clock: Clock,
  logger: Logger,
): CustomerSignIn => ({
  current: async (customer) => {
    const person = (await customers()).find((candidate) => candidate.id === customer.id);
    return person === undefined ? null : { id: person.id, name: person.name };
  },
  routes: [
    passwordRoute(
      {
        who: 'customer',
        people: customers,
        next: customerNext,
        page: (request, options) => customerSignInPage({ customer: null, now: request.now() }, options),
        nowhere: (request) =>
          request.page(
            400,
            customerMessagePage(
              { customer: null, now: request.now() },
              'Open your link',
              'You sign in here for one request at a time: open the link the agent gave you.',
              'error',
            ),
          ),
        signedIn: (request, person, next) =>
          customerSignedIn(request, logger, { id: person.id, name: person.name }, next),
      },
      customerPaths.signIn,
      clock,
      logger,
    ),
  ],
});

/** The console function with local password sign-in (for approvers, and for customers when given). */
export const createConsoleFunction = (deps: LocalConsoleDeps) =>
  createConsole(
    deps,
    passwordSignIn(deps.signIn.people, deps.services.clock, deps.logger),
    deps.signIn.customers === undefined
      ? null
      : customerPasswordSignIn(deps.signIn.customers, deps.services.clock, deps.logger),
  );
