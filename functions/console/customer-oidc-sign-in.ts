// Customers signing in through OpenID Connect (the deployed console's way for them): the sign-in
// route sends the customer to the provider for a new authentication, with state, nonce, PKCE and
// the time it started kept in the signed sign-in cookie; the callback holds the provider's answer
// to all of them and opens a customer session for the one call the link named.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { CustomerOidcSignIn } from '../../shared/adapters/oidc-sign-in.js';
import { customerMessagePage } from '../../shared/edge/console/customer-pages.js';
import { customerPaths } from '../../shared/edge/console/paths.js';
import { newSignIn } from '../../shared/sessions/session.js';
import type { HttpResult } from '../commons/middleware.js';
import { type CustomerSignIn, customerNext, customerSignedIn } from './customer-sign-in.js';
import { signInFailure } from './oidc-sign-in.js';
import type { ConsoleRequest } from './request.js';
import type { Handler } from './router.js';

const message = (request: ConsoleRequest, statusCode: number, title: string, text: string, cookies: string[] = []) =>
  request.page(statusCode, customerMessagePage({ customer: null, now: request.now() }, title, text, 'error'), {
    cookies,
  });

const openYourLink = (request: ConsoleRequest): HttpResult =>
  message(
    request,
    400,
    'Open your link',
    'You sign in here for one request at a time: open the link the agent gave you.',
  );

const notStartedHere = (request: ConsoleRequest): HttpResult =>
  message(
    request,
    400,
    'Sign-in failed',
    'The sign-in expired or did not start here. Open the link the agent gave you again.',
  );

const onlyGet =
  (text: string): Handler<ConsoleRequest> =>
  async (request) =>
    message(request, 405, 'Not allowed', text);

export const customerOidcSignIn = (
  provider: Pick<CustomerOidcSignIn, 'start' | 'finish'>,
  logger: Logger,
): CustomerSignIn => ({
  // The provider vouched for the customer id at this sign-in; the session (one call, 15 minutes) carries it.
  current: async (customer) => customer,
  routes: [
    {
      access: 'static',
      path: customerPaths.signIn,
      methods: {
        GET: async (request) => {
          const next = customerNext(request.query.get('next'));
          if (next === null) return openYourLink(request);
          const now = request.now();
          const started = await provider.start(`${request.base}${customerPaths.callback}`, now);
          const pending = newSignIn(now, { ...started.flow, next });
          return request.redirect(started.url, [await request.cookies.keep(pending)]);
        },
      },
      otherwise: onlyGet('Open the link the agent gave you to sign in.'),
    },
    {
      access: 'static',
      path: customerPaths.callback,
      methods: {
        GET: async (request) => {
          const pending = await request.cookies.open('sign-in');
          // An approver's sign-in in progress leads into the console, never to a customer's call.
          const next = customerNext(pending?.flow?.next);
          if (pending?.flow === undefined || next === null) return notStartedHere(request);
          try {
            const query = request.event.rawQueryString ? `?${request.event.rawQueryString}` : '';
            const callback = new URL(`${request.base}${request.path}${query}`);
            const customer = await provider.finish(callback, pending.flow);
            return await customerSignedIn(request, logger, customer, next);
          } catch (error) {
            logger.warn('customer sign-in failed', { error: signInFailure(error) });
            return message(
              request,
              401,
              'Sign-in failed',
              'The identity provider did not confirm who you are for this request; nothing was changed. Open the link again and sign in.',
              [request.cookies.clear('sign-in')],
            );
          }
        },
      },
      // Only the provider's redirect (a GET) ends a sign-in.
      otherwise: async (request) => notStartedHere(request),
    },
  ],
});
