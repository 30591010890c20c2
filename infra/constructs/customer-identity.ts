// Where customers sign in to confirm calls made for them when the organization brings no OIDC
// provider: a Cognito user pool of customers (invited by the organization, never self-registered),
// each carrying the customer id agents act for in a custom attribute only administrators set, and
// a public app client for the customer pages (authorization code with PKCE, no secret) on managed
// login, which honours the pages' `prompt=login`.
import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  CfnManagedLoginBranding,
  ClientAttributes,
  FeaturePlan,
  ManagedLoginVersion,
  Mfa,
  OAuthScope,
  StandardThreatProtectionMode,
  StringAttribute,
  UserPool,
  type UserPoolClient,
  UserPoolClientIdentityProvider,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { strongPasswords } from './agent-identity.js';
import { cognitoDomainPrefix } from './cognito-domain.js';

export interface CustomerIdentityProps {
  /** Where the identity provider sends the customer back with the code: the customer pages' callback. */
  readonly callbackUrl: string;
  /** Cognito domain prefix of the sign-in pages. @default "<stack name, cleaned>-customers-<8 hex digits of the stack id>" */
  readonly domainPrefix?: string;
}

export class CustomerIdentity extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly domain: UserPoolDomain;
  /** The OIDC issuer (discovery at /.well-known/openid-configuration). */
  readonly issuerUrl: string;
  /** Base URL of the Cognito sign-in pages. */
  readonly signInUrl: string;
  /** The ID token claim holding the customer id (the custom attribute, as Cognito names it there). */
  readonly idClaim = 'custom:customer_id';
  /** The scopes the customer pages ask for: `openid` puts every attribute the client reads in the ID token. */
  readonly scopes = 'openid';

  constructor(scope: Construct, id: string, props: CustomerIdentityProps) {
    super(scope, id);
    this.userPool = new UserPool(this, 'Pool', {
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true }, fullname: { required: false, mutable: true } },
      // The id agents act for (the agents' customer claim): set by the organization when it invites
      // the customer, and never by the customer (the client below cannot write it).
      customAttributes: { customer_id: new StringAttribute({ minLen: 1, maxLen: 256, mutable: true }) },
      // Customers confirm only calls made for them, each shown exactly; an authenticator app is
      // theirs to add, and risky sign-ins are challenged or blocked by the plus plan's protection.
      mfa: Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      featurePlan: FeaturePlan.PLUS,
      standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION,
      passwordPolicy: { ...strongPasswords, tempPasswordValidity: Duration.days(7) },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG2',
      reason:
        'Customers confirm only calls an agent made for them, each shown exactly, after a fresh sign-in every time; an authenticator app is theirs to add, and the plus plan threat protection challenges or blocks risky sign-ins.',
    });
    this.domain = this.userPool.addDomain('Domain', {
      cognitoDomain: {
        domainPrefix: props.domainPrefix ?? cognitoDomainPrefix(Stack.of(this), 'customers'),
      },
      managedLoginVersion: ManagedLoginVersion.NEWER_MANAGED_LOGIN,
    });
    this.client = this.userPool.addClient('CustomerPages', {
      userPoolClientName: 'customer-pages',
      // A public client: the customer pages prove the code exchange with PKCE, no secret to keep.
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true },
        // No aws.cognito.signin.user.admin: the access token cannot change the customer's attributes.
        scopes: [OAuthScope.OPENID],
        callbackUrls: [props.callbackUrl],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      readAttributes: new ClientAttributes()
        .withStandardAttributes({ email: true, emailVerified: true, fullname: true })
        .withCustomAttributes('customer_id'),
      // Cognito refuses a client that cannot write a required attribute (email); without the
      // aws.cognito.signin.user.admin scope the customer's tokens still change nothing.
      writeAttributes: new ClientAttributes().withStandardAttributes({ email: true, fullname: true }),
      // The pages read the ID token once at sign-in and keep their own 15-minute session.
      idTokenValidity: Duration.minutes(5),
      accessTokenValidity: Duration.minutes(5),
      refreshTokenValidity: Duration.hours(1),
    });
    // Managed login needs a style for the client; Cognito's own.
    new CfnManagedLoginBranding(this, 'Branding', {
      userPoolId: this.userPool.userPoolId,
      clientId: this.client.userPoolClientId,
      useCognitoProvidedValues: true,
    });
    this.issuerUrl = `https://cognito-idp.${Aws.REGION}.amazonaws.com/${this.userPool.userPoolId}`;
    this.signInUrl = this.domain.baseUrl();
  }
}
