// The one middleware stack every Lambda composes: structured logging with the request's context,
// an early timeout that answers before Lambda kills the invocation, and error mapping that shows a
// client only what was meant for it and replaces every other failure with a generic answer.
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { flushMetrics, type InvocationMetrics } from './metrics.js';
import { trackTimeLeft } from './time-left.js';

/** An error whose message was written for the client (status and message are sent as they are). */
export class ExposedError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'ExposedError';
  }
}

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number };

/** How a function renders an error body: MCP answers JSON-RPC errors, pages answer HTML. */
export type ErrorRenderer = (statusCode: number, message: string) => HttpResult;

export const jsonErrorRenderer: ErrorRenderer = (statusCode, message) => ({
  statusCode,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  body: JSON.stringify({ error: { message } }),
});

interface ErrorMappingOptions {
  readonly logger: Logger;
  readonly render: ErrorRenderer;
}

const genericMessages: Record<number, string> = {
  500: 'The gateway could not complete the request.',
  504: 'The gateway ran out of time for this request.',
};

const errorMapping = ({ logger, render }: ErrorMappingOptions): MiddlewareObj<APIGatewayProxyEventV2, HttpResult> => ({
  onError: (request) => {
    const { error } = request;
    if (error instanceof ExposedError) {
      request.response = render(error.statusCode, error.message);
      return;
    }
    const timedOut = error?.name === 'TimeoutError';
    const statusCode = timedOut ? 504 : 500;
    // The full error goes to the log (which never holds secrets); the client gets a fixed sentence.
    logger.error(timedOut ? 'request timed out' : 'request failed', { error });
    request.response = render(statusCode, genericMessages[statusCode] ?? 'The gateway could not complete the request.');
  },
});

export type HttpHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
  options: { signal: AbortSignal },
) => Promise<HttpResult>;

export interface FunctionStackOptions extends ErrorMappingOptions {
  /** Time kept back before the Lambda deadline to answer with a timeout instead of being killed. */
  readonly timeoutMarginMs?: number;
  /** Flushed after every invocation. @default none: the function records no metrics */
  readonly metrics?: InvocationMetrics | null;
}

/** The metrics flush, for a function that records metrics. */
const metricsFlush = <Event, Result>(metrics: InvocationMetrics | null | undefined) =>
  metrics === null || metrics === undefined ? [] : [flushMetrics<Event, Result>(metrics)];

/** Wraps a handler in the shared stack. */
export const withGatewayMiddleware = (handler: HttpHandler, options: FunctionStackOptions) =>
  middy<APIGatewayProxyEventV2, HttpResult>(handler, { timeoutEarlyInMillis: options.timeoutMarginMs ?? 500 })
    .use(trackTimeLeft())
    .use(injectLambdaContext(options.logger, { resetKeys: true }))
    .use(metricsFlush(options.metrics))
    .use(errorMapping(options));

/**
 * The stack for functions an approval run or a schedule invokes (no HTTP): structured logging with the
 * invocation's context. Errors are thrown on, so Step Functions' retries and the reconciler's next
 * pass see them.
 */
export const withTaskMiddleware = <Event, Result>(
  handler: (event: Event, context: Context) => Promise<Result>,
  options: { readonly logger: Logger; readonly metrics?: InvocationMetrics | null },
) =>
  middy<Event, Result>(handler)
    .use(trackTimeLeft<Event, Result>())
    .use(injectLambdaContext(options.logger, { resetKeys: true }))
    .use(metricsFlush(options.metrics));
