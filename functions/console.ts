// The approver console (GET/POST /console/...): sign-in, the inbox of held calls an approver may
// decide, a page per call showing exactly the canonical arguments, and the decision itself.
//
// Server-rendered HTML under a strict Content-Security-Policy (no script at all), a signed session
// cookie, and a CSRF token in every form. A decision is a POST carrying the CSRF token and the hash
// of the arguments shown; a GET never decides (mail scanners and chat previews open links).
import type { Logger } from '@aws-lambda-powertools/logger';
import { KMSClient } from '@aws-sdk/client-kms';
import { KmsSessionSigner } from '../shared/adapters/kms-session-signer.js';
import { OidcSignIn } from '../shared/adapters/oidc-sign-in.js';
import type { Approver } from '../shared/approvals/approver.js';
import type { ResolvedPerson } from '../shared/config/load.js';
import { checkPassword } from '../shared/console/identity.js';
import {
  consolePaths,
  executionPage,
  type Flash,
  inboxPage,
  messagePage,
  type PageContext,
  refusalMessages,
  signInPage,
  timeLeft,
} from '../shared/console/pages.js';
import {
  approverOf,
  decodeSession,
  encodeSession,
  newSession,
  newSignIn,
  type SessionSigner,
  safeEqual,
  sessionTtlMs,
  signInTtlMs,
} from '../shared/console/session.js';
import { icon, iconPath, stylesheet, stylesheetPath } from '../shared/console/style.js';
import { SignInThrottle } from '../shared/console/throttle.js';
import {
  type DecisionDeps,
  type DecisionRefusal,
  decidableBy,
  decide,
  mayDecide,
  viewHeldCall,
} from '../shared/use-cases/approver-decisions.js';
import { decisionServicesFor, serviceLogger } from './commons/aws.js';
import { processConsoleEnvironment } from './commons/environment.js';
import { eventBody, requestOrigin } from './commons/http-event.js';
import { type HttpHandler, type HttpResult, withGatewayMiddleware } from './commons/middleware.js';

export type ConsoleSignIn =
  | { readonly kind: 'local'; readonly people: () => Promise<readonly ResolvedPerson[]> }
  | { readonly kind: 'oidc'; readonly provider: OidcSignIn };

export interface ConsoleFunctionDeps {
  readonly services: DecisionDeps;
  readonly signer: SessionSigner;
  readonly signIn: ConsoleSignIn;
  readonly logger: Logger;
  /** Public base URL; derived from the request when null. */
  readonly publicUrl: string | null;
}

/** No script, no frames, no foreign anything: styles and forms from the console itself. */
export const contentSecurityPolicy =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const securityHeaders = (secure: boolean): Record<string, string> => ({
  'content-security-policy': contentSecurityPolicy,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: under it browsers send `Origin: null` even on same-origin form posts.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  ...(secure ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
});

const maxFormBytes = 16 * 1024;

/** What an operator needs from a failed sign-in: the library's code and the provider's error, not just a generic message. */
const signInFailure = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof Error)) return { message: String(error) };
  const detail = error as Error & { code?: unknown; error?: unknown; error_description?: unknown };
  return {
    message: error.message,
    ...(detail.code === undefined ? {} : { code: detail.code }),
    ...(detail.error === undefined ? {} : { provider_error: detail.error }),
    ...(detail.error_description === undefined ? {} : { provider_description: detail.error_description }),
    ...(error.cause instanceof Error ? { cause: error.cause.message } : {}),
  };
};
const assets = new Map([
  [stylesheetPath, { type: 'text/css; charset=utf-8', body: stylesheet }],
  [iconPath, { type: 'image/svg+xml', body: icon }],
]);
const executionPath = /^\/console\/executions\/([0-9a-fA-F-]{36})(\/decision)?$/;
const safeNext = (next: string | null | undefined): string =>
  next !== null && next !== undefined && /^\/console(\/[A-Za-z0-9/_.-]*)?$/.test(next) && !next.includes('..')
    ? next
    : consolePaths.home;

/** Outcomes shown after the redirect that follows a decision (a fixed list: nothing reflected). */
const doneFlashes: Record<string, Flash> = {
  approved: { kind: 'ok', text: 'Approved. The call runs now, once, with these arguments.' },
  rejected: { kind: 'ok', text: 'Rejected. Nothing ran; the agent was told.' },
};

const refusalStatus: Record<DecisionRefusal, number> = {
  not_found: 404,
  not_an_approver: 403,
  own_call: 403,
  already_decided: 409,
  expired: 409,
  arguments_changed: 409,
  customer_confirms: 409,
  invalid_note: 400,
};

