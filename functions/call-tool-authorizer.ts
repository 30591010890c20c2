// The /tool/call-tool WebSocket API's $connect authorizer (a Lambda REQUEST authorizer): the
// agent's bearer token from the handshake's Authorization header, checked exactly as the HTTP
// API's JWT authorizer checks it for /mcp, allows the connection with the agent in its context,
// or denies it. Nothing of the token is logged.
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import type { AgentIdentity } from '../shared/auth/agent.js';
import { agentTokenAuthenticator } from './commons/agent-tokens.js';
import { type AgentContext, agentContext } from './commons/channel-identity.js';
import { processChannelAuthorizerEnvironment } from './commons/environment.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { serviceLogger } from './commons/logger.js';
import { withTaskMiddleware } from './commons/middleware.js';

export interface ChannelAuthorizerDeps {
  /** A bearer token to its agent, or null for any token that is not valid. */
  readonly authenticate: (token: string) => Promise<AgentIdentity | null>;
  readonly logger: Logger;
}

const AuthorizerEvent = z.object({
  methodArn: z.string().min(1),
  headers: z.record(z.string(), z.string().optional()).nullish(),
  requestContext: z.object({ connectionId: z.string().optional() }).optional(),
});

export interface AuthorizerResult {
  readonly principalId: string;
  readonly policyDocument: {
    readonly Version: '2012-10-17';
    readonly Statement: readonly { Action: 'execute-api:Invoke'; Effect: 'Allow' | 'Deny'; Resource: string }[];
  };
  readonly context?: AgentContext;
}

const policy = (effect: 'Allow' | 'Deny', resource: string) => ({
  Version: '2012-10-17' as const,
  Statement: [{ Action: 'execute-api:Invoke' as const, Effect: effect, Resource: resource }],
});

/** The token of an `Authorization: Bearer <token>` header, whatever the header's case. */
const bearerToken = (headers: Readonly<Record<string, string | undefined>>): string | null => {
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'authorization');
  const match = /^Bearer +(\S+) *$/i.exec(entry?.[1] ?? '');
  return match?.[1] ?? null;
};

export const createChannelAuthorizer = (deps: ChannelAuthorizerDeps) => {
  const authorize = async (event: unknown): Promise<AuthorizerResult> => {
    const parsed = AuthorizerEvent.safeParse(event);
    // API Gateway always sends the method ARN; without one there is nothing to allow.
    if (!parsed.success) throw new Error('The authorizer event is not a WebSocket REQUEST authorizer event.');
    const { methodArn, headers, requestContext } = parsed.data;
    const token = bearerToken(headers ?? {});
    const agent = token === null ? null : await deps.authenticate(token);
    if (agent === null) {
      deps.logger.info('connection refused', {
        connection_id: requestContext?.connectionId ?? null,
        reason: token === null ? 'no bearer token' : 'token not valid',
      });
      return { principalId: 'anonymous', policyDocument: policy('Deny', methodArn) };
    }
    return { principalId: agent.id, policyDocument: policy('Allow', methodArn), context: agentContext(agent) };
  };
  return withTaskMiddleware(authorize, { logger: deps.logger });
};

/** The Lambda entry point: composed from the environment on first use. */
export const handler = lazyHandler(() => {
  const environment = processChannelAuthorizerEnvironment();
  return createChannelAuthorizer({
    authenticate: agentTokenAuthenticator(environment),
    logger: serviceLogger('call-tool-authorizer'),
  });
});
