// The /tool/call-tool WebSocket API's function ($connect and $default): a connection the
// authorizer let in is accepted; its first message, the tools/call params, runs as the agent the
// authorizer's caller is under the configuration, and the one frame is posted back before the connection is closed. A later
// message of the same connection loses the once-per-connection claim and runs nothing. An answer
// beyond API Gateway's 128 KB message limit is replaced by a -32603 frame naming the execution.
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import { ApiGatewayConnections, managementClientAt } from '../shared/adapters/api-gateway-connections.js';
import { DynamoDbConnectionClaims } from '../shared/adapters/dynamodb/connection-claims.js';
import type { ChannelConnections, ConnectionClaims } from '../shared/channel-connections.js';
import { systemClock } from '../shared/clock.js';
import { answerChannelBytes, channelErrorFrame } from '../shared/edge/call-tool/serve.js';
import { jsonRpcCodes } from '../shared/json-rpc-codes.js';
import { RequestGate } from '../shared/limits/request-gate.js';
import type { CallToolDeps } from '../shared/use-cases/call-tool.js';
import { identifyCaller } from '../shared/use-cases/identify-caller.js';
import { agentServicesFor, serviceLogger } from './commons/aws.js';
import { documentClient } from './commons/aws-store.js';
import { callerFromContext } from './commons/caller-context.js';
import { processChannelSocketEnvironment } from './commons/environment.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { functionMetrics, type InvocationMetrics, invocationMetrics } from './commons/metrics.js';
import { withTaskMiddleware } from './commons/middleware.js';
import { maxSocketFrameBytes, messageBytes, tooLargeToSend } from './commons/socket-message.js';
import { timeLeftMs } from './commons/time-left.js';

export interface ChannelSocketDeps {
  readonly services: CallToolDeps;
  readonly logger: Logger;
  readonly connections: ChannelConnections;
  readonly claims: ConnectionClaims;
  /** Per-agent rate and concurrency, per instance as on /mcp. */
  readonly gate: RequestGate | null;
  /** Flushed after every message. @default none */
  readonly metrics?: InvocationMetrics | null;
}

const SocketEvent = z.object({
  requestContext: z.object({
    eventType: z.enum(['CONNECT', 'MESSAGE', 'DISCONNECT']),
    connectionId: z.string().min(1),
    authorizer: z.record(z.string(), z.unknown()).nullish(),
  }),
  body: z.string().nullish(),
  isBase64Encoded: z.boolean().optional(),
});

export const createChannelSocketFunction = (deps: ChannelSocketDeps) => {
  const handle = async (event: unknown): Promise<{ statusCode: number }> => {
    const { requestContext, body, isBase64Encoded } = SocketEvent.parse(event);
    // $connect reaches here only once the authorizer allowed it.
    if (requestContext.eventType !== 'MESSAGE') return { statusCode: 200 };
    const { connectionId } = requestContext;
    const agent = await identifyCaller(deps.services, callerFromContext(requestContext.authorizer ?? {}));
    deps.logger.appendKeys({ connection_id: connectionId, agent_id: agent?.id ?? null });
    if (agent !== null && !(await deps.claims.claim(connectionId, agent.id))) {
      deps.logger.warn('a further message on a connection already answered runs nothing');
      return { statusCode: 200 };
    }
    const bytes = messageBytes(body ?? '', isBase64Encoded === true);
    const frame =
      agent === null
        ? channelErrorFrame(jsonRpcCodes.invalidRequest, 'The connection carries no agent identity.')
        : (await answerChannelBytes(deps.services, { gate: deps.gate }, { agent, bytes, traceparent: null })).frame;
    const sendable = frame.length > maxSocketFrameBytes ? tooLargeToSend(frame) : frame;
    try {
      if ((await deps.connections.send(connectionId, sendable)) === 'gone') {
        deps.logger.info('the client left before its frame was sent; the call is recorded all the same');
      }
    } finally {
      await deps.connections.close(connectionId);
    }
    return { statusCode: 200 };
  };
  return withTaskMiddleware(handle, { logger: deps.logger, metrics: deps.metrics ?? null });
};

/** The Lambda entry point: composed from the environment on first use. */
export const handler = lazyHandler(() => {
  const environment = processChannelSocketEnvironment();
  const logger = serviceLogger('call-tool-socket');
  const metrics = functionMetrics();
  const services = { ...agentServicesFor(environment, logger, metrics), timeLeftMs };
  return createChannelSocketFunction({
    services,
    metrics: invocationMetrics(metrics, services),
    logger,
    connections: new ApiGatewayConnections(managementClientAt(environment.CONNECTIONS_URL)),
    claims: new DynamoDbConnectionClaims(documentClient(), environment.EXECUTIONS_TABLE, systemClock),
    gate: new RequestGate(systemClock),
  });
});
