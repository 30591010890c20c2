// The Approval Gateway stack: the agents' API, the handler functions and the executions table,
// and the staff-approval lifecycle (state machine, held-call steps and reconciler functions, the approver
// console with its sign-in and the customer pages with theirs, and the bus held-call notices go out on),
// and, when asked for, the gRPC transport as a container service running the same code.
//
// The constructor reads as the list of its parts, each a method below: the data, how agents'
// tokens are checked, the agents' API, the approval lifecycle, the console, the WebSocket channel,
// the optional gRPC service and the operations. Each part creates its constructs and grants them
// what they use of the parts before it.
import { CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { configTable, executionsTable } from '../shared/adapters/dynamodb/tables.js';
import { apiFunctionTimeoutSeconds } from '../shared/invoke/time-budget.js';
import { jwksPath } from '../shared/receipts/signer.js';
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
import { ReceiptKey } from './constructs/receipt-key.js';
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

interface ApproverSignInProps {
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

interface CustomerSignInProps {
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

/** What the parts keep and read: the tables, the configuration's bundles, the keys, the secrets and the notice bus. */
interface GatewayData {
  readonly store: GatewayTable;
  /** The secrets the configuration names; read by the code that calls systems or sends webhooks only. */
  readonly secrets: SystemSecrets;
  readonly configuration: GatewayTable;
  /** The bundles the configuration table's pointer names, and the key that signs them. */
  readonly bundles: ConfigBundles;
  /** Encrypts secret argument values at rest (envelope encryption, data keys from KMS). */
  readonly dataKey: Key;
  /** Held-call notices, for whatever the organization routes them to (mail, chat, tickets). */
  readonly notices: EventBus;
  /** Signs approval receipts: the functions sending approved calls sign, the public documents list its public key. */
  readonly receiptKey: ReceiptKey;
}

/** How agents' tokens are checked. */
interface AgentTokens {
  /** The issuer of agents' tokens, which 401 answers and the protected-resource metadata name. */
  readonly issuer: string;
  /** The agent-token environment: the variables every check of an agent's token reads. */
  readonly environment: Readonly<Record<string, string>>;
}

/** The agents' HTTP API and the functions behind it. */
interface AgentApi {
  readonly api: McpApi;
  readonly mcp: GatewayFunction;
  readonly metadata: GatewayFunction;
  readonly authorizer: GatewayFunction;
  /** What every function serving or running calls reads: the data's names and where tokens come from. */
  readonly environment: Readonly<Record<string, string>>;
  /** Where approvers and customers reach their pages; the console builds its links and callback from the same. */
  readonly baseUrl: string;
}

/** The approval runs, and what a function that holds or decides calls reads. */
interface ApprovalLifecycle {
  readonly approvals: ApprovalStateMachine;
  /** The agent API's environment, its URL (a held call's links are absolute) and the state machine. */
  readonly environment: Readonly<Record<string, string>>;
}

/**
 * The agent-token environment, built in this one place: the agent authorizer (the HTTP API and the
 * WebSocket API) and the gRPC container check agents' tokens from the same variables.
 */
const agentTokens = (authorization: Required<AgentAuthorizationProps>, jwksUri?: string): AgentTokens => ({
  issuer: authorization.issuer,
  environment: {
    AGENT_CLAIM: authorization.agentClaim,
    GROUPS_CLAIM: authorization.groupsClaim,
    CUSTOMER_CLAIM: authorization.customerClaim,
    AGENT_JWT_ISSUER: authorization.issuer,
    AGENT_JWT_AUDIENCE: authorization.audience.join(','),
    AGENT_JWT_SCOPES: authorization.requiredScopes.join(','),
    // Where the agents' signing keys are, when known without OIDC discovery.
    ...(jwksUri === undefined ? {} : { AGENT_JWKS_URI: jwksUri }),
  },
});

/** What serving agents' calls needs, over HTTP, WebSocket or gRPC: the same grants for every front. */
const grantServeAgents = (role: IRole, data: GatewayData): void => {
  data.store.grantRecordCalls(role);
  data.configuration.grantReadConfiguration(role);
  data.bundles.grantLoad(role);
  data.dataKey.grant(role, 'kms:GenerateDataKey', 'kms:Decrypt');
};

/** Reading the configuration's secrets: the code that sends calls to systems or webhooks. */
const readSecrets = (fn: GatewayFunction, secrets: SystemSecrets): void => {
  secrets.grantRead(fn.role);
  fn.function.addEnvironment('SECRETS_PREFIX', secrets.prefix);
};

export class GatewayStack extends Stack {
  constructor(scope: Construct, id: string, props: GatewayStackProps = {}) {
    super(scope, id, props);
    const data = this.data();
    const tokens = this.agentTokens(props.agentAuthorization);
    const agents = this.agentApi(props, data, tokens);
    this.configurationOutputs(data);
    const lifecycle = this.approvalLifecycle(data, agents);
    const approverConsole = this.approverConsole(props, data, agents, lifecycle);
    const channelSocket = this.channel(props, data, agents, lifecycle);
    if (props.grpcService !== undefined) this.grpc(props.grpcService, data, tokens, agents, lifecycle);
    const { steps, reconciler } = lifecycle.approvals;
    this.operations(props, data, lifecycle.approvals, {
      Mcp: agents.mcp.function,
      ResourceMetadata: agents.metadata.function,
      HeldCallSteps: steps.function,
      Reconciler: reconciler.function,
      Console: approverConsole.function,
      AgentAuthorizer: agents.authorizer.function,
      CallToolSocket: channelSocket.function,
    });
  }

  private data(): GatewayData {
    return {
      store: new GatewayTable(this, 'Executions', { definition: executionsTable }),
      secrets: new SystemSecrets(this),
      configuration: new GatewayTable(this, 'Config', { definition: configTable }),
      bundles: new ConfigBundles(this, 'ConfigBundles'),
      dataKey: new Key(this, 'DataKey', {
        description: 'Approval Gateway: secret argument values of executions',
        enableKeyRotation: true,
        removalPolicy: RemovalPolicy.RETAIN,
      }),
      notices: new EventBus(this, 'Notices', { description: 'Approval Gateway: held-call notices' }),
      receiptKey: new ReceiptKey(this, 'ReceiptKey'),
    };
  }

  /** How agents' tokens are checked: the deployment's OIDC issuer, or the stack's own Cognito pool. */
  private agentTokens(settings: AgentAuthorizationProps | undefined): AgentTokens {
    if (settings === undefined) return this.cognitoAgents();
    const authorization = {
      audience: [],
      agentClaim: 'sub',
      groupsClaim: '',
      customerClaim: '',
      requiredScopes: [],
      ...settings,
    };
    if (authorization.audience.length === 0 && authorization.requiredScopes.length === 0) {
      throw new Error(
        "agentAuthorization needs an audience or a required scope: without either, any token of the issuer would be an agent's.",
      );
    }
    return agentTokens(authorization);
  }

  /** A Cognito user pool whose app clients are the agents. */
  private cognitoAgents(): AgentTokens {
    const identity = new AgentIdentity(this, 'AgentIdentity');
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
    // Any app client of the pool granted the agent scope is an agent: no audience fixed at
    // synth, so one created after this deploy is let in, and the configuration lists it by its
    // client id. Client-credentials tokens carry no groups or customer, so none are read.
    return agentTokens(
      {
        issuer: identity.issuerUrl,
        audience: [],
        agentClaim: 'client_id',
        groupsClaim: '',
        customerClaim: '',
        requiredScopes: [identity.scope],
      },
      `${identity.issuerUrl}/.well-known/jwks.json`,
    );
  }

  /** The agents' HTTP API: the MCP function, the public protected-resource metadata, the agent authorizer. */
  private agentApi(props: GatewayStackProps, data: GatewayData, tokens: AgentTokens): AgentApi {
    // Where agents find the authorization server: the MCP function's 401s and the metadata document.
    const discovery = {
      AUTHORIZATION_SERVERS: tokens.issuer,
      ...(props.publicUrl === undefined ? {} : { PUBLIC_URL: props.publicUrl }),
    };
    const environment = {
      EXECUTIONS_TABLE: data.store.table.tableName,
      CONFIG_TABLE: data.configuration.table.tableName,
      CONFIG_BUCKET: data.bundles.bucket.bucketName,
      CONFIG_SIGNING_KEY_ID: data.bundles.signingKey.keyArn,
      DATA_KEY_ID: data.dataKey.keyArn,
      ALLOWED_ORIGINS: (props.allowedOrigins ?? []).join(','),
      ...discovery,
    };
    const mcp = new GatewayFunction(this, 'Mcp', {
      entry: 'mcp.ts',
      description: 'Approval Gateway MCP endpoint',
      // API Gateway answers within 30 s; a direct call's deadline is cut to what is left (time-budget.ts).
      timeoutSeconds: apiFunctionTimeoutSeconds,
      cedar: true,
      environment,
    });
    grantServeAgents(mcp.role, data);
    readSecrets(mcp, data.secrets);
    const metadata = new GatewayFunction(this, 'ResourceMetadata', {
      entry: 'resource-metadata.ts',
      description: 'Approval Gateway OAuth protected-resource metadata',
      timeoutSeconds: 5,
      memoryMiB: 256,
      // It lists the receipt key's public part too (/.well-known/jwks.json): kms:GetPublicKey only.
      environment: { ...discovery, RECEIPT_KEY_ID: data.receiptKey.key.keyArn },
    });
    data.receiptKey.grantPublicKey(metadata.role);
    const authorizer = new GatewayFunction(this, 'AgentAuthorizer', {
      entry: 'agent-authorizer.ts',
      description: "Approval Gateway agents' token authorizer (HTTP API and /tool/call-tool WebSocket)",
      timeoutSeconds: 10,
      memoryMiB: 256,
      environment: tokens.environment,
    });
    const api = new McpApi(this, 'AgentApi', {
      mcpFunction: mcp.function,
      metadataFunction: metadata.function,
      authorizerFunction: authorizer.function,
      allowedOrigins: props.allowedOrigins ?? [],
    });
    // A held call's approval_url is absolute even without a public URL.
    mcp.function.addEnvironment('API_URL', api.url);
    new CfnOutput(this, 'McpUrl', { value: `${api.url}/mcp`, description: 'MCP endpoint for agents' });
    for (const route of api.publicRoutes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          "OAuth protected-resource metadata is public by design (RFC 9728): clients read it before they hold a token; the receipt key's JWK Set is public so systems can check receipts.",
      });
    }
    const baseUrl = props.publicUrl?.replace(/\/+$/, '') ?? api.url;
    new CfnOutput(this, 'ReceiptKeyArn', {
      value: data.receiptKey.key.keyArn,
      description: 'KMS key approval receipts are signed with (only the held-call steps and the reconciler may sign)',
    });
    new CfnOutput(this, 'ReceiptKeysUrl', {
      value: `${baseUrl}${jwksPath}`,
      description: 'JWK Set approval receipts are checked against (npm run receipts:verify -- <receipt> --jwks <this>)',
    });
    return { api, mcp, metadata, authorizer, environment, baseUrl };
  }

  /** Where the operators put the configuration (npm run config:push) and the secrets it names. */
  private configurationOutputs({ secrets, configuration, bundles }: GatewayData): void {
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
  }

  /** Staff approvals: the state machine, its held-call steps and the reconciler, and who may start and signal runs. */
  private approvalLifecycle(data: GatewayData, agents: AgentApi): ApprovalLifecycle {
    const approvals = new ApprovalStateMachine(this, 'Approvals', {
      environment: { ...agents.environment, API_URL: agents.api.url },
      noticesEnvironment: { EVENT_BUS_NAME: data.notices.eventBusName },
    });
    const { mcp } = agents;
    mcp.function.addEnvironment('STATE_MACHINE_ARN', approvals.stateMachineArn);
    approvals.grantStartExecution(mcp.role);
    // tasks/cancel withdraws a held call and tells its waiting approval run to end. (The channel and
    // the gRPC stream serve tools/call only: they start approval runs and never signal one.)
    approvals.grantTaskSuccess(mcp.role);
    const { steps, reconciler } = approvals;
    data.store.grantAdvanceHeldCalls(steps.role);
    data.store.grantReconcile(reconciler.role);
    // Running an approved call reads the configuration and opens the arguments sealed at the hold
    // (Decrypt only: nothing is sealed afterwards).
    for (const role of [steps.role, reconciler.role]) {
      data.configuration.grantReadConfiguration(role);
      data.bundles.grantLoad(role);
      data.dataKey.grant(role, 'kms:Decrypt');
    }
    // Both send approved calls, so both sign their receipts; no other function may sign.
    for (const fn of [steps, reconciler]) {
      data.receiptKey.grantSign(fn.role);
      fn.function.addEnvironment('RECEIPT_KEY_ID', data.receiptKey.key.keyArn);
    }
    // The register task notifies approvers of a held call (an approval run the reconciler starts
    // registers too); the reconciler tells an escalation group of a call escalated to it.
    data.notices.grantPutEventsTo(steps.role);
    data.notices.grantPutEventsTo(reconciler.role);
    // Running an approved call sends it with the system's credentials; the register task sends webhooks.
    readSecrets(steps, data.secrets);
    readSecrets(reconciler, data.secrets);
    return {
      approvals,
      environment: { ...agents.environment, API_URL: agents.api.url, STATE_MACHINE_ARN: approvals.stateMachineArn },
    };
  }

  /**
   * The approver console and the customer pages, served by one function under /console and
   * /customer of the agents' API; it reads no configuration and opens no sealed arguments.
   */
  private approverConsole(
    props: GatewayStackProps,
    data: GatewayData,
    agents: AgentApi,
    lifecycle: ApprovalLifecycle,
  ): GatewayFunction {
    const consoleApp = new ApproverConsole(this, 'Console', {
      environment: lifecycle.environment,
      signIn: this.approverSignIn(props, agents.baseUrl),
      customerSignIn: this.customerSignIn(props, agents.baseUrl),
    });
    const approver = consoleApp.console;
    const routes = agents.api.addConsole(approver.function);
    lifecycle.approvals.grantTaskSuccess(approver.role);
    data.store.grantDecide(approver.role);
    // An approval short of its quorum tells the group how many are still needed, on the notice bus.
    approver.function.addEnvironment('EVENT_BUS_NAME', data.notices.eventBusName);
    data.notices.grantPutEventsTo(approver.role);
    new CfnOutput(this, 'ConsoleUrl', { value: `${agents.baseUrl}/console`, description: 'Approver console' });
    new CfnOutput(this, 'NoticeBusName', {
      value: data.notices.eventBusName,
      description: 'EventBridge bus of held-call notices (source approval-gateway)',
    });
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'The approver console authenticates approvers itself: OIDC sign-in (code flow with PKCE) and a session cookie signed by a KMS HMAC key, checked on every request. The customer pages it also serves authenticate customers the same way, with a fresh OIDC login for every call and a session bound to that one call.',
      });
    }
    return approver;
  }

  /** Where approvers sign in: the deployment's OIDC issuer, or the stack's own Cognito pool of approvers. */
  private approverSignIn(props: GatewayStackProps, baseUrl: string): ConsoleSignIn {
    if (props.approverSignIn !== undefined) return { idClaim: 'email', groupsClaim: 'groups', ...props.approverSignIn };
    const approvers = new ApproverIdentity(this, 'ApproverIdentity', {
      callbackUrl: `${baseUrl}/console/callback`,
      // Sign-out ends the Cognito session too, then comes back to sign in again.
      signOutUrl: `${baseUrl}/console/sign-in`,
      groups: props.approverGroups ?? [],
    });
    new CfnOutput(this, 'ApproverUserPoolId', {
      value: approvers.userPool.userPoolId,
      description: 'Invite approvers here and add them to the groups the policies name',
    });
    new CfnOutput(this, 'ApproverSignInDomain', {
      value: approvers.signInUrl,
      description: 'Cognito sign-in pages of the approver console',
    });
    return {
      issuer: approvers.issuerUrl,
      clientId: approvers.client.userPoolClientId,
      logoutUrl: approvers.logoutUrl,
      idClaim: approvers.idClaim,
      groupsClaim: approvers.groupsClaim,
    };
  }

  /** Where customers sign in: the deployment's OIDC issuer, or the stack's own Cognito pool of customers. */
  private customerSignIn(props: GatewayStackProps, baseUrl: string): CustomerPagesSignIn {
    if (props.customerSignIn !== undefined)
      return { idClaim: 'customer_id', scopes: 'openid', ...props.customerSignIn };
    const customers = new CustomerIdentity(this, 'CustomerIdentity', {
      callbackUrl: `${baseUrl}/customer/callback`,
    });
    new CfnOutput(this, 'CustomerUserPoolId', {
      value: customers.userPool.userPoolId,
      description: 'Invite customers here, each with custom:customer_id set to the id agents act for',
    });
    new CfnOutput(this, 'CustomerSignInDomain', {
      value: customers.signInUrl,
      description: 'Cognito sign-in pages of the customer pages',
    });
    return {
      issuer: customers.issuerUrl,
      clientId: customers.client.userPoolClientId,
      idClaim: customers.idClaim,
      scopes: customers.scopes,
    };
  }

  /** /tool/call-tool over WebSocket (the HTTP API's POST route is the MCP function's), behind the agent authorizer. */
  private channel(
    props: GatewayStackProps,
    data: GatewayData,
    agents: AgentApi,
    lifecycle: ApprovalLifecycle,
  ): GatewayFunction {
    const channelSocket = new GatewayFunction(this, 'CallToolSocket', {
      entry: 'call-tool-socket.ts',
      description: 'Approval Gateway /tool/call-tool over WebSocket',
      timeoutSeconds: apiFunctionTimeoutSeconds,
      cedar: true,
      environment: lifecycle.environment,
    });
    const channel = new CallToolChannel(this, 'CallToolChannel', {
      channelFunction: channelSocket.function,
      authorizerFunction: agents.authorizer.function,
      setAccountLoggingRole: props.setApiGatewayLoggingRole ?? false,
    });
    channelSocket.function.addEnvironment('CONNECTIONS_URL', channel.connectionsUrl);
    // The MCP function's grants on the data (its once-per-connection claim is a PutItem on the same
    // table), and answering and closing this API's connections.
    grantServeAgents(channelSocket.role, data);
    readSecrets(channelSocket, data.secrets);
    lifecycle.approvals.grantStartExecution(channelSocket.role);
    channel.grantAnswerAndClose(channelSocket.role);
    new CfnOutput(this, 'CallToolWebSocketUrl', {
      value: channel.url,
      description: '/tool/call-tool over WebSocket (Authorization: Bearer <agent token> on the handshake)',
    });
    new CfnOutput(this, 'CallToolPostUrl', {
      value: `${agents.api.url}/tool/call-tool`,
      description: '/tool/call-tool as an HTTP POST (application/json in, application/octet-stream frame out)',
    });
    return channelSocket;
  }

  /** The optional gRPC transport: the same code in a container, checking agents' tokens itself. */
  private grpc(
    settings: GrpcServiceSettings,
    data: GatewayData,
    tokens: AgentTokens,
    agents: AgentApi,
    { approvals }: ApprovalLifecycle,
  ): void {
    const grpc = new GrpcService(this, 'Grpc', {
      ...settings,
      environment: {
        ...agents.environment,
        STATE_MACHINE_ARN: approvals.stateMachineArn,
        // Links for customers and approvers go to the HTTP API, which serves their pages.
        API_URL: agents.api.url,
        ...tokens.environment,
        ...data.secrets.environment,
      },
    });
    grantServeAgents(grpc.taskRole, data);
    data.secrets.grantRead(grpc.taskRole);
    approvals.grantStartExecution(grpc.taskRole);
    new CfnOutput(this, 'GrpcEndpoint', {
      value: `${settings.domainName ?? grpc.loadBalancer.loadBalancerDnsName}:443`,
      description: 'gRPC endpoint for agents (TLS); point the certificate name at GrpcLoadBalancerDns',
    });
    new CfnOutput(this, 'GrpcLoadBalancerDns', {
      value: grpc.loadBalancer.loadBalancerDnsName,
      description: "The gRPC load balancer's DNS name (the target of the certificate name's CNAME or alias)",
    });
  }

  /** Running it: alarms, their topic and the dashboard; held-call notices by email when asked for. */
  private operations(
    props: GatewayStackProps,
    data: GatewayData,
    approvals: ApprovalStateMachine,
    functions: Readonly<Record<string, IFunction>>,
  ): void {
    const operations = new Operations(this, 'Operations', {
      functions,
      stateMachine: approvals.stateMachine,
      steps: { function: approvals.steps.function, timeoutSeconds: approvals.runTimeoutSeconds },
      reconciler: {
        function: approvals.reconciler.function,
        schedule: approvals.schedule,
        everyMinutes: approvals.reconcileEveryMinutes,
      },
      tables: { Executions: data.store.table, Config: data.configuration.table },
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
    const approverEmails = props.approverEmails ?? [];
    if (approverEmails.length > 0) {
      const email = new EmailNotices(this, 'EmailNotices', { bus: data.notices, emails: approverEmails });
      new CfnOutput(this, 'NoticeTopicArn', {
        value: email.topic.topicArn,
        description: 'SNS topic emailing held-call notices to the approverEmails addresses',
      });
    }
  }
}
