// The console as a table of routes: each names its path, what it needs (nothing, a session read,
// a signed-in approver, or a customer signed in for the call it names) and one small function per
// method. The rules every route shares live here once: 404 for an unknown path, a route's own
// answer to any other method (by default 405 with Allow), and the way a signed-out visitor (or a
// customer without a session for this call) is sent to sign in.
import { customerMessagePage } from '../../shared/edge/console/customer-pages.js';
import { consolePaths, messagePage } from '../../shared/edge/console/pages.js';
import { customerPaths } from '../../shared/edge/console/paths.js';
import type { HttpResult } from '../commons/middleware.js';
import type { CustomerRequest } from './customer-request.js';
import type { ApproverRequest, ConsoleRequest, SessionRequest } from './request.js';

type Method = 'GET' | 'HEAD' | 'POST';

export interface Matched {
  /** The path's named groups (for a pattern). */
  readonly params: Readonly<Record<string, string>>;
  /** The methods the route answers, for an Allow header (HEAD goes without saying). */
  readonly allow: string;
}

export type Handler<R> = (request: R, matched: Matched) => Promise<HttpResult>;

interface RouteOf<R> {
  /** The exact path, or a pattern with named groups. */
  readonly path: string | RegExp;
  /** HEAD is listed where it is answered (as a GET whose body nobody reads). */
  readonly methods: Partial<Record<Method, Handler<R>>>;
  /** Any other method; without it, the route is not there for other methods (404). */
  readonly otherwise?: Handler<R>;
}

export type Route =
  /** Served before any cookie is read (the stylesheet and the icon). */
  | ({ readonly access: 'static' } & RouteOf<ConsoleRequest>)
  /** Open to anyone; the page shows who is signed in. */
  | ({ readonly access: 'anyone' } & RouteOf<SessionRequest>)
  /** Only for a signed-in approver. */
  | ({ readonly access: 'approver' } & RouteOf<ApproverRequest>)
  /** Only for a customer whose session was signed in for the call the path names (its `id`). */
  | ({ readonly access: 'customer' } & RouteOf<CustomerRequest>);

/** The 405 page, with the route's Allow header and a sentence on how the page is used. */
export const notAllowed =
  (text: string, as: 'signed-in' | 'anonymous' = 'signed-in'): Handler<SessionRequest> =>
  async (request, { allow }) =>
    request.page(405, messagePage(as === 'anonymous' ? request.anonymous : request.context, 'Not allowed', text), {
      headers: { allow },
    });

const methodOf = (method: string): Method | null =>
  method === 'GET' || method === 'HEAD' || method === 'POST' ? method : null;

const matchOf = (route: Route, path: string): Readonly<Record<string, string>> | null => {
  if (typeof route.path === 'string') return route.path === path ? {} : null;
  const found = route.path.exec(path);
  return found === null ? null : { ...found.groups };
};

const handlerOf = <R>(route: RouteOf<R>, method: string): Handler<R> | undefined => {
  const known = methodOf(method);
  return (known === null ? undefined : route.methods[known]) ?? route.otherwise;
};

/** A visitor without a session: a page read is sent to sign in (and back), anything else is refused. */
const signedOut = (request: SessionRequest): HttpResult =>
  request.method === 'GET' || request.method === 'HEAD'
    ? request.redirect(`${consolePaths.signIn}?next=${encodeURIComponent(request.path)}`)
    : request.page(
        401,
        messagePage(
          request.anonymous,
          'Signed out',
          'Your session ended, so nothing was done. Sign in and decide again.',
        ),
      );

/**
 * A customer without a session for this call: a page read is sent to sign in (again) and back;
 * anything else is refused. An approver's session never counts here.
 */
const customerSignedOut = (request: ConsoleRequest, executionId: string): HttpResult =>
  request.method === 'GET' || request.method === 'HEAD'
    ? request.redirect(`${customerPaths.signIn}?next=${encodeURIComponent(customerPaths.call(executionId))}`)
    : request.page(
        401,
        customerMessagePage(
          { customer: null, now: request.now() },
          'Signed out',
          'You are not signed in for this request, so nothing was done. Open the link again and sign in.',
          'error',
        ),
      );

export interface RouteTable {
  readonly routes: readonly Route[];
  /** Reads the session of a request (for every route but the static ones). */
  readonly session: (request: ConsoleRequest) => Promise<SessionRequest>;
  /** Reads the customer session of a request (customer routes only); null without a genuine one. */
  readonly customer: (request: ConsoleRequest) => Promise<CustomerRequest | null>;
}

const notFound = async (table: RouteTable, request: ConsoleRequest): Promise<HttpResult> => {
  const visitor = await table.session(request);
  return visitor.page(404, messagePage(visitor.context, 'Not found', 'There is no such page in the console.'));
};

export const dispatch = async (table: RouteTable, request: ConsoleRequest): Promise<HttpResult> => {
  for (const route of table.routes) {
    const params = matchOf(route, request.path);
    if (params === null) continue;
    const matched = {
      params,
      allow: Object.keys(route.methods)
        .filter((method) => method !== 'HEAD')
        .join(', '),
    };
    switch (route.access) {
      case 'static': {
        const handler = handlerOf(route, request.method);
        return handler === undefined ? notFound(table, request) : handler(request, matched);
      }
      case 'anyone': {
        const handler = handlerOf(route, request.method);
        return handler === undefined ? notFound(table, request) : handler(await table.session(request), matched);
      }
      case 'approver': {
        // Signed out is told before anything else, whatever the method.
        const visitor = await table.session(request);
        const { approver, session } = visitor;
        if (approver === null || session === null) return signedOut(visitor);
        const handler = handlerOf(route, request.method);
        return handler === undefined ? notFound(table, request) : handler({ ...visitor, approver, session }, matched);
      }
      case 'customer': {
        // A customer session opens only the call it was signed in for; any other call signs in afresh.
        const executionId = (params.id ?? '').toLowerCase();
        const customer = await table.customer(request);
        if (customer === null || customer.call !== executionId) return customerSignedOut(request, executionId);
        const handler = handlerOf(route, request.method);
        return handler === undefined ? notFound(table, request) : handler(customer, matched);
      }
    }
  }
  return notFound(table, request);
};
