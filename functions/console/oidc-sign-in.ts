// Signing in through OpenID Connect (the deployed console's only way in): the sign-in route sends
// the approver to the provider with state, nonce and PKCE kept in a signed cookie, and the callback
// holds the provider's answer to them before a session is made.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { OidcSignIn } from '../../shared/adapters/oidc-sign-in.js';
import { consolePaths, messagePage } from '../../shared/edge/console/pages.js';
import { errorText } from '../../shared/errors.js';
import { newSignIn } from '../../shared/sessions/session.js';
import type { HttpResult } from '../commons/middleware.js';
import type { SessionRequest } from './request.js';
import { notAllowed } from './router.js';
import { type SignInStrategy, safeNext, signedIn } from './sign-in.js';

/** What an operator needs from a failed sign-in: the library's code and the provider's error, not just a generic message. */
export const signInFailure = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof Error)) return { message: String(error) };
  const detail = (name: string): unknown => Reflect.get(error, name);
  return {
    message: error.message,
    ...(detail('code') === undefined ? {} : { code: detail('code') }),
    ...(detail('error') === undefined ? {} : { provider_error: detail('error') }),
    ...(detail('error_description') === undefined ? {} : { provider_description: detail('error_description') }),
    ...(error.cause === undefined ? {} : { cause: errorText(error.cause) }),
  };
};

export const oidcSignIn = (
  provider: Pick<OidcSignIn, 'start' | 'startAgain' | 'finish' | 'signOutUrl'>,
  logger: Logger,
): SignInStrategy => ({
  // The provider vouched for the groups when the session began; the session carries them.
  current: async (approver) => approver,
  signedOut: async (base) => {
    const back = `${base}${consolePaths.signIn}`;
    try {
      return (await provider.signOutUrl(back)) ?? back;
    } catch (error) {
      // Discovery failed: the console's own session is gone all the same.
      logger.warn('the identity provider could not be asked to sign out', { error: signInFailure(error) });
      return back;
    }
  },
  again: async (request, asked) => {
    const started = await provider.startAgain(`${request.base}${consolePaths.callback}`, request.now(), {
      // Without @reauth (a call that names sign-in classes only), any new authentication will do.
      maxAgeS: asked.maxAgeMs === null ? 0 : Math.floor(asked.maxAgeMs / 1000),
      acrValues: asked.acr,
    });
    const pending = newSignIn(request.now(), { ...started.flow, next: safeNext(asked.next) });
    return request.redirect(started.url, [await request.cookies.keep(pending)]);
  },
  routes: [
    {
      access: 'anyone',
      path: consolePaths.signIn,
      methods: {
        GET: async (request) => {
          const next = safeNext(request.query.get('next'));
          const started = await provider.start(`${request.base}${consolePaths.callback}`);
          const pending = newSignIn(request.now(), { ...started.flow, next });
          return request.redirect(started.url, [await request.cookies.keep(pending)]);
        },
      },
      otherwise: notAllowed('Use the sign-in link.', 'anonymous'),
    },
    {
      access: 'anyone',
      path: consolePaths.callback,
      methods: {
        GET: async (request) => {
          const pending = await request.cookies.open('sign-in');
          if (pending?.flow === undefined) return notStartedHere(request);
          try {
            const query = request.event.rawQueryString ? `?${request.event.rawQueryString}` : '';
            const callback = new URL(`${request.base}${request.path}${query}`);
            const approver = await provider.finish(callback, pending.flow);
            return await signedIn(request, logger, approver, pending.flow.next);
          } catch (error) {
            logger.warn('console sign-in failed', { error: signInFailure(error) });
            return request.page(
              401,
              messagePage(
                request.anonymous,
                'Sign-in failed',
                'The identity provider did not confirm who you are; please sign in again.',
              ),
              { cookies: [request.cookies.clear('sign-in')] },
            );
          }
        },
      },
      // Only the provider's redirect (a GET) ends a sign-in.
      otherwise: async (request) => notStartedHere(request),
    },
  ],
});

const notStartedHere = (request: SessionRequest): HttpResult =>
  request.page(
    400,
    messagePage(
      request.anonymous,
      'Sign-in failed',
      'The sign-in expired or did not start here; please sign in again.',
    ),
  );
