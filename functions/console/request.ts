// One request as the console's routes see it: where the console is served from, its cookies, its
// form, and answers already carrying the console's headers, so a route says only what it decides.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Approver } from '../../shared/approvals/approver.js';
import type { PageContext } from '../../shared/edge/console/pages.js';
import { approverOf, type Session, type SessionSigner } from '../../shared/sessions/session.js';
import type { SessionStore } from '../../shared/sessions/session-store.js';
import { requestOrigin } from '../commons/http-event.js';
import type { HttpResult } from '../commons/middleware.js';
import { type SessionCookies, sessionCookies } from './cookies.js';
import { readForm } from './form.js';
import { fromThisConsole } from './same-origin.js';
import { pageSecurityHeaders } from './security-headers.js';

export interface ConsoleRequest {
  readonly event: APIGatewayProxyEventV2;
  /** Upper case. */
  readonly method: string;
  /** Without trailing slashes. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** The console's public origin, without a trailing slash. */
  readonly base: string;
  readonly cookies: SessionCookies;
  readonly now: () => number;
  /** An HTML page that is never cached. */
  readonly page: (statusCode: number, body: string, extra?: Partial<HttpResult>) => HttpResult;
  /** 303 See Other, setting these cookies. */
  readonly redirect: (location: string, cookies?: readonly string[]) => HttpResult;
  readonly form: () => URLSearchParams | null;
  /** A form posted from a page of this console, with this CSRF token. */
  readonly fromThisConsole: (fields: URLSearchParams | null, token: string) => fields is URLSearchParams;
}

/** A request to a page: who is signed in, if anyone. */
export interface SessionRequest extends ConsoleRequest {
  readonly session: Session | null;
  readonly approver: Approver | null;
  /** The page context of whoever is signed in. */
  readonly context: PageContext;
  /** The page context of nobody (sign-in pages). */
  readonly anonymous: PageContext;
}

export interface ApproverRequest extends SessionRequest {
  readonly session: Session;
  readonly approver: Approver;
}

export interface RequestDeps {
  readonly signer: SessionSigner;
  /** The server's list of approvers' and customers' sessions. */
  readonly sessions: SessionStore;
  /** Public base URL; derived from the request when null. */
  readonly publicUrl: string | null;
  readonly now: () => number;
}

export const consoleRequest = (event: APIGatewayProxyEventV2, deps: RequestDeps): ConsoleRequest => {
  const base = (deps.publicUrl ?? requestOrigin(event)).replace(/\/+$/, '');
  const secure = base.startsWith('https://');
  return {
    event,
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath.replace(/\/+$/, '') || '/',
    query: new URLSearchParams(event.rawQueryString ?? ''),
    base,
    cookies: sessionCookies(event, { signer: deps.signer, sessions: deps.sessions, secure, now: deps.now }),
    now: deps.now,
    page: (statusCode, body, extra = {}) => ({
      statusCode,
      ...extra,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        ...pageSecurityHeaders(secure),
        ...(extra.headers ?? {}),
      },
      body,
    }),
    redirect: (location, cookies = []) => ({
      statusCode: 303,
      headers: { location, 'cache-control': 'no-store', ...pageSecurityHeaders(secure) },
      ...(cookies.length > 0 ? { cookies: [...cookies] } : {}),
      body: '',
    }),
    form: () => readForm(event),
    fromThisConsole: (fields, token): fields is URLSearchParams => fromThisConsole(event, base, fields, token),
  };
};

/**
 * Who the session cookie names, as the sign-in source knows them now (`current`: locally the
 * configuration is asked again, so a removed approver is out at once).
 */
export const withSession = async (
  request: ConsoleRequest,
  current: (approver: Approver) => Promise<Approver | null>,
): Promise<SessionRequest> => {
  const session = await request.cookies.open('session');
  const approver = session === null ? null : await current(approverOf(session));
  const now = request.now();
  return {
    ...request,
    session,
    approver,
    context: { approver, csrf: approver === null ? null : (session?.csrf ?? null), now },
    anonymous: { approver: null, csrf: null, now },
  };
};
