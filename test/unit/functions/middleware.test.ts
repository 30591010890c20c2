// The shared middleware stack: errors meant for the client pass, every other failure becomes a
// generic answer, and a handler about to run out of Lambda time answers before it is killed.
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ExposedError, jsonErrorRenderer, withGatewayMiddleware } from '../../../functions/commons/middleware.js';
import { verifies } from '../../support/requirements.js';

const logged: string[] = [];
const logger = new Logger({ serviceName: 'middleware-test', logLevel: 'ERROR' });
logger.error = (message: unknown, ...rest: unknown[]) => {
  logged.push(JSON.stringify([message, ...rest], (_key, value) => (value instanceof Error ? value.message : value)));
};

const event = {
  version: '2.0',
  routeKey: 'POST /x',
  rawPath: '/x',
  rawQueryString: '',
  headers: {},
  isBase64Encoded: false,
  requestContext: {
    accountId: '0',
    apiId: 'test',
    domainName: 'localhost',
    domainPrefix: 'localhost',
    http: { method: 'POST', path: '/x', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
    requestId: 'r',
    routeKey: 'POST /x',
    stage: '$default',
    time: '',
    timeEpoch: 0,
  },
} satisfies APIGatewayProxyEventV2;

const contextWith = (remainingMs: number): Context => {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:0:function:test',
    memoryLimitInMB: '128',
    awsRequestId: 'request-1',
    logGroupName: 'g',
    logStreamName: 's',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};

describe('the shared middleware stack', () => {
  it(
    verifies('functions.error-mapping', 'replaces an unexpected failure with a generic message and logs the detail'),
    async () => {
      const handler = withGatewayMiddleware(
        async () => {
          throw new Error('ConditionalCheckFailed on table secret-internal-name, token sk-live-123');
        },
        { logger, render: jsonErrorRenderer },
      );
      const result = await handler(event, contextWith(10_000));
      expect(result.statusCode).toBe(500);
      expect(result.body).toBe(JSON.stringify({ error: { message: 'The gateway could not complete the request.' } }));
      expect(result.body).not.toContain('secret-internal-name');
      expect(logged.at(-1)).toContain('secret-internal-name');
    },
  );

  it(verifies('functions.error-mapping', 'shows the message of an error written for the client'), async () => {
    const handler = withGatewayMiddleware(
      async () => {
        throw new ExposedError(409, 'This call was already decided.');
      },
      { logger, render: jsonErrorRenderer },
    );
    const result = await handler(event, contextWith(10_000));
    expect(result).toMatchObject({
      statusCode: 409,
      body: JSON.stringify({ error: { message: 'This call was already decided.' } }),
    });
  });

  it(verifies('functions.timeout', 'answers 504 before the Lambda deadline instead of hanging'), async () => {
    const handler = withGatewayMiddleware(
      // Never answers on its own: only the middleware's deadline can end this call.
      async (_event, _context, { signal }) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        return { statusCode: 200, body: 'answered after the abort' };
      },
      { logger, render: jsonErrorRenderer, timeoutMarginMs: 100 },
    );
    const result = await handler(event, contextWith(300));
    expect(result.statusCode).toBe(504);
    expect(result.body).toContain('ran out of time');
  });
});
