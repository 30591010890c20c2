// The AWS floor under the per-agent limits: API Gateway throttles every route of the stage, and the
// construct refuses throttling values API Gateway would not take, saying what it got.
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { McpApi, type McpApiProps } from '../../infra/constructs/mcp-api.js';
import { transportCaps } from '../../shared/limits/transport-caps.js';
import { verifies } from '../support/requirements.js';

const apiStack = (props: Partial<McpApiProps> = {}): Template => {
  const stack = new Stack(new App(), 'ThrottlingTest', { env: { account: '111111111111', region: 'eu-west-1' } });
  const fn = (name: string) =>
    LambdaFunction.fromFunctionArn(stack, name, `arn:aws:lambda:eu-west-1:111111111111:function:${name}`);
  new McpApi(stack, 'AgentApi', {
    mcpFunction: fn('mcp'),
    metadataFunction: fn('metadata'),
    authorizerFunction: fn('agent-authorizer'),
    ...props,
  });
  return Template.fromStack(stack);
};

describe('API Gateway throttling', () => {
  it(
    verifies(
      ['limits.aws-floor', 'limits.caps-as-data'],
      'throttles every route of the stage (the figures of shared/limits/: 200 requests per second, bursts of 400, unless told)',
    ),
    () => {
      expect(transportCaps.apiStage).toEqual({ rateLimitPerSecond: 200, burstLimit: 400 });
      apiStack().hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        StageName: '$default',
        DefaultRouteSettings: {
          ThrottlingRateLimit: transportCaps.apiStage.rateLimitPerSecond,
          ThrottlingBurstLimit: transportCaps.apiStage.burstLimit,
        },
      });
      apiStack({ rateLimitPerSecond: 50, burstLimit: 100 }).hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      });
    },
  );

  it(verifies('limits.aws-floor', 'refuses a rate or burst API Gateway would not take, naming the value'), () => {
    expect(() => apiStack({ rateLimitPerSecond: 0 })).toThrow(
      'McpApi: rateLimitPerSecond must be a number above 0 (got 0).',
    );
    expect(() => apiStack({ burstLimit: 2.5 })).toThrow(
      'McpApi: burstLimit must be a whole number of at least 1 (got 2.5).',
    );
  });
});
