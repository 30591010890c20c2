// Where approvers sign in to the console when the organization brings no OIDC provider: a Cognito
// user pool of people (invited, never self-registered) with an authenticator app as second factor,
// and a public app client for the console (authorization code with PKCE, no secret).
import { Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AccountRecovery,
  CfnUserPoolGroup,
  FeaturePlan,
  Mfa,
  OAuthScope,
  StandardThreatProtectionMode,
  UserPool,
  type UserPoolClient,
  UserPoolClientIdentityProvider,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { strongPasswords } from './agent-identity.js';
import { cognitoDomainPrefix } from './cognito-domain.js';

export interface ApproverIdentityProps {
  /** Where the identity provider sends the approver back with the code: the console's callback. */
  readonly callbackUrl: string;
  /** Where Cognito's logout sends the browser back to after signing out: the console's sign-in page. */
  readonly signOutUrl: string;
  /** Cognito domain prefix of the sign-in pages. @default "<stack name, cleaned>-approvers-<8 hex digits of the stack id>" */
  readonly domainPrefix?: string;
  /**
   * Groups to create, named as the policies' `@approvers("<group>")`; the ID token lists an
   * approver's groups in `cognito:groups`. @default none
   */
  readonly groups?: readonly string[];
}

export class ApproverIdentity extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly domain: UserPoolDomain;
  /** The OIDC issuer (discovery at /.well-known/openid-configuration). */
  readonly issuerUrl: string;
  /** Base URL of the Cognito sign-in pages. */
  readonly signInUrl: string;
  /** Cognito's logout endpoint (its discovery names no end_session_endpoint). */
  readonly logoutUrl: string;
  /** The ID token claims that name an approver and list their groups. */
  readonly idClaim = 'email';
  readonly groupsClaim = 'cognito:groups';
  readonly groups: readonly CfnUserPoolGroup[];

  constructor(scope: Construct, id: string, props: ApproverIdentityProps) {
    super(scope, id);
    this.userPool = new UserPool(this, 'Pool', {
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      // Approvers release held calls: a password alone must not be enough, and sign-ins are
      // screened for compromised credentials and risk (the plus plan's threat protection).
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      featurePlan: FeaturePlan.PLUS,
      standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION,
      passwordPolicy: { ...strongPasswords, tempPasswordValidity: Duration.days(3) },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    this.domain = this.userPool.addDomain('Domain', {
      cognitoDomain: {
        domainPrefix: props.domainPrefix ?? cognitoDomainPrefix(Stack.of(this), 'approvers'),
      },
    });
    this.client = this.userPool.addClient('Console', {
      userPoolClientName: 'approver-console',
      // A public client: the console proves the code exchange with PKCE, no secret to keep.
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL, OAuthScope.PROFILE],
        callbackUrls: [props.callbackUrl],
        logoutUrls: [props.signOutUrl],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      // The console reads the ID token once at sign-in and keeps its own session.
      idTokenValidity: Duration.minutes(5),
      accessTokenValidity: Duration.minutes(5),
      refreshTokenValidity: Duration.hours(1),
    });
    this.groups = (props.groups ?? []).map(
      (groupName) =>
        new CfnUserPoolGroup(this, `Group-${groupName}`, {
          userPoolId: this.userPool.userPoolId,
          groupName,
          description: `Approvers named by @approvers("${groupName}")`,
        }),
    );
    this.issuerUrl = `https://cognito-idp.${Aws.REGION}.amazonaws.com/${this.userPool.userPoolId}`;
    this.signInUrl = this.domain.baseUrl();
    this.logoutUrl = `${this.signInUrl}/logout`;
  }
}
