// The console's environment: how approvers and customers sign in, and the key that signs their
// sessions (environment.ts has what every function reads).
import * as z from 'zod';
import { ApprovalEnvironment, parseEnvironmentWith, processEnvironmentOf } from './environment.js';

/** What the console reads: how approvers sign in, and the key that signs their sessions. */
const ConsoleEnvironment = ApprovalEnvironment.extend({
  /** KMS HMAC key (HMAC_256) that signs console session cookies. */
  SESSION_KEY_ID: z.string().min(1),
  /** The OpenID Connect issuer approvers sign in with (the stack's Cognito user pool by default). */
  OIDC_ISSUER: z.url(),
  /** The console's client id at the issuer (a public client: PKCE, no secret). */
  OIDC_CLIENT_ID: z.string().min(1),
  /** The ID token claim naming the approver. */
  OIDC_ID_CLAIM: z.string().min(1).default('email'),
  /** The ID token claim listing the approver's groups. */
  OIDC_GROUPS_CLAIM: z.string().min(1).default('cognito:groups'),
  OIDC_SCOPES: z.string().min(1).default('openid email profile'),
  /**
   * The provider's logout endpoint when its discovery names none (Cognito's https://<domain>/logout),
   * sent client_id and logout_uri on sign-out; without it, discovery's end_session_endpoint.
   */
  OIDC_LOGOUT_URL: z.url().optional(),
  /**
   * The OpenID Connect issuer customers sign in with to confirm calls made for them (the stack's
   * customer pool by default); without it the customer pages answer 503. Given with its client id.
   */
  CUSTOMER_OIDC_ISSUER: z.url().optional(),
  /** The customer pages' client id at that issuer (a public client: PKCE, no secret). */
  CUSTOMER_OIDC_CLIENT_ID: z.string().min(1).optional(),
  /** The ID token claim holding the customer id agents act for (the Cognito pool's custom attribute). */
  CUSTOMER_OIDC_ID_CLAIM: z.string().min(1).default('custom:customer_id'),
  CUSTOMER_OIDC_SCOPES: z.string().min(1).default('openid'),
}).refine(
  (environment) =>
    (environment.CUSTOMER_OIDC_ISSUER === undefined) === (environment.CUSTOMER_OIDC_CLIENT_ID === undefined),
  {
    message: 'set CUSTOMER_OIDC_ISSUER and CUSTOMER_OIDC_CLIENT_ID together (or neither, leaving customer sign-in off)',
    path: ['CUSTOMER_OIDC_CLIENT_ID'],
  },
);
export type ConsoleEnvironment = z.infer<typeof ConsoleEnvironment>;

/** How customers sign in, from the console's environment; null when it names no customer provider. */
export const customerOidcSettings = (environment: ConsoleEnvironment) =>
  environment.CUSTOMER_OIDC_ISSUER === undefined || environment.CUSTOMER_OIDC_CLIENT_ID === undefined
    ? null
    : {
        issuer: environment.CUSTOMER_OIDC_ISSUER,
        clientId: environment.CUSTOMER_OIDC_CLIENT_ID,
        idClaim: environment.CUSTOMER_OIDC_ID_CLAIM,
        scopes: environment.CUSTOMER_OIDC_SCOPES,
      };

/** The console's environment from these variables (tests; the function reads its own once). */
export const parseConsoleEnvironment = (env: Readonly<Record<string, string | undefined>>): ConsoleEnvironment =>
  parseEnvironmentWith(ConsoleEnvironment, env);

export const processConsoleEnvironment = processEnvironmentOf(ConsoleEnvironment);
