// CDK assertion tests for /tool/call-tool in AWS: the WebSocket API (its two routes, the REQUEST
// authorizer and its token settings, the throttled and logged stage), the channel function's
// grants beside the MCP function's, and POST /tool/call-tool on the HTTP API.
//
// Long: one assertion block per resource and grant of the channel, on three syntheses.
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { AgentIdentity } from '../../infra/constructs/agent-identity.js';
import { CallToolChannel, channelStageName } from '../../infra/constructs/call-tool-channel.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { McpApi } from '../../infra/constructs/mcp-api.js';
import { verifies } from '../support/requirements.js';
import {
  environmentOf,
  grantsOf,
  isObject,
  type JsonObject,
  logicalIdOf,
  nagFindings,
  ofApi,
  propertiesOf,
  resourcesOf,
  synthesize,
} from './synthesis.js';

const synthesized = synthesize();
const { stack, template } = synthesized;
const channel = stack.node.findChild('CallToolChannel');
if (!(channel instanceof CallToolChannel)) throw new Error('the stack has no CallToolChannel');
const socket = stack.node.findChild('CallToolSocket');
const authorizerFunction = stack.node.findChild('AgentAuthorizer');
const mcp = stack.node.findChild('Mcp');
const identity = stack.node.findChild('AgentIdentity');
if (
  !(
    socket instanceof GatewayFunction &&
    authorizerFunction instanceof GatewayFunction &&
    mcp instanceof GatewayFunction
  )
) {
  throw new Error('the stack lacks one of its functions');
}
if (!(identity instanceof AgentIdentity)) throw new Error('the stack has no AgentIdentity');
const apiId = logicalIdOf(channel.api);

/** The resources of a type that belong to the WebSocket API. */
const ofChannel = (type: string): JsonObject[] => ofApi(template, type, apiId);
/** The same, with their logical ids. */
const entriesOfChannel = (type: string): [string, JsonObject][] =>
  [...resourcesOf(template, type).entries()]
    .map(([id, resource]): [string, JsonObject] => [id, propertiesOf(resource)])
    .filter(([, properties]) => isObject(properties.ApiId) && properties.ApiId.Ref === apiId);

/** The Lambda function an API route's integration invokes, as the integration names it. */
const integrationTarget = (route: JsonObject | undefined): string => {
  const target = JSON.stringify(route?.Target ?? null);
  const integrations = [...resourcesOf(template, 'AWS::ApiGatewayV2::Integration').entries()].filter(([id]) =>
    target.includes(`"Ref":"${id}"`),
  );
  expect(integrations).toHaveLength(1);
  return JSON.stringify(propertiesOf(integrations[0]?.[1]).IntegrationUri);
};

