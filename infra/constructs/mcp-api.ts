// The gateway's HTTP API: POST /mcp and POST /tool/call-tool behind the agent authorizer (a Lambda
// REQUEST authorizer checking tokens of the Cognito pool or any OIDC issuer), the public protected-resource metadata document that tells MCP clients where
// tokens come from and the receipt key's JWK Set, and the approver console, which signs approvers in itself.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpRoute,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { jwksPath } from '../../shared/receipts/signer.js';
import { stageThrottling } from './stage-throttling.js';

export interface McpApiProps {
  readonly mcpFunction: IFunction;
  readonly metadataFunction: IFunction;
  /**
   * The agent authorizer (functions/agent-authorizer.ts): it checks the token (issuer, keys,
   * expiry, scope or audience) and passes the caller on, so any app client of the agents' pool
   * granted the agent scope is let in, including one created after this deploy.
   */
  readonly authorizerFunction: IFunction;
  /** Browser origins (host names, served over https) allowed to call /mcp. @default none: no CORS */
  readonly allowedOrigins?: readonly string[];
  /**
   * The floor under the gateway's own per-agent limits: API Gateway's throttling of each route,
   * shared by all agents (HTTP APIs have no per-client throttling). @default 200
   */
  readonly rateLimitPerSecond?: number;
  /** Requests each route accepts at once above its rate. @default 400 */
  readonly burstLimit?: number;
}

/** CORS only for the browser origins the MCP function also accepts; none without them. */
const corsFor = (allowedOrigins: readonly string[]) =>
  allowedOrigins.length === 0
    ? {}
    : {
        corsPreflight: {
          allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST],
          allowHeaders: [
            'authorization',
            'content-type',
            'mcp-protocol-version',
            'mcp-method',
            'mcp-name',
            // 2025-11-25 clients that declared URL elicitation carry their sealed session id.
            'mcp-session-id',
          ],
          exposeHeaders: ['mcp-session-id'],
          allowOrigins: allowedOrigins.map((host) => `https://${host}`),
          maxAge: Duration.hours(1),
        },
      };

/** The access log line: HTTP API context variables (the default format is REST-API shaped). */
const accessLogFormat = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    time: '$context.requestTime',
    ip: '$context.identity.sourceIp',
    routeKey: '$context.routeKey',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    latencyMs: '$context.responseLatency',
    integrationError: '$context.integrationErrorMessage',
    authorizerError: '$context.authorizer.error',
  }),
);

export class McpApi extends Construct {
  readonly api: HttpApi;
  readonly url: string;
  /** The routes that need no token (the OAuth metadata documents, the receipt keys). */
  readonly publicRoutes: readonly HttpRoute[];

  constructor(scope: Construct, id: string, props: McpApiProps) {
    super(scope, id);
    this.api = new HttpApi(this, 'Api', {
      description: 'Approval Gateway: MCP endpoint for agents and the approver console',
      createDefaultStage: false,
      ...corsFor(props.allowedOrigins ?? []),
    });
    this.throttledStage(props);
    this.agentRoutes(props);
    const metadata = new HttpLambdaIntegration('ResourceMetadata', props.metadataFunction);
    // The public documents: the OAuth metadata, and the receipt key's JWK Set systems check receipts with.
    this.publicRoutes = [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      jwksPath,
    ].flatMap((path) =>
      this.api.addRoutes({
        path,
        methods: [HttpMethod.GET],
        integration: metadata,
        authorizer: new HttpNoneAuthorizer(),
      }),
    );
    this.url = this.api.apiEndpoint;
  }

  /** The one stage, throttled per route, logging every request's access. */
  private throttledStage(props: McpApiProps): void {
    const { rateLimit, burstLimit } = stageThrottling('McpApi', props);
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs), format: accessLogFormat },
      throttle: { rateLimit, burstLimit },
    });
  }

  /** POST /mcp (and GET, DELETE) and POST /tool/call-tool, to the MCP function behind the agent authorizer. */
  private agentRoutes(props: McpApiProps): void {
    const authorizer = new HttpLambdaAuthorizer('AgentTokens', props.authorizerFunction, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      // Missing, it is API Gateway's own 401; the answer is cached per header value (the MCP
      // function refuses a caller past its token's expiry, whatever the cache holds).
      identitySource: ['$request.header.Authorization'],
      resultsCacheTtl: Duration.minutes(5),
    });
    const mcp = new HttpLambdaIntegration('Mcp', props.mcpFunction);
    this.api.addRoutes({
      path: '/mcp',
      methods: [HttpMethod.POST, HttpMethod.GET, HttpMethod.DELETE],
      integration: mcp,
      authorizer,
    });
    // The same calls as one framed answer, served by the MCP function behind the same authorizer.
    this.api.addRoutes({
      path: '/tool/call-tool',
      methods: [HttpMethod.POST],
      integration: mcp,
      authorizer,
    });
  }

  /**
   * Routes /console and everything under it, and the customer's pages under /customer, to the
   * console function, without an authorizer: the console runs the sign-in and checks its own
   * signed session cookies on every request.
   */
  addConsole(consoleFunction: IFunction): HttpRoute[] {
    const integration = new HttpLambdaIntegration('Console', consoleFunction);
    return ['/console', '/console/{proxy+}', '/customer/{proxy+}'].flatMap((path) =>
      this.api.addRoutes({
        path,
        methods: [HttpMethod.ANY],
        integration,
        authorizer: new HttpNoneAuthorizer(),
      }),
    );
  }
}
