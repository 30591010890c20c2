// The agents' HTTP API: POST /mcp behind a JWT authorizer (Cognito or any OIDC issuer), and the
// public protected-resource metadata document that tells MCP clients where tokens come from.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface McpApiProps {
  readonly mcpFunction: IFunction;
  readonly metadataFunction: IFunction;
  /** OIDC issuer whose tokens agents present. */
  readonly jwtIssuer: string;
  /** Accepted audiences (or Cognito app client ids). */
  readonly jwtAudience: readonly string[];
  /** Steady-state requests per second across all agents. @default 200 */
  readonly rateLimitPerSecond?: number;
  /** @default 400 */
  readonly burstLimit?: number;
}

export class McpApi extends Construct {
  readonly api: HttpApi;
  readonly url: string;

  constructor(scope: Construct, id: string, props: McpApiProps) {
    super(scope, id);
    this.api = new HttpApi(this, 'Api', {
      description: 'Approval Gateway: MCP endpoint for agents',
      createDefaultStage: false,
      corsPreflight: {
        allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST],
        allowHeaders: ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name'],
        allowOrigins: ['*'],
        maxAge: Duration.hours(1),
      },
    });
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs) },
      throttle: { rateLimit: props.rateLimitPerSecond ?? 200, burstLimit: props.burstLimit ?? 400 },
    });
    const authorizer = new HttpJwtAuthorizer('AgentTokens', props.jwtIssuer, {
      jwtAudience: [...props.jwtAudience],
    });
    this.api.addRoutes({
      path: '/mcp',
      methods: [HttpMethod.POST, HttpMethod.GET, HttpMethod.DELETE],
      integration: new HttpLambdaIntegration('Mcp', props.mcpFunction),
      authorizer,
    });
    const metadata = new HttpLambdaIntegration('ResourceMetadata', props.metadataFunction);
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      this.api.addRoutes({ path, methods: [HttpMethod.GET], integration: metadata, authorizer: new HttpNoneAuthorizer() });
    }
    this.url = this.api.apiEndpoint;
  }
}
