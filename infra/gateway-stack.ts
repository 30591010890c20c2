// The Approval Gateway stack: the agents' API, the handler functions and the executions table.
import { CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { configTable, executionsTable } from '../shared/adapters/dynamodb/tables.js';
import { AgentIdentity } from './constructs/agent-identity.js';
import { GatewayFunction } from './constructs/gateway-function.js';
import { GatewayTable } from './constructs/gateway-table.js';
import { McpApi } from './constructs/mcp-api.js';

export interface AgentAuthorizationProps {
  /** OIDC issuer URL of the agents' tokens. */
  readonly issuer: string;
  /** Accepted audiences (or client ids). */
  readonly audience: readonly string[];
  /** Claim naming the agent. @default 'sub' */
  readonly agentClaim?: string;
  /** Claim listing the agent's groups. @default 'groups' */
  readonly groupsClaim?: string;
  /** Claim naming the customer an outside agent acts for. @default 'customer_id' */
  readonly customerClaim?: string;
  /** OAuth scopes an agent's token must carry. @default none */
  readonly requiredScopes?: readonly string[];
}

export interface GatewayStackProps extends StackProps {
  /** Where agents' tokens come from. @default a Cognito user pool whose app clients are agents */
  readonly agentAuthorization?: AgentAuthorizationProps;
  /** Public base URL when the API sits behind a custom domain. @default the API's own URL */
  readonly publicUrl?: string;
  /** Browser origins (host names) allowed to call the MCP endpoint. @default none */
  readonly allowedOrigins?: readonly string[];
}

export class GatewayStack extends Stack {
  constructor(scope: Construct, id: string, props: GatewayStackProps = {}) {
    super(scope, id, props);

    const store = new GatewayTable(this, 'Executions', { definition: executionsTable });
    const configuration = new GatewayTable(this, 'Config', { definition: configTable });
    // Encrypts secret argument values at rest (envelope encryption, data keys from KMS).
    const dataKey = new Key(this, 'DataKey', {
      description: 'Approval Gateway: secret argument values of executions',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    let authorization: Required<AgentAuthorizationProps>;
    if (props.agentAuthorization === undefined) {
      const identity = new AgentIdentity(this, 'AgentIdentity');
      authorization = {
        issuer: identity.issuerUrl,
        audience: identity.clients.map((client) => client.userPoolClientId),
        agentClaim: 'client_id',
        groupsClaim: 'groups',
        customerClaim: 'customer_id',
        requiredScopes: [identity.scope],
      };
      new CfnOutput(this, 'AgentTokenUrl', {
        value: identity.tokenUrl,
        description: 'OAuth token endpoint for agents',
      });
      new CfnOutput(this, 'AgentScope', { value: identity.scope, description: 'Scope an agent token must request' });
      const noPeopleSignIn = 'No person signs in to this pool: agents authenticate with OAuth client credentials';
      Validations.of(identity.userPool).acknowledge({
        id: 'AwsSolutions-COG2',
        reason: `${noPeopleSignIn}, to which MFA does not apply.`,
      });
      Validations.of(identity.userPool).acknowledge({
        id: 'AwsSolutions-COG8',
        reason: `${noPeopleSignIn}; the plus plan's threat protection covers user sign-ins only.`,
      });
    } else {
      authorization = {
        agentClaim: 'sub',
        groupsClaim: 'groups',
        customerClaim: 'customer_id',
        requiredScopes: [],
        ...props.agentAuthorization,
      };
    }

    const environment = {
      EXECUTIONS_TABLE: store.table.tableName,
      CONFIG_TABLE: configuration.table.tableName,
      DATA_KEY_ID: dataKey.keyArn,
      AGENT_CLAIM: authorization.agentClaim,
      GROUPS_CLAIM: authorization.groupsClaim,
      CUSTOMER_CLAIM: authorization.customerClaim,
      ALLOWED_ORIGINS: (props.allowedOrigins ?? []).join(','),
      AUTHORIZATION_SERVERS: authorization.issuer,
      ...(props.publicUrl === undefined ? {} : { PUBLIC_URL: props.publicUrl }),
    };
    const mcp = new GatewayFunction(this, 'Mcp', {
      entry: 'mcp.ts',
      description: 'Approval Gateway MCP endpoint',
      cedar: true,
      environment,
    });
    // Exactly the calls the execution store makes, on the table and its indexes.
    store.table.grant(mcp.role, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query');
    // The deployed configuration is read, never written, by the functions (config:push writes it).
    configuration.table.grant(mcp.role, 'dynamodb:GetItem');
    dataKey.grant(mcp.role, 'kms:GenerateDataKey', 'kms:Decrypt');
    const metadata = new GatewayFunction(this, 'ResourceMetadata', {
      entry: 'resource-metadata.ts',
      description: 'Approval Gateway OAuth protected-resource metadata',
      timeoutSeconds: 5,
      memoryMiB: 256,
      environment: {
        AUTHORIZATION_SERVERS: environment.AUTHORIZATION_SERVERS,
        ...(props.publicUrl === undefined ? {} : { PUBLIC_URL: props.publicUrl }),
      },
    });

    const api = new McpApi(this, 'AgentApi', {
      mcpFunction: mcp.function,
      metadataFunction: metadata.function,
      jwtIssuer: authorization.issuer,
      jwtAudience: authorization.audience,
      requiredScopes: authorization.requiredScopes,
      allowedOrigins: props.allowedOrigins ?? [],
    });
    new CfnOutput(this, 'McpUrl', { value: `${api.url}/mcp`, description: 'MCP endpoint for agents' });
    new CfnOutput(this, 'ConfigTable', {
      value: configuration.table.tableName,
      description: 'Push the configuration here: npm run config:push -- --table <this>',
    });

    Validations.of(mcp.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${store.tableLogicalId}.Arn>/index/*]`,
      reason: "Per-agent listings query the executions table's own indexes; the grant covers exactly those.",
    });
    for (const route of api.publicRoutes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'OAuth protected-resource metadata is public by design (RFC 9728): clients read it before they hold a token.',
      });
    }
  }
}
