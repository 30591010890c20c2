// The approver console's function and the KMS HMAC key that signs its session cookies. Approvers
// (and, on the customer pages the function also serves, customers) sign in through OpenID Connect;
// the console keeps its own sessions, so its routes carry no API Gateway authorizer.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { apiFunctionTimeoutSeconds } from '../../shared/invoke/time-budget.js';
import { GatewayFunction } from './gateway-function.js';

export interface ConsoleSignIn {
  /** The OpenID Connect issuer URL. */
  readonly issuer: string;
  /** The console's client id there: a public client (code flow with PKCE, no secret). */
  readonly clientId: string;
  /** The ID token claim naming the approver. */
  readonly idClaim: string;
  /** The ID token claim listing the approver's groups. */
  readonly groupsClaim: string;
  /** @default 'openid email profile' */
  readonly scopes?: string;
  /**
   * The logout endpoint when the issuer's discovery names no end_session_endpoint (Cognito's
   * `https://<domain>/logout`). @default discovery's end_session_endpoint
   */
  readonly logoutUrl?: string;
}

/** Where customers sign in to confirm calls made for them: an OIDC provider asked for a fresh login. */
export interface CustomerPagesSignIn {
  /** The OpenID Connect issuer URL. */
  readonly issuer: string;
  /** The customer pages' client id there: a public client (code flow with PKCE, no secret). */
  readonly clientId: string;
  /** The ID token claim holding the customer id agents act for. */
  readonly idClaim: string;
  /** @default 'openid' */
  readonly scopes?: string;
}

export interface ApproverConsoleProps {
  /** Tables, data key, state machine and URLs, as the held-call steps function reads them. */
  readonly environment: Record<string, string>;
  readonly signIn: ConsoleSignIn;
  /** How customers sign in; without it the customer pages answer 503. @default none */
  readonly customerSignIn?: CustomerPagesSignIn;
}

export class ApproverConsole extends Construct {
  readonly console: GatewayFunction;
  /** Signs and verifies session cookies; the key never leaves KMS. */
  readonly sessionKey: Key;

  constructor(scope: Construct, id: string, props: ApproverConsoleProps) {
    super(scope, id);
    // HMAC keys have no automatic rotation; replacing the key only signs every approver out.
    this.sessionKey = new Key(this, 'SessionKey', {
      description: 'Approval Gateway: signs approver console sessions',
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    this.console = new GatewayFunction(this, 'Console', {
      entry: 'console.ts',
      description: 'Approval Gateway approver console',
      // Behind API Gateway, which answers within 30 s.
      timeoutSeconds: apiFunctionTimeoutSeconds,
      // It reads calls and hands decisions over; it never decides a policy, so Cedar stays out.
      environment: {
        ...props.environment,
        SESSION_KEY_ID: this.sessionKey.keyArn,
        OIDC_ISSUER: props.signIn.issuer,
        OIDC_CLIENT_ID: props.signIn.clientId,
        OIDC_ID_CLAIM: props.signIn.idClaim,
        OIDC_GROUPS_CLAIM: props.signIn.groupsClaim,
        ...(props.signIn.scopes === undefined ? {} : { OIDC_SCOPES: props.signIn.scopes }),
        ...(props.signIn.logoutUrl === undefined ? {} : { OIDC_LOGOUT_URL: props.signIn.logoutUrl }),
        ...(props.customerSignIn === undefined
          ? {}
          : {
              CUSTOMER_OIDC_ISSUER: props.customerSignIn.issuer,
              CUSTOMER_OIDC_CLIENT_ID: props.customerSignIn.clientId,
              CUSTOMER_OIDC_ID_CLAIM: props.customerSignIn.idClaim,
              ...(props.customerSignIn.scopes === undefined
                ? {}
                : { CUSTOMER_OIDC_SCOPES: props.customerSignIn.scopes }),
            }),
      },
    });
    this.sessionKey.grant(this.console.role, 'kms:GenerateMac', 'kms:VerifyMac');
  }
}
