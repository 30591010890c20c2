// The approver console's Lambda (GET/POST /console/...): sign-in, the inbox of held calls an
// approver may decide, a page per call showing exactly the canonical arguments, and the decision.
// This entry holds only the OpenID Connect sign-in; the local password sign-in is wired by the
// local runtime (infra/local/console.ts) and never ships in this bundle. Customers have no sign-in
// here yet: their pages (/customer/...) answer 503, saying so.
import { KMSClient } from '@aws-sdk/client-kms';
import { KmsSessionSigner } from '../shared/adapters/kms-session-signer.js';
import { OidcSignIn } from '../shared/adapters/oidc-sign-in.js';
import { decisionServicesFor } from './commons/aws-store.js';
import { processConsoleEnvironment } from './commons/environment.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { serviceLogger } from './commons/logger.js';
import { type ConsoleDeps, createConsole } from './console/app.js';
import { oidcSignIn } from './console/oidc-sign-in.js';

export { contentSecurityPolicy } from './console/security-headers.js';

export interface ConsoleSignIn {
  readonly kind: 'oidc';
  readonly provider: OidcSignIn;
}

export interface ConsoleFunctionDeps extends ConsoleDeps {
  readonly signIn: ConsoleSignIn;
}

export const createConsoleFunction = (deps: ConsoleFunctionDeps) =>
  createConsole(deps, oidcSignIn(deps.signIn.provider, deps.logger), null);

/** The Lambda entry point: OIDC sign-in, sessions signed by the KMS HMAC key. */
export const handler = lazyHandler(() => {
  const environment = processConsoleEnvironment();
  const logger = serviceLogger('console');
  return createConsoleFunction({
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
});
