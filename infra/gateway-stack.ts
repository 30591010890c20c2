// The Approval Gateway stack: the agents' API, the handler functions and the executions table,
// and the staff-approval lifecycle (state machine, held-call steps and reconciler functions, the approver
// console with its sign-in and the customer pages with theirs, and the bus held-call notices go out on),
// and, when asked for, the gRPC transport as a container service running the same code.
//
// Long: the one place where the concerns (each its own construct) are wired and granted to each other.
import { CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { configTable, executionsTable } from '../shared/adapters/dynamodb/tables.js';
import { apiFunctionTimeoutSeconds } from '../shared/invoke/time-budget.js';
import { AgentIdentity } from './constructs/agent-identity.js';
import { ApprovalStateMachine } from './constructs/approval-state-machine.js';
import { ApproverConsole, type ConsoleSignIn, type CustomerPagesSignIn } from './constructs/approver-console.js';
import { ApproverIdentity } from './constructs/approver-identity.js';
import { CallToolChannel } from './constructs/call-tool-channel.js';
import { ConfigBundles } from './constructs/config-bundles.js';
import { CustomerIdentity } from './constructs/customer-identity.js';
import { EmailNotices } from './constructs/email-notices.js';
import { GatewayFunction } from './constructs/gateway-function.js';
import { GatewayTable } from './constructs/gateway-table.js';
import { GrpcService, type GrpcServiceSettings } from './constructs/grpc-service.js';
import { McpApi } from './constructs/mcp-api.js';
import { Operations } from './constructs/operations.js';
import { SystemSecrets } from './constructs/system-secrets.js';

export interface AgentAuthorizationProps {
  /** OIDC issuer URL of the agents' tokens. */
  readonly issuer: string;
  /** Accepted audiences (or client ids). @default none: then give requiredScopes */
  readonly audience?: readonly string[];
  /** Claim naming the agent: the subject the configuration's `agents:` entries list. @default 'sub' */
  readonly agentClaim?: string;
  /** Claim an agent no entry lists takes its groups from. @default none: such an agent has no groups */
  readonly groupsClaim?: string;
  /** Claim an agent no entry lists takes its customer from. @default none: such an agent has no customer */
  readonly customerClaim?: string;
  /** OAuth scopes of which an agent's token must carry one. @default none: then give an audience */
  readonly requiredScopes?: readonly string[];
}

export interface ApproverSignInProps {
  /** OIDC issuer URL approvers sign in with. */
  readonly issuer: string;
  /**
   * The console's client id there: a public client (authorization code with PKCE, no secret)
   * whose redirect URI is `<base URL>/console/callback`.
   */
  readonly clientId: string;
  /** ID token claim naming the approver. @default 'email' */
  readonly idClaim?: string;
  /** ID token claim listing the approver's groups (the policies' `@approvers` names). @default 'groups' */
  readonly groupsClaim?: string;
  /** Scopes the console asks for. @default 'openid email profile' */
  readonly scopes?: string;
  /**
   * The logout endpoint when the issuer's discovery names no end_session_endpoint; sign-out sends
   * the browser there (or to end_session_endpoint) and back to `<base URL>/console/sign-in`, which
   * the client must allow. @default discovery's end_session_endpoint
   */
  readonly logoutUrl?: string;
}

export interface CustomerSignInProps {
  /** OIDC issuer URL customers sign in with (asked for `prompt=login` and `max_age=0`). */
  readonly issuer: string;
  /**
   * The customer pages' client id there: a public client (authorization code with PKCE, no
   * secret) whose redirect URI is `<base URL>/customer/callback`.
   */
  readonly clientId: string;
  /** ID token claim holding the customer id agents act for. @default 'customer_id' */
  readonly idClaim?: string;
  /** Scopes the customer pages ask for. @default 'openid' */
  readonly scopes?: string;
}

export interface GatewayStackProps extends StackProps {
  /** Where agents' tokens come from. @default a Cognito user pool whose app clients are agents */
  readonly agentAuthorization?: AgentAuthorizationProps;
  /** Public base URL when the API sits behind a custom domain. @default the API's own URL */
  readonly publicUrl?: string;
  /** Browser origins (host names) allowed to call the MCP endpoint. @default none */
  readonly allowedOrigins?: readonly string[];
  /** Where approvers sign in to the console. @default a Cognito user pool of approvers */
  readonly approverSignIn?: ApproverSignInProps;
  /** Approver groups to create in the default approvers' pool. @default none */
  readonly approverGroups?: readonly string[];
  /** Where customers sign in to confirm calls made for them. @default a Cognito user pool of customers */
  readonly customerSignIn?: CustomerSignInProps;
  /** The gRPC transport (ECS Fargate behind an ALB). @default none: MCP over HTTP only */
  readonly grpcService?: GrpcServiceSettings;
  /**
   * Whether the stack sets the account's API Gateway CloudWatch role (one per account and region,
   * replacing any there) and logs the /tool/call-tool WebSocket stage's access with it; without it
   * that stage keeps no access logs. @default false
   */
  readonly setApiGatewayLoggingRole?: boolean;
  /** Addresses the operators' alarm notices are emailed to. @default none: subscribe to the AlarmTopic output */
  readonly alarmEmails?: readonly string[];
  /** Addresses every held-call notice is emailed to. @default none: no email (the bus and webhooks only) */
  readonly approverEmails?: readonly string[];
}

export class GatewayStack extends Stack {
  constructor(scope: Construct, id: string, props: GatewayStackProps = {}) {
    super(scope, id, props);

    const store = new GatewayTable(this, 'Executions', { definition: executionsTable });
    // The secrets the configuration names; read by the code that calls systems or sends webhooks only.
    const secrets = new SystemSecrets(this);
    const configuration = new GatewayTable(this, 'Config', { definition: configTable });
    // The bundles the table's pointer names, and the key that signs them.
    const bundles = new ConfigBundles(this, 'ConfigBundles');
    // Encrypts secret argument values at rest (envelope encryption, data keys from KMS).
    const dataKey = new Key(this, 'DataKey', {
      description: 'Approval Gateway: secret argument values of executions',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Held-call notices, for whatever the organization routes them to (mail, chat, tickets).
    const notices = new EventBus(this, 'Notices', { description: 'Approval Gateway: held-call notices' });
    let authorization: Required<AgentAuthorizationProps>;
    // Where the agents' signing keys are, when known without OIDC discovery.
    let jwksUri: string | undefined;
    if (props.agentAuthorization === undefined) {
      const identity = new AgentIdentity(this, 'AgentIdentity');
      // Any app client of the pool granted the agent scope is an agent: no audience fixed at
      // synth, so one created after this deploy is let in, and the configuration lists it by its
      // client id. Client-credentials tokens carry no groups or customer, so none are read.
      authorization = {
        issuer: identity.issuerUrl,
        audience: [],
        agentClaim: 'client_id',
        groupsClaim: '',
        customerClaim: '',
        requiredScopes: [identity.scope],
      };
      jwksUri = `${identity.issuerUrl}/.well-known/jwks.json`;
      new CfnOutput(this, 'AgentTokenUrl', {
        value: identity.tokenUrl,
        description: 'OAuth token endpoint for agents',
      });
      new CfnOutput(this, 'AgentScope', { value: identity.scope, description: 'Scope an agent token must request' });
      new CfnOutput(this, 'AgentUserPoolId', {
        value: identity.userPool.userPoolId,
        description:
          "Create agents here (app clients with client credentials and the AgentScope), then list each client id as an agents: entry's subject",
      });
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
        audience: [],
        agentClaim: 'sub',
        groupsClaim: '',
        customerClaim: '',
        requiredScopes: [],
        ...props.agentAuthorization,
      };
      if (authorization.audience.length === 0 && authorization.requiredScopes.length === 0) {
        throw new Error(
          "agentAuthorization needs an audience or a required scope: without either, any token of the issuer would be an agent's.",
        );
      }
    }

    const environment = {
      EXECUTIONS_TABLE: store.table.tableName,
      CONFIG_TABLE: configuration.table.tableName,
      CONFIG_BUCKET: bundles.bucket.bucketName,
      CONFIG_SIGNING_KEY_ID: bundles.signingKey.keyArn,
      DATA_KEY_ID: dataKey.keyArn,
      ALLOWED_ORIGINS: (props.allowedOrigins ?? []).join(','),
      AUTHORIZATION_SERVERS: authorization.issuer,
      ...(props.publicUrl === undefined ? {} : { PUBLIC_URL: props.publicUrl }),
    };
    const mcp = new GatewayFunction(this, 'Mcp', {
      entry: 'mcp.ts',
      description: 'Approval Gateway MCP endpoint',
      // API Gateway answers within 30 s; a direct call's deadline is cut to what is left (time-budget.ts).
      timeoutSeconds: apiFunctionTimeoutSeconds,
      cedar: true,
      environment,
    });
    // What serving agents' calls needs, over HTTP (the MCP function) or gRPC (the container service).
    const grantAgentCalls = (grantee: IRole) => {
      store.grantRecordCalls(grantee);
      configuration.grantReadConfiguration(grantee);
      bundles.grantLoad(grantee);
      dataKey.grant(grantee, 'kms:GenerateDataKey', 'kms:Decrypt');
    };
    grantAgentCalls(mcp.role);
    const readSecrets = (fn: GatewayFunction) => {
      secrets.grantRead(fn.role);
      fn.function.addEnvironment('SECRETS_PREFIX', secrets.prefix);
    };
    readSecrets(mcp);
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

    // The agents' token check, one for every front: the agent authorizer (the HTTP API and the
    // WebSocket API) and the gRPC container read the same variables.
    const tokenCheck = {
      AGENT_CLAIM: authorization.agentClaim,
      GROUPS_CLAIM: authorization.groupsClaim,
      CUSTOMER_CLAIM: authorization.customerClaim,
      AGENT_JWT_ISSUER: authorization.issuer,
      AGENT_JWT_AUDIENCE: authorization.audience.join(','),
      AGENT_JWT_SCOPES: authorization.requiredScopes.join(','),
      ...(jwksUri === undefined ? {} : { AGENT_JWKS_URI: jwksUri }),
    };
    const agentAuthorizer = new GatewayFunction(this, 'AgentAuthorizer', {
      entry: 'agent-authorizer.ts',
      description: "Approval Gateway agents' token authorizer (HTTP API and /tool/call-tool WebSocket)",
      timeoutSeconds: 10,
      memoryMiB: 256,
      environment: tokenCheck,
    });

    const api = new McpApi(this, 'AgentApi', {
      mcpFunction: mcp.function,
      metadataFunction: metadata.function,
      authorizerFunction: agentAuthorizer.function,
      allowedOrigins: props.allowedOrigins ?? [],
    });
    // Where approvers reach the console; the console builds its links and callback from the same.
    const baseUrl = props.publicUrl?.replace(/\/+$/, '') ?? api.url;
    // A held call's approval_url is absolute even without a public URL.
    mcp.function.addEnvironment('API_URL', api.url);
    new CfnOutput(this, 'McpUrl', { value: `${api.url}/mcp`, description: 'MCP endpoint for agents' });
    new CfnOutput(this, 'SecretsPrefix', {
      value: secrets.prefix,
      description: "Secrets Manager name prefix: the configuration's secret NAME is read from the secret <this>NAME",
    });
    new CfnOutput(this, 'ConfigTable', {
      value: configuration.table.tableName,
      description:
        'Push the configuration: npm run config:push -- --table <this> --bucket <ConfigBucket> --key <ConfigSigningKeyArn> <file> (the pushing principal needs dynamodb:GetItem and dynamodb:PutItem here, s3:PutObject on the bucket, kms:Sign on the key)',
    });
    new CfnOutput(this, 'ConfigBucket', {
      value: bundles.bucket.bucketName,
      description: 'Configuration bundles, an object version per config:push (--bucket)',
    });
    new CfnOutput(this, 'ConfigSigningKeyArn', {
      value: bundles.signingKey.keyArn,
      description: 'KMS key config:push signs bundles with (--key; the pushing principal needs kms:Sign on it)',
    });

    // ---- staff approvals
    const approvalEnvironment = { ...environment, API_URL: api.url };
    const approvals = new ApprovalStateMachine(this, 'Approvals', {
      environment: approvalEnvironment,
      stepsEnvironment: { EVENT_BUS_NAME: notices.eventBusName },
    });
    mcp.function.addEnvironment('STATE_MACHINE_ARN', approvals.stateMachineArn);
    approvals.grantStartExecution(mcp.role);
    // tasks/cancel withdraws a held call and tells its waiting approval run to end. (The channel and
    // the gRPC stream serve tools/call only: they start approval runs and never signal one.)
    approvals.grantTaskSuccess(mcp.role);

    let signIn: ConsoleSignIn;
    if (props.approverSignIn === undefined) {
      const approvers = new ApproverIdentity(this, 'ApproverIdentity', {
        callbackUrl: `${baseUrl}/console/callback`,
        // Sign-out ends the Cognito session too, then comes back to sign in again.
        signOutUrl: `${baseUrl}/console/sign-in`,
        groups: props.approverGroups ?? [],
      });
      signIn = {
        issuer: approvers.issuerUrl,
        clientId: approvers.client.userPoolClientId,
        logoutUrl: approvers.logoutUrl,
        idClaim: approvers.idClaim,
        groupsClaim: approvers.groupsClaim,
      };
      new CfnOutput(this, 'ApproverUserPoolId', {
        value: approvers.userPool.userPoolId,
        description: 'Invite approvers here and add them to the groups the policies name',
      });
      new CfnOutput(this, 'ApproverSignInDomain', {
        value: approvers.signInUrl,
        description: 'Cognito sign-in pages of the approver console',
      });
    } else {
      signIn = { idClaim: 'email', groupsClaim: 'groups', ...props.approverSignIn };
    }
    let customerSignIn: CustomerPagesSignIn;
    if (props.customerSignIn === undefined) {
      const customers = new CustomerIdentity(this, 'CustomerIdentity', {
        callbackUrl: `${baseUrl}/customer/callback`,
      });
      customerSignIn = {
        issuer: customers.issuerUrl,
        clientId: customers.client.userPoolClientId,
        idClaim: customers.idClaim,
        scopes: customers.scopes,
      };
      new CfnOutput(this, 'CustomerUserPoolId', {
        value: customers.userPool.userPoolId,
        description: 'Invite customers here, each with custom:customer_id set to the id agents act for',
      });
      new CfnOutput(this, 'CustomerSignInDomain', {
        value: customers.signInUrl,
        description: 'Cognito sign-in pages of the customer pages',
      });
    } else {
      customerSignIn = { idClaim: 'customer_id', scopes: 'openid', ...props.customerSignIn };
    }
    const consoleApp = new ApproverConsole(this, 'Console', {
      environment: { ...approvalEnvironment, STATE_MACHINE_ARN: approvals.stateMachineArn },
      signIn,
      customerSignIn,
    });
    const consoleRoutes = api.addConsole(consoleApp.console.function);
    approvals.grantTaskSuccess(consoleApp.console.role);
    new CfnOutput(this, 'ConsoleUrl', { value: `${baseUrl}/console`, description: 'Approver console' });
    new CfnOutput(this, 'NoticeBusName', {
      value: notices.eventBusName,
      description: 'EventBridge bus of held-call notices (source approval-gateway)',
    });

    const { steps, reconciler } = approvals;
    const approver = consoleApp.console;
    store.grantAdvanceHeldCalls(steps.role);
    store.grantReconcile(reconciler.role);
    store.grantDecide(approver.role);
    // Running an approved call reads the configuration and opens the arguments sealed at the hold
    // (Decrypt only: nothing is sealed afterwards). The console needs neither.
    for (const role of [steps.role, reconciler.role]) {
      configuration.grantReadConfiguration(role);
      bundles.grantLoad(role);
      dataKey.grant(role, 'kms:Decrypt');
    }
    // Only the register task notifies approvers; an approval run the reconciler starts registers too.
    notices.grantPutEventsTo(steps.role);
    // Running an approved call sends it with the system's credentials; the register task sends webhooks.
    readSecrets(steps);
    readSecrets(reconciler);

    for (const route of api.publicRoutes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'OAuth protected-resource metadata is public by design (RFC 9728): clients read it before they hold a token.',
      });
    }
    for (const route of consoleRoutes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'The approver console authenticates approvers itself: OIDC sign-in (code flow with PKCE) and a session cookie signed by a KMS HMAC key, checked on every request. The customer pages it also serves authenticate customers the same way, with a fresh OIDC login for every call and a session bound to that one call.',
      });
    }

    // ---- /tool/call-tool over WebSocket (the HTTP API's POST route is the MCP function's)
    const channelSocket = new GatewayFunction(this, 'CallToolSocket', {
      entry: 'call-tool-socket.ts',
      description: 'Approval Gateway /tool/call-tool over WebSocket',
      timeoutSeconds: apiFunctionTimeoutSeconds,
      cedar: true,
      environment: { ...approvalEnvironment, STATE_MACHINE_ARN: approvals.stateMachineArn },
    });
    const channel = new CallToolChannel(this, 'CallToolChannel', {
      channelFunction: channelSocket.function,
      authorizerFunction: agentAuthorizer.function,
      setAccountLoggingRole: props.setApiGatewayLoggingRole ?? false,
    });
    channelSocket.function.addEnvironment('CONNECTIONS_URL', channel.connectionsUrl);
    // The MCP function's grants on the data (its once-per-connection claim is a PutItem on the same
    // table), and answering and closing this API's connections.
    grantAgentCalls(channelSocket.role);
    readSecrets(channelSocket);
    approvals.grantStartExecution(channelSocket.role);
    channel.grantAnswerAndClose(channelSocket.role);
    new CfnOutput(this, 'CallToolWebSocketUrl', {
      value: channel.url,
      description: '/tool/call-tool over WebSocket (Authorization: Bearer <agent token> on the handshake)',
    });
    new CfnOutput(this, 'CallToolPostUrl', {
      value: `${api.url}/tool/call-tool`,
      description: '/tool/call-tool as an HTTP POST (application/json in, application/octet-stream frame out)',
    });

    // ---- the gRPC transport (optional)
    if (props.grpcService !== undefined) {
      const grpc = new GrpcService(this, 'Grpc', {
        ...props.grpcService,
        environment: {
          ...environment,
          STATE_MACHINE_ARN: approvals.stateMachineArn,
          // Links for customers and approvers go to the HTTP API, which serves their pages.
          API_URL: api.url,
          // The container checks agents' tokens itself, as the agent authorizer does.
          ...tokenCheck,
          ...secrets.environment,
        },
      });
      grantAgentCalls(grpc.taskRole);
      secrets.grantRead(grpc.taskRole);
      approvals.grantStartExecution(grpc.taskRole);
      new CfnOutput(this, 'GrpcEndpoint', {
        value: `${props.grpcService.domainName ?? grpc.loadBalancer.loadBalancerDnsName}:443`,
        description: 'gRPC endpoint for agents (TLS); point the certificate name at GrpcLoadBalancerDns',
      });
      new CfnOutput(this, 'GrpcLoadBalancerDns', {
        value: grpc.loadBalancer.loadBalancerDnsName,
        description: "The gRPC load balancer's DNS name (the target of the certificate name's CNAME or alias)",
      });
    }

    // ---- running it: alarms, their topic and the dashboard; held-call notices by email when asked
    const operations = new Operations(this, 'Operations', {
      functions: {
        Mcp: mcp.function,
        ResourceMetadata: metadata.function,
        HeldCallSteps: steps.function,
        Reconciler: reconciler.function,
        Console: approver.function,
        AgentAuthorizer: agentAuthorizer.function,
        CallToolSocket: channelSocket.function,
      },
      stateMachine: approvals.stateMachine,
      steps: { function: steps.function, timeoutSeconds: approvals.runTimeoutSeconds },
      reconciler: {
        function: reconciler.function,
        schedule: approvals.schedule,
        everyMinutes: approvals.reconcileEveryMinutes,
      },
      tables: { Executions: store.table, Config: configuration.table },
      alarmEmails: props.alarmEmails ?? [],
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: operations.alarmTopic.topicArn,
      description: 'SNS topic of alarm notices (subscribe here, or deploy with -c alarmEmails=...)',
    });
    new CfnOutput(this, 'DashboardName', {
      value: operations.dashboard.dashboardName,
      description: 'CloudWatch dashboard of the gateway',
    });
    if ((props.approverEmails ?? []).length > 0) {
      const email = new EmailNotices(this, 'EmailNotices', { bus: notices, emails: props.approverEmails ?? [] });
      new CfnOutput(this, 'NoticeTopicArn', {
        value: email.topic.topicArn,
        description: 'SNS topic emailing held-call notices to the approverEmails addresses',
      });
    }
  }
}
