// Where agents' tokens come from when no outside OIDC issuer is configured: a Cognito user pool
// whose app clients are agents (OAuth client credentials), each token scoped to the gateway.
import { Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  FeaturePlan,
  OAuthScope,
  ResourceServerScope,
  UserPool,
  type UserPoolClient,
  UserPoolResourceServer,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { cognitoDomainPrefix } from './cognito-domain.js';

export interface AgentIdentityProps {
  /** Cognito domain prefix for the token endpoint. @default "<stack name, cleaned>-agents-<8 hex digits of the stack id>" */
  readonly domainPrefix?: string;
  /** Agents (app clients) to create now; more can be added later. @default ['demo-agent'] */
  readonly agentNames?: readonly string[];
}

/** The password rules of the stack's user pools (cdk-nag AwsSolutions-COG1 and then some). */
export const strongPasswords = {
  minLength: 14,
  requireDigits: true,
  requireLowercase: true,
  requireUppercase: true,
  requireSymbols: true,
} as const;

export class AgentIdentity extends Construct {
  readonly userPool: UserPool;
  readonly issuerUrl: string;
  readonly clients: readonly UserPoolClient[];
  readonly tokenUrl: string;
  /** The scope an agent's token must carry. */
  readonly scope: string;

  constructor(scope: Construct, id: string, props: AgentIdentityProps = {}) {
    super(scope, id);
    this.userPool = new UserPool(this, 'Pool', {
      selfSignUpEnabled: false,
      // No person signs in here: agents use client credentials, which MFA and threat protection
      // (the PLUS plan) do not cover.
      featurePlan: FeaturePlan.ESSENTIALS,
      passwordPolicy: strongPasswords,
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    const invoke = new ResourceServerScope({ scopeName: 'invoke', scopeDescription: 'Call tools through the gateway' });
    const server = new UserPoolResourceServer(this, 'Gateway', {
      userPool: this.userPool,
      identifier: 'approval-gateway',
      scopes: [invoke],
    });
    const domain = this.userPool.addDomain('Domain', {
      cognitoDomain: {
        domainPrefix: props.domainPrefix ?? cognitoDomainPrefix(Stack.of(this), 'agents'),
      },
    });
    this.scope = 'approval-gateway/invoke';
    this.clients = (props.agentNames ?? ['demo-agent']).map((name) =>
      this.userPool.addClient(`Agent-${name}`, {
        userPoolClientName: name,
        generateSecret: true,
        oAuth: {
          flows: { clientCredentials: true },
          scopes: [OAuthScope.resourceServer(server, invoke)],
        },
        accessTokenValidity: Duration.hours(1),
      }),
    );
    this.issuerUrl = `https://cognito-idp.${Aws.REGION}.amazonaws.com/${this.userPool.userPoolId}`;
    this.tokenUrl = `${domain.baseUrl()}/oauth2/token`;
  }
}