export const createConsoleFunction = (deps: ConsoleFunctionDeps) => {
  const { services } = deps;
  const now = () => services.clock.now();
  // Failed password sign-ins, per approver id and per address, in this instance (local sign-in only).
  const throttle = new SignInThrottle(services.clock);

  const handle: HttpHandler = async (event) => {
    const base = (deps.publicUrl ?? requestOrigin(event)).replace(/\/+$/, '');
    const secure = base.startsWith('https://');
    const cookieNames = secure
      ? { session: '__Host-gateway_session', signIn: '__Host-gateway_sign_in' }
      : { session: 'gateway_session', signIn: 'gateway_sign_in' };
    const cookieOf = (name: string): string | undefined => {
      for (const cookie of event.cookies ?? []) {
        const index = cookie.indexOf('=');
        if (index > 0 && cookie.slice(0, index).trim() === name) return cookie.slice(index + 1).trim();
      }
      return undefined;
    };
    const setCookie = (name: string, value: string, maxAgeMs: number): string =>
      `${name}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
    const clearCookie = (name: string): string => setCookie(name, '', 0);

    const page = (statusCode: number, body: string, extra: Partial<HttpResult> = {}): HttpResult => ({
      statusCode,
      ...extra,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        ...securityHeaders(secure),
        ...(extra.headers ?? {}),
      },
      body,
    });
    const redirect = (location: string, cookies: string[] = []): HttpResult => ({
      statusCode: 303,
      headers: { location, 'cache-control': 'no-store', ...securityHeaders(secure) },
      ...(cookies.length > 0 ? { cookies } : {}),
      body: '',
    });

    const method = event.requestContext.http.method.toUpperCase();
    const path = event.rawPath.replace(/\/+$/, '') || '/';
    const query = new URLSearchParams(event.rawQueryString ?? '');

    // The console's own static files: named by their content, so cached for good.
    const asset = assets.get(path);
    if (asset !== undefined && (method === 'GET' || method === 'HEAD')) {
      return {
        statusCode: 200,
        headers: {
          'content-type': asset.type,
          'cache-control': 'public, max-age=31536000, immutable',
          'x-content-type-options': 'nosniff',
        },
        body: method === 'HEAD' ? '' : asset.body,
      };
    }

    // Who is signed in (locally, the configuration is asked again: a removed approver is out).
    const session = await decodeSession(deps.signer, cookieOf(cookieNames.session), 'session', now());
    let approver: Approver | null = session === null ? null : approverOf(session);
    if (approver !== null && deps.signIn.kind === 'local') {
      const current = (await deps.signIn.people()).find((person) => person.id === approver?.id);
      approver = current === undefined ? null : { id: current.id, name: current.name, groups: current.groups };
    }
    const context: PageContext = { approver, csrf: approver === null ? null : (session?.csrf ?? null), now: now() };
    const anonymous: PageContext = { approver: null, csrf: null, now: now() };

    const form = (): URLSearchParams | null => {
      const body = eventBody(event);
      if (body === undefined) return new URLSearchParams();
      if (body.length > maxFormBytes) return null;
      const type = (event.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      if (type !== 'application/x-www-form-urlencoded') return null;
      return new URLSearchParams(body.toString('utf8'));
    };
    /** A POST from a page of this console: same origin (when the browser says), and the session's token. */
    const sameOrigin = (): boolean => {
      const origin = event.headers.origin;
      const site = event.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
      // An opaque origin passes only when the browser itself says the request is same-origin.
      if (origin === 'null') return site === 'same-origin';
      return origin === undefined || origin === base;
    };
    /** A form posted from a page of this console: same origin, carrying the expected CSRF token. */
    const fromThisConsole = (fields: URLSearchParams | null, token: string): fields is URLSearchParams =>
      fields !== null && sameOrigin() && safeEqual(fields.get('csrf') ?? '', token);
    const forbidden = (text: string) => page(403, messagePage(context, 'Refused', text));

    // ---- sign-in and sign-out
    if (path === consolePaths.signIn) {
      const next = safeNext(query.get('next'));
      if (deps.signIn.kind === 'oidc') {
        if (method !== 'GET')
          return page(405, messagePage(anonymous, 'Not allowed', 'Use the sign-in link.'), {
            headers: { allow: 'GET' },
          });
        const started = await deps.signIn.provider.start(`${base}${consolePaths.callback}`);
        const pending = newSignIn(now(), { ...started.flow, next });
        return redirect(started.url, [
          setCookie(cookieNames.signIn, await encodeSession(deps.signer, pending), signInTtlMs),
        ]);
      }
      if (method === 'GET') {
        const pending = newSignIn(now());
        return page(200, signInPage(anonymous, { csrf: pending.csrf, next, error: null }), {
          cookies: [setCookie(cookieNames.signIn, await encodeSession(deps.signer, pending), signInTtlMs)],
        });
      }
      if (method !== 'POST')
        return page(405, messagePage(anonymous, 'Not allowed', 'Sign in with the form.'), {
          headers: { allow: 'GET, POST' },
        });
      const fields = form();
      const pending = await decodeSession(deps.signer, cookieOf(cookieNames.signIn), 'sign-in', now());
      if (pending === null || !fromThisConsole(fields, pending.csrf)) {
        const fresh = newSignIn(now());
        return page(
          403,
          signInPage(anonymous, {
            csrf: fresh.csrf,
            next: safeNext(fields?.get('next')),
            error: 'The sign-in form expired; please sign in again.',
          }),
          {
            cookies: [setCookie(cookieNames.signIn, await encodeSession(deps.signer, fresh), signInTtlMs)],
          },
        );
      }
      // The id as checkPassword compares it; the address as the connection (not a header) gives it.
      const account = (fields.get('approver') ?? '').trim().slice(0, 256);
      const address = event.requestContext.http.sourceIp;
      const waitMs = throttle.waitMs(account, address);
      if (waitMs > 0) {
        deps.logger.warn('console sign-in throttled', { approver: account.slice(0, 64), address });
        return page(
          429,
          signInPage(anonymous, {
            csrf: pending.csrf,
            next: safeNext(fields.get('next')),
            error: `Too many failed sign-ins for this approver id or from this address; nothing was checked. Try again in ${timeLeft(waitMs)}.`,
          }),
          { headers: { 'retry-after': String(Math.ceil(waitMs / 1000)) } },
        );
      }
      const checked = checkPassword(
        await deps.signIn.people(),
        fields.get('approver') ?? '',
        fields.get('password') ?? '',
      );
      if (!checked.ok) {
        throttle.failed(account, address);
        deps.logger.warn('console sign-in refused', { approver: account.slice(0, 64) });
        return page(
          401,
          signInPage(anonymous, {
            csrf: pending.csrf,
            next: safeNext(fields.get('next')),
            error: 'Wrong approver id or password.',
          }),
        );
      }
      throttle.succeeded(account);
      deps.logger.info('approver signed in', { approver: checked.approver.id });
      return redirect(safeNext(fields.get('next')), [
        setCookie(
          cookieNames.session,
          await encodeSession(deps.signer, newSession(checked.approver, now())),
          sessionTtlMs,
        ),
        clearCookie(cookieNames.signIn),
      ]);
    }
    if (path === consolePaths.callback && deps.signIn.kind === 'oidc') {
      const pending = await decodeSession(deps.signer, cookieOf(cookieNames.signIn), 'sign-in', now());
      if (method !== 'GET' || pending?.flow === undefined) {
        return page(
          400,
          messagePage(anonymous, 'Sign-in failed', 'The sign-in expired or did not start here; please sign in again.'),
        );
      }
      try {
        const callback = new URL(`${base}${path}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`);
        const signedIn = await deps.signIn.provider.finish(callback, pending.flow);
        deps.logger.info('approver signed in', { approver: signedIn.id });
        return redirect(safeNext(pending.flow.next), [
          setCookie(cookieNames.session, await encodeSession(deps.signer, newSession(signedIn, now())), sessionTtlMs),
          clearCookie(cookieNames.signIn),
        ]);
      } catch (error) {
        deps.logger.warn('console sign-in failed', { error: signInFailure(error) });
        return page(
          401,
          messagePage(
            anonymous,
            'Sign-in failed',
            'The identity provider did not confirm who you are; please sign in again.',
          ),
          { cookies: [clearCookie(cookieNames.signIn)] },
        );
      }
    }
    if (path === consolePaths.signOut) {
      if (method !== 'POST')
        return page(405, messagePage(context, 'Not allowed', 'Sign out with the button.'), {
          headers: { allow: 'POST' },
        });
      const fields = form();
      if (session !== null && !fromThisConsole(fields, session.csrf)) {
        return forbidden('The form did not come from this console.');
      }
      return redirect(consolePaths.signIn, [clearCookie(cookieNames.session)]);
    }

    // ---- everything else needs a signed-in approver
    const match = executionPath.exec(path);
    if (path !== consolePaths.home && match === null) {
      return page(404, messagePage(context, 'Not found', 'There is no such page in the console.'));
    }
    if (approver === null || session === null) {
      if (method === 'GET' || method === 'HEAD') {
        return redirect(`${consolePaths.signIn}?next=${encodeURIComponent(path)}`);
      }
      return page(
        401,
        messagePage(anonymous, 'Signed out', 'Your session ended, so nothing was done. Sign in and decide again.'),
      );
    }

    if (path === consolePaths.home) {
      if (method !== 'GET' && method !== 'HEAD')
        return page(405, messagePage(context, 'Not allowed', 'This page is read-only.'), { headers: { allow: 'GET' } });
      return page(200, inboxPage(context, await decidableBy(services, approver)));
    }

    const executionId = (match?.[1] ?? '').toLowerCase();
    const deciding = match?.[2] !== undefined;
    const shown = await viewHeldCall(services, approver, executionId);
    if (shown.kind === 'refused') {
      // Only the group the policy named (and not the requester) sees the arguments.
      return shown.reason === 'not_found'
        ? page(404, messagePage(context, 'Not found', 'There is no such call.'))
        : forbidden(refusalMessages.not_an_approver);
    }
    const { execution } = shown;
    const view = (flash: Flash) => ({ execution, refusal: shown.refusal, flash });

    if (!deciding) {
      if (method !== 'GET' && method !== 'HEAD')
        return page(405, messagePage(context, 'Not allowed', 'Decide with the buttons on this page.'), {
          headers: { allow: 'GET' },
        });
      const done = doneFlashes[query.get('done') ?? ''] ?? null;
      return page(200, executionPage(context, view(done)));
    }

    // ---- the decision: a POST from this console's page, never a GET
    if (method !== 'POST') {
      return page(
        405,
        messagePage(
          context,
          'Not allowed',
          'A decision is made with the buttons on the call page, never by opening a link.',
        ),
        {
          headers: { allow: 'POST' },
        },
      );
    }
    const fields = form();
    if (fields === null)
      return page(415, messagePage(context, 'Refused', 'The decision must be sent by the console form.'));
    if (!fromThisConsole(fields, session.csrf)) {
      deps.logger.warn('decision refused: CSRF check failed', { execution_id: executionId, approver: approver.id });
      return forbidden(
        'The form did not come from this console (its security token is missing or wrong); nothing was changed.',
      );
    }
    const outcome = fields.get('outcome');
    if (outcome !== 'approve' && outcome !== 'reject') {
      return page(400, executionPage(context, view({ kind: 'error', text: 'Choose approve or reject.' })));
    }
    const result = await decide(services, approver, {
      execution_id: executionId,
      outcome,
      arguments_hash: fields.get('arguments_hash') ?? '',
      note: fields.get('note'),
    });
    if (result.kind === 'decided') {
      return redirect(`${consolePaths.execution(executionId)}?done=${result.execution.status}`);
    }
    deps.logger.info('decision refused', { execution_id: executionId, approver: approver.id, reason: result.reason });
    const current = result.execution ?? execution;
    return page(
      refusalStatus[result.reason],
      executionPage(context, {
        execution: current,
        refusal: mayDecide(approver, current),
        flash: { kind: 'error', text: refusalMessages[result.reason] },
      }),
    );
  };

  return withGatewayMiddleware(handle, {
    logger: deps.logger,
    render: (statusCode, message) => ({
      statusCode,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...securityHeaders(false) },
      body: messagePage({ approver: null, csrf: null, now: Date.now() }, 'Something went wrong', message),
    }),
  });
};

let deployed: ReturnType<typeof createConsoleFunction> | undefined;

/** The Lambda entry point: OIDC sign-in, sessions signed by the KMS HMAC key. */
export const handler = (...args: Parameters<ReturnType<typeof createConsoleFunction>>) => {
  if (deployed === undefined) {
    const environment = processConsoleEnvironment();
    const logger = serviceLogger('console');
    deployed = createConsoleFunction({
      services: decisionServicesFor(environment, logger),
      signer: new KmsSessionSigner(new KMSClient({}), environment.SESSION_KEY_ID),
      signIn: {
        kind: 'oidc',
        provider: new OidcSignIn({
          issuer: environment.OIDC_ISSUER,
          clientId: environment.OIDC_CLIENT_ID,
          idClaim: environment.OIDC_ID_CLAIM,
          groupsClaim: environment.OIDC_GROUPS_CLAIM,
          scopes: environment.OIDC_SCOPES,
        }),
      },
      logger,
      publicUrl: environment.PUBLIC_URL ?? environment.API_URL ?? null,
    });
  }
  return deployed(...args);
};
