// The /tool/call-tool channel's WebSocket API: $connect behind a Lambda REQUEST authorizer that
// checks the agent's token from the handshake's Authorization header, every message to $default
// (the function that runs the call, posts the one frame and closes), one throttled stage (with
// access logs when the stack may set the account's logging role), and the management API's two
// calls granted on this stage's connections only.
import { ArnFormat, CfnElement, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat, CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import {
  type IAccessLogSettings,
  LogGroupLogDestination,
  WebSocketApi,
  WebSocketStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Grant, type IGrantable, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { nagRegionAndAccount } from './nag-arn.js';
import { stageThrottling } from './stage-throttling.js';

export const channelStageName = 'live';

export interface CallToolChannelProps {
  /** Serves $connect (once authorized) and $default (each message). */
  readonly channelFunction: IFunction;
  /** The $connect REQUEST authorizer. */
  readonly authorizerFunction: IFunction;
  /** Connections and messages per second the stage accepts, all agents together. @default 200 */
  readonly rateLimitPerSecond?: number;
  /** Connections and messages accepted at once above the rate. @default 400 */
  readonly burstLimit?: number;
  /**
   * Whether to set the account's API Gateway CloudWatch role (one per account and region, shared by
   * every REST and WebSocket API there) and log the stage's access with it. Without the role
   * API Gateway refuses a stage with access logs, so they are off. @default false
   */
  readonly setAccountLoggingRole?: boolean;
}

export class CallToolChannel extends Construct {
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
  /** wss://… — where agents open the channel. */
  readonly url: string;
  /** https://… — the stage's management endpoint (PostToConnection, DeleteConnection). */
  readonly connectionsUrl: string;

  constructor(scope: Construct, id: string, props: CallToolChannelProps) {
    super(scope, id);
    const { rateLimit, burstLimit } = stageThrottling('CallToolChannel', props);
    const authorizer = new WebSocketLambdaAuthorizer('AgentTokens', props.authorizerFunction, {
      identitySource: ['route.request.header.Authorization'],
    });
    this.api = new WebSocketApi(this, 'Api', {
      description: 'Approval Gateway: /tool/call-tool for agents (one params message in, one frame out)',
      connectRouteOptions: {
        integration: new WebSocketLambdaIntegration('Connect', props.channelFunction),
        authorizer,
      },
      defaultRouteOptions: { integration: new WebSocketLambdaIntegration('Message', props.channelFunction) },
    });
    const logging = (props.setAccountLoggingRole ?? false) ? this.accountLogging() : undefined;
    this.stage = new WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: channelStageName,
      autoDeploy: true,
      throttle: { rateLimit, burstLimit },
      ...(logging === undefined ? {} : { accessLogSettings: logging.settings }),
    });
    // API Gateway refuses a stage with access logs until the account's role is set.
    if (logging !== undefined) this.stage.node.addDependency(logging.account);
    else {
      Validations.of(this.stage).acknowledge({
        id: 'AwsSolutions-APIG1',
        reason:
          "WebSocket access logs need the account's API Gateway CloudWatch role, one per account and region, which the stack replaces only when asked (-c apiGatewayLoggingRole=true); without it the channel function logs one line per call and the $connect authorizer one per refused token.",
      });
    }
    Validations.of(this.api.node.findChild('$default-Route')).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        "WebSocket APIs authorize the $connect route only: every message of a connection runs as the agent the $connect authorizer verified, read from the connection's requestContext.authorizer, never from the message.",
    });
    this.url = this.stage.url;
    this.connectionsUrl = this.stage.callbackUrl;
  }

  /** The stage's access logs, and the account's logging role that lets API Gateway write them there only. */
  private accountLogging(): { readonly settings: IAccessLogSettings; readonly account: CfnAccount } {
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const settings: IAccessLogSettings = {
      destination: new LogGroupLogDestination(accessLogs),
      // WebSocket context variables: one line per connection attempt and per message.
      format: AccessLogFormat.custom(
        JSON.stringify({
          requestId: '$context.requestId',
          time: '$context.requestTime',
          ip: '$context.identity.sourceIp',
          connectionId: '$context.connectionId',
          eventType: '$context.eventType',
          routeKey: '$context.routeKey',
          // The agent the authorizer named (its context), never anything of the token.
          agent: '$context.authorizer.agentId',
          status: '$context.status',
          messageId: '$context.messageId',
          error: '$context.error.message',
          integrationError: '$context.integration.error',
          authorizerError: '$context.authorizer.error',
        }),
      ),
    };
    // API Gateway writes REST and WebSocket logs with the account's role; this one may write to
    // the channel's access log group only.
    const role = new Role(this, 'LoggingRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      inlinePolicies: {
        accessLogs: new PolicyDocument({
          statements: [
            new PolicyStatement({
              actions: ['logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
              resources: [accessLogs.logGroupArn],
            }),
            new PolicyStatement({
              actions: ['logs:DescribeLogGroups'],
              resources: [
                Stack.of(this).formatArn({
                  service: 'logs',
                  resource: 'log-group',
                  resourceName: '*',
                  arnFormat: ArnFormat.COLON_RESOURCE_NAME,
                }),
              ],
            }),
          ],
        }),
      },
    });
    const account = new CfnAccount(this, 'LoggingAccount', { cloudWatchRoleArn: role.roleArn });
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:${nagRegionAndAccount(Stack.of(this))}:log-group:*]`,
      reason:
        'logs:DescribeLogGroups is a listing and takes no narrower resource; writing is allowed on the access log group only.',
    });
    return { settings, account };
  }

  /**
   * PostToConnection and DeleteConnection on this stage's connections, nothing else: not GET (the
   * function never reads a connection) and no other API or stage.
   */
  grantAnswerAndClose(grantee: IGrantable & IConstruct): Grant {
    const api = Stack.of(this).formatArn({ service: 'execute-api', resource: this.api.apiId });
    const methods = ['POST', 'DELETE'];
    const cfnApi = this.api.node.defaultChild;
    if (!(cfnApi instanceof CfnElement))
      throw new Error('CallToolChannel: the WebSocket API has no CloudFormation resource.');
    const apiId = Stack.of(this).getLogicalId(cfnApi);
    for (const method of methods) {
      Validations.of(grantee).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:${nagRegionAndAccount(Stack.of(this))}:<${apiId}>/${channelStageName}/${method}/@connections/*]`,
        reason:
          'Connection ids are minted by API Gateway per connection: the grant names this API, its one stage and the method, and any connection of it.',
      });
    }
    return Grant.addToPrincipal({
      grantee,
      actions: ['execute-api:ManageConnections'],
      resourceArns: methods.map((method) => `${api}/${channelStageName}/${method}/@connections/*`),
    });
  }
}