describe('the /tool/call-tool WebSocket API', () => {
  it(
    verifies(
      'aws.call-tool-channel',
      'has exactly $connect behind the REQUEST authorizer and $default, both invoking the channel function',
    ),
    () => {
      template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });
      const routes = ofChannel('AWS::ApiGatewayV2::Route');
      expect(routes.map((route) => route.RouteKey).sort()).toEqual(['$connect', '$default']);
      const authorizers = entriesOfChannel('AWS::ApiGatewayV2::Authorizer');
      expect(authorizers).toHaveLength(1);
      const [authorizerId, authorizer] = authorizers[0] ?? [];
      expect(authorizer).toMatchObject({
        AuthorizerType: 'REQUEST',
        IdentitySource: ['route.request.header.Authorization'],
      });
      expect(JSON.stringify(authorizer?.AuthorizerUri)).toContain(logicalIdOf(authorizerFunction.function));
      const connect = routes.find((route) => route.RouteKey === '$connect');
      expect(connect).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } });
      const message = routes.find((route) => route.RouteKey === '$default');
      expect(message?.AuthorizationType ?? 'NONE').toBe('NONE');
      for (const route of [connect, message]) {
        expect(integrationTarget(route)).toContain(logicalIdOf(socket.function));
      }
    },
  );

  it(
    verifies(
      'aws.call-tool-channel',
      "is the HTTP API's agent authorizer too: one token check, with the agents' issuer, scope and keys",
    ),
    () => {
      const http = [...resourcesOf(template, 'AWS::ApiGatewayV2::Authorizer').values()]
        .map(propertiesOf)
        .find((properties) => properties.AuthorizerPayloadFormatVersion === '2.0');
      expect(JSON.stringify(http?.AuthorizerUri)).toContain(logicalIdOf(authorizerFunction.function));
      const environment = environmentOf(template, logicalIdOf(authorizerFunction.function));
      expect(environment).toMatchObject({
        AGENT_CLAIM: 'client_id',
        AGENT_JWT_SCOPES: identity.scope,
        AGENT_JWT_AUDIENCE: '',
      });
      expect(JSON.stringify(environment.AGENT_JWT_ISSUER)).toContain(logicalIdOf(identity.userPool));
      const jwks = JSON.stringify(environment.AGENT_JWKS_URI);
      expect(jwks).toContain(logicalIdOf(identity.userPool));
      expect(jwks).toContain('/.well-known/jwks.json');
      // The authorizer needs nothing of the data: no table, no key.
      expect(JSON.stringify(environment)).not.toContain('EXECUTIONS_TABLE');
      expect(grantsOf(template, logicalIdOf(authorizerFunction.role), 'dynamodb')).toEqual([]);
      expect(grantsOf(template, logicalIdOf(authorizerFunction.role), 'kms')).toEqual([]);
      const outside = synthesize({
        agentAuthorization: { issuer: 'https://login.example.com/', audience: ['gateway'], requiredScopes: [] },
      });
      const outsideAuthorizer = outside.stack.node.findChild('AgentAuthorizer');
      if (!(outsideAuthorizer instanceof GatewayFunction)) throw new Error('no authorizer');
      const outsideEnvironment = environmentOf(outside.template, logicalIdOf(outsideAuthorizer.function));
      expect(outsideEnvironment).toMatchObject({
        AGENT_JWT_ISSUER: 'https://login.example.com/',
        AGENT_JWT_AUDIENCE: 'gateway',
        AGENT_JWT_SCOPES: '',
        AGENT_CLAIM: 'sub',
      });
      expect(outsideEnvironment).not.toHaveProperty('AGENT_JWKS_URI');
    },
  );

  it(verifies('aws.call-tool-channel', 'throttles its one stage, and leaves the account logging role alone'), () => {
    const stages = ofChannel('AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(1);
    const [stage] = stages;
    expect(stage).toMatchObject({
      StageName: channelStageName,
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
    });
    // API Gateway refuses a stage with access logs in an account without its CloudWatch role.
    expect(stage).not.toHaveProperty('AccessLogSettings');
    expect(resourcesOf(template, 'AWS::ApiGateway::Account').size).toBe(0);
    expect(channel.node.tryFindChild('LoggingRole')).toBeUndefined();
  });

  it(
    verifies(
      ['aws.call-tool-channel', 'deploy.account-logging-role'],
      'sets the account logging role and logs the stage with it when asked, and is cdk-nag clean both ways',
    ),
    () => {
      const asked = synthesize({ setApiGatewayLoggingRole: true });
      const askedChannel = asked.stack.node.findChild('CallToolChannel');
      const stageEntries = [...resourcesOf(asked.template, 'AWS::ApiGatewayV2::Stage').entries()].filter(
        ([, resource]) => propertiesOf(resource).StageName === channelStageName,
      );
      expect(stageEntries).toHaveLength(1);
      const [stageId, stageResource] = stageEntries[0] ?? ['', {}];
      const stage = propertiesOf(stageResource);
      const logs = isObject(stage.AccessLogSettings) ? stage.AccessLogSettings : {};
      const logGroupId = logicalIdOf(askedChannel.node.findChild('AccessLogs'));
      expect(logs.DestinationArn).toEqual({ 'Fn::GetAtt': [logGroupId, 'Arn'] });
      const format: unknown = JSON.parse(String(logs.Format));
      expect(format).toMatchObject({
        connectionId: '$context.connectionId',
        eventType: '$context.eventType',
        agent: '$context.authorizer.agentId',
      });
      // WebSocket logs are written with the account's role, set before the stage.
      const [account, ...more] = [...resourcesOf(asked.template, 'AWS::ApiGateway::Account').entries()];
      expect(more).toEqual([]);
      expect(resourcesOf(asked.template, 'AWS::ApiGatewayV2::Stage').get(stageId)?.DependsOn).toContain(account?.[0]);
      const roleId = logicalIdOf(askedChannel.node.findChild('LoggingRole'));
      expect(propertiesOf(account?.[1]).CloudWatchRoleArn).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
      const role = propertiesOf(resourcesOf(asked.template, 'AWS::IAM::Role').get(roleId));
      const writes = JSON.stringify(role.Policies);
      expect(writes).toContain(logGroupId);
      expect(writes).not.toContain('logs:CreateLogGroup');
      expect(JSON.stringify(role.AssumeRolePolicyDocument)).toContain('apigateway.amazonaws.com');
      for (const findings of [nagFindings(synthesized), nagFindings(asked)]) {
        expect(findings).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
      }
    },
  );

  it(
    verifies(
      'aws.call-tool-channel',
      "grants the channel function exactly the MCP function's data grants, and answering and closing this stage's connections",
    ),
    () => {
      for (const service of ['dynamodb', 'kms', 'events', 'lambda', 'secretsmanager']) {
        expect(grantsOf(template, logicalIdOf(socket.role), service), service).toEqual(
          grantsOf(template, logicalIdOf(mcp.role), service),
        );
      }
      // The channel serves tools/call but not tasks/cancel: it starts approval runs and never signals one.
      const states = grantsOf(template, logicalIdOf(socket.role), 'states');
      expect(states).toEqual(
        grantsOf(template, logicalIdOf(mcp.role), 'states').filter((grant) => grant.includes('StartExecution')),
      );
      expect(states).toHaveLength(1);
      expect(grantsOf(template, logicalIdOf(socket.role), 'dynamodb').length).toBeGreaterThan(0);
      const connections = (method: string) =>
        `execute-api:ManageConnections ${JSON.stringify({
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':execute-api:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':',
              { Ref: apiId },
              `/${channelStageName}/${method}/@connections/*`,
            ],
          ],
        })}`;
      expect(grantsOf(template, logicalIdOf(socket.role), 'execute-api')).toEqual(
        [connections('DELETE'), connections('POST')].sort(),
      );
      // Nobody else may answer or close connections.
      for (const role of resourcesOf(template, 'AWS::IAM::Role').keys()) {
        if (role === logicalIdOf(socket.role)) continue;
        expect(grantsOf(template, role, 'execute-api'), role).toEqual([]);
      }
      expect(environmentOf(template, logicalIdOf(socket.function))).toMatchObject({
        CONNECTIONS_URL: {
          'Fn::Join': [
            '',
            [
              'https://',
              { Ref: apiId },
              '.execute-api.',
              { Ref: 'AWS::Region' },
              '.',
              { Ref: 'AWS::URLSuffix' },
              `/${channelStageName}`,
            ],
          ],
        },
        STATE_MACHINE_ARN: environmentOf(template, logicalIdOf(mcp.function)).STATE_MACHINE_ARN,
        EXECUTIONS_TABLE: environmentOf(template, logicalIdOf(mcp.function)).EXECUTIONS_TABLE,
      });
    },
  );

  it(verifies('aws.call-tool-channel', 'refuses a rate or burst API Gateway would not take, naming the value'), () => {
    const build = (props: { rateLimitPerSecond?: number; burstLimit?: number }) => {
      const scope = new Stack(new App(), 'ChannelTest');
      const fn = (name: string) =>
        LambdaFunction.fromFunctionArn(scope, name, `arn:aws:lambda:eu-west-1:111111111111:function:${name}`);
      new CallToolChannel(scope, 'Channel', {
        channelFunction: fn('socket'),
        authorizerFunction: fn('authorizer'),
        ...props,
      });
      return Template.fromStack(scope);
    };
    expect(() => build({ rateLimitPerSecond: -1 })).toThrow(
      'CallToolChannel: rateLimitPerSecond must be a number above 0 (got -1).',
    );
    expect(() => build({ burstLimit: 0 })).toThrow(
      'CallToolChannel: burstLimit must be a whole number of at least 1 (got 0).',
    );
    build({ rateLimitPerSecond: 20, burstLimit: 40 }).hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
    });
  });
});

describe('POST /tool/call-tool on the HTTP API', () => {
  it(verifies('aws.call-tool-post', 'sits behind the same agent authorizer as POST /mcp, on the MCP function'), () => {
    const api = stack.node.findChild('AgentApi');
    if (!(api instanceof McpApi)) throw new Error('no AgentApi');
    const routes = ofApi(template, 'AWS::ApiGatewayV2::Route', logicalIdOf(api.api));
    const route = (key: string) => routes.find((properties) => properties.RouteKey === key);
    const channelRoute = route('POST /tool/call-tool');
    const mcpRoute = route('POST /mcp');
    expect(channelRoute).toMatchObject({
      AuthorizationType: 'CUSTOM',
      AuthorizerId: mcpRoute?.AuthorizerId,
      Target: mcpRoute?.Target,
    });
    expect(channelRoute?.AuthorizerId).toBeDefined();
    expect(integrationTarget(channelRoute)).toContain(logicalIdOf(mcp.function));
    // Only POST: no other method reaches the MCP function on that path.
    expect(routes.filter((properties) => String(properties.RouteKey).endsWith(' /tool/call-tool'))).toHaveLength(1);
  });
});
