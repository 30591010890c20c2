// The console as one Lambda handler: the route table behind the shared middleware stack, with the
// sign-in strategies it is given (approvers: OIDC in AWS, passwords only in the local runtime;
// customers: passwords in the local runtime, OIDC with a fresh authentication in AWS, and when
// none is configured their pages say so).
import type { Logger } from '@aws-lambda-powertools/logger';
import { messagePage } from '../../shared/edge/console/pages.js';
import type { SessionSigner } from '../../shared/sessions/session.js';
import type { SessionStore } from '../../shared/sessions/session-store.js';
import type { DecisionDeps } from '../../shared/use-cases/approver-decisions.js';
import type { InvocationMetrics } from '../commons/metrics.js';
import { type HttpHandler, withGatewayMiddleware } from '../commons/middleware.js';
import { withCustomer } from './customer-request.js';
import type { CustomerSignIn } from './customer-sign-in.js';
import { consoleRequest, withSession } from './request.js';
import { dispatch, type RouteTable } from './router.js';
import { consoleRoutes } from './routes.js';
import { pageSecurityHeaders } from './security-headers.js';
import type { SignInStrategy } from './sign-in.js';

export interface ConsoleDeps {
  readonly services: DecisionDeps;
  readonly signer: SessionSigner;
  /** Where approvers' and customers' sessions are kept, so signing out ends them for good. */
  readonly sessions: SessionStore;
  readonly logger: Logger;
  /** Public base URL; derived from the request when null. Read on every request. */
  readonly publicUrl: string | null;
  /** Flushed after every request (decisions and expiries seen here are counted). @default none */
  readonly metrics?: InvocationMetrics | null;
}

export const createConsole = (deps: ConsoleDeps, signIn: SignInStrategy, customerSignIn: CustomerSignIn | null) => {
  const now = () => deps.services.clock.now();
  const table: RouteTable = {
    routes: consoleRoutes(deps, signIn, customerSignIn),
    session: (request) => withSession(request, (approver) => signIn.current(approver)),
    customer: async (request) =>
      customerSignIn === null ? null : withCustomer(request, (customer) => customerSignIn.current(customer)),
  };
  const handle: HttpHandler = async (event) =>
    dispatch(
      table,
      consoleRequest(event, { signer: deps.signer, sessions: deps.sessions, publicUrl: deps.publicUrl, now }),
    );

  return withGatewayMiddleware(handle, {
    logger: deps.logger,
    metrics: deps.metrics ?? null,
    render: (statusCode, message) => ({
      statusCode,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        ...pageSecurityHeaders(false),
      },
      body: messagePage({ approver: null, csrf: null, now: Date.now() }, 'Something went wrong', message),
    }),
  });
};
