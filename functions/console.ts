// The approver console's Lambda (GET/POST /console/...): sign-in, the inbox of held calls an
// approver may decide, a page per call showing exactly the canonical arguments, and the decision;
// and the customer's pages (/customer/...), where a customer confirms a call made for them. This
// entry holds only OpenID Connect sign-ins (approvers', and customers' with a fresh authentication
// each time); the local password sign-ins are wired by the local runtime (infra/local/console.ts)
// and never ship in this bundle. Without a customer provider the customer pages answer 503.
import { DynamoDbSessionStore } from '../shared/adapters/dynamodb/console-sessions.js';
import { defaultKmsClient } from '../shared/adapters/kms-client.js';
import { KmsSessionSigner } from '../shared/adapters/kms-session-signer.js';
import { CustomerOidcSignIn, OidcSignIn } from '../shared/adapters/oidc-sign-in.js';
import { decisionServicesFor, documentClient } from './commons/aws-store.js';
import { customerOidcSettings, processConsoleEnvironment } from './commons/console-environment.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { serviceLogger } from './commons/logger.js';
import { functionMetrics, invocationMetrics } from './commons/metrics.js';
import { type ConsoleDeps, createConsole } from './console/app.js';
import { customerOidcSignIn } from './console/customer-oidc-sign-in.js';
import { oidcSignIn } from './console/oidc-sign-in.js';

export { contentSecurityPolicy } from './console/security-headers.js';

export interface ConsoleSignIn {
  readonly kind: 'oidc';
  readonly provider: OidcSignIn;
}

export interface ConsoleFunctionDeps extends ConsoleDeps {
  readonly signIn: ConsoleSignIn;
  /** Where customers sign in; null (or absent) leaves their pages answering 503. */
  readonly customerSignIn?: CustomerOidcSignIn | null;
}

export const createConsoleFunction = (deps: ConsoleFunctionDeps) =>
  createConsole(
    deps,
    oidcSignIn(deps.signIn.provider, deps.logger),
    deps.customerSignIn === undefined || deps.customerSignIn === null
      ? null
      : customerOidcSignIn(deps.customerSignIn, deps.logger),
  );

/** The Lambda entry point: OIDC sign-ins, sessions signed by the KMS HMAC key and kept in the table. */
export const handler = lazyHandler(() => {
  const environment = processConsoleEnvironment();
  const logger = serviceLogger('console');
  const customers = customerOidcSettings(environment);
  const metrics = functionMetrics();
  return createConsoleFunction({
    services: decisionServicesFor(environment, logger, metrics),
    metrics: invocationMetrics(metrics),
    signer: new KmsSessionSigner(defaultKmsClient, environment.SESSION_KEY_ID),
    // Any instance may answer any request: sessions are kept in the table, so signing out ends them everywhere.
    sessions: new DynamoDbSessionStore(documentClient(), environment.EXECUTIONS_TABLE),
    signIn: {
      kind: 'oidc',
      provider: new OidcSignIn({
        issuer: environment.OIDC_ISSUER,
        clientId: environment.OIDC_CLIENT_ID,
        idClaim: environment.OIDC_ID_CLAIM,
        groupsClaim: environment.OIDC_GROUPS_CLAIM,
        scopes: environment.OIDC_SCOPES,
        ...(environment.OIDC_LOGOUT_URL === undefined ? {} : { logoutUrl: environment.OIDC_LOGOUT_URL }),
      }),
    },
    customerSignIn: customers === null ? null : new CustomerOidcSignIn(customers),
    logger,
    publicUrl: environment.PUBLIC_URL ?? environment.API_URL ?? null,
  });
});
