// The agents' token authorizer, one Lambda REQUEST authorizer for both APIs: /mcp and POST
// /tool/call-tool on the HTTP API (payload 2.0, simple responses), and $connect of the
// /tool/call-tool WebSocket API (an IAM policy). The bearer token of the Authorization header is
// checked (issuer, keys, expiry, the agent scope or an audience), and the caller it names goes on
// in the authorizer's context; who that caller is, the functions behind decide from the
// configuration. Nothing of the token is logged.
//
// On the HTTP API a token that is not valid is let through with no caller, so that the MCP
// function answers the 401 with its WWW-Authenticate challenge (a deny would be API Gateway's bare
// 403); the function refuses every request whose context names no caller (docs/adr/0002-identity-the-token-names-a-subject-the-configuration-names-t.md).
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import type { Caller } from '../shared/auth/agent.js';
import { bearerToken } from '../shared/edge/tool-call/bearer.js';
import { errorText } from '../shared/errors.js';
import { agentTokenAuthenticator } from './commons/agent-tokens.js';
import { type CallerContext, callerContext } from './commons/caller-context.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { serviceLogger } from './commons/logger.js';
import { withTaskMiddleware } from './commons/middleware.js';
import { processAgentAuthorizerEnvironment } from './commons/token-environments.js';

export interface AgentAuthorizerDeps {
  /** A bearer token to the caller it names, or null for any token that is not valid. */
  readonly authenticate: (token: string) => Promise<Caller | null>;
  readonly logger: Logger;
}

const Headers = z.record(z.string(), z.string().optional()).nullish();

/** $connect on the WebSocket API. */
const SocketEvent = z.object({
  methodArn: z.string().min(1),
  headers: Headers,
  requestContext: z.object({ connectionId: z.string().optional() }).optional(),
});

/** A route of the HTTP API (payload format 2.0). */
const HttpEvent = z.object({
  version: z.literal('2.0'),
  routeArn: z.string().min(1),
  headers: Headers,
  requestContext: z.object({ requestId: z.string().optional() }).optional(),
});

export interface SocketAuthorizerResult {
  readonly principalId: string;
  readonly policyDocument: {
    readonly Version: '2012-10-17';
    readonly Statement: readonly { Action: 'execute-api:Invoke'; Effect: 'Allow' | 'Deny'; Resource: string }[];
  };
  readonly context?: CallerContext;
}

/** The HTTP API's simple response: the context is empty when the token names no caller. */
export interface HttpAuthorizerResult {
  readonly isAuthorized: true;
  readonly context: CallerContext;
}

const policy = (effect: 'Allow' | 'Deny', resource: string) => ({
  Version: '2012-10-17' as const,
  Statement: [{ Action: 'execute-api:Invoke' as const, Effect: effect, Resource: resource }],
});

/** The Authorization header's value, whatever the header name's case. */
const authorizationOf = (headers: Readonly<Record<string, string | undefined>>): string | undefined =>
  Object.entries(headers).find(([name]) => name.toLowerCase() === 'authorization')?.[1];

export const createAgentAuthorizer = (deps: AgentAuthorizerDeps) => {
  const check = async (
    headers: Readonly<Record<string, string | undefined>> | null | undefined,
    where: Record<string, string | null>,
  ): Promise<Caller | null> => {
    const token = bearerToken(authorizationOf(headers ?? {}));
    const caller =
      token === null
        ? null
        : await deps.authenticate(token).catch((error: unknown) => {
            // The issuer's keys could not be had: the request fails (API Gateway answers 500, a
            // retry may pass) rather than being told its token is not valid, and nothing is cached.
            deps.logger.warn("an agent's token could not be checked now", { ...where, error: errorText(error) });
            throw error;
          });
    if (caller === null) {
      deps.logger.info('token refused', { ...where, reason: token === null ? 'no bearer token' : 'token not valid' });
    }
    return caller;
  };
  const authorize = async (event: unknown): Promise<SocketAuthorizerResult | HttpAuthorizerResult> => {
    const http = HttpEvent.safeParse(event);
    if (http.success) {
      const caller = await check(http.data.headers, { request_id: http.data.requestContext?.requestId ?? null });
      return { isAuthorized: true, context: caller === null ? {} : callerContext(caller) };
    }
    const socket = SocketEvent.safeParse(event);
    // API Gateway always sends one of the two; anything else has nothing to allow.
    if (!socket.success) throw new Error('The event is neither an HTTP API nor a WebSocket REQUEST authorizer event.');
    const { methodArn, headers, requestContext } = socket.data;
    const caller = await check(headers, { connection_id: requestContext?.connectionId ?? null });
    if (caller === null) return { principalId: 'anonymous', policyDocument: policy('Deny', methodArn) };
    return {
      principalId: caller.kind === 'token' ? caller.subject : caller.agentId,
      policyDocument: policy('Allow', methodArn),
      context: callerContext(caller),
    };
  };
  return withTaskMiddleware(authorize, { logger: deps.logger });
};

/** The Lambda entry point: composed from the environment on first use. */
export const handler = lazyHandler(() =>
  createAgentAuthorizer({
    authenticate: agentTokenAuthenticator(processAgentAuthorizerEnvironment()),
    logger: serviceLogger('agent-authorizer'),
  }),
);
