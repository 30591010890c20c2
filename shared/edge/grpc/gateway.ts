// The gRPC tool gateway (PccToolGateway/CreateMcpTransport, specs/tool-gateway-grpc.md): a driving
// adapter like shared/edge/mcp/. Each stream authenticates by its bearer token, opens with Connect, then
// carries JSON-RPC messages answered by json-rpc.ts, in any order, matched by id. Also serves the
// standard grpc.health.v1 Check for load balancers.
import * as grpc from '@grpc/grpc-js';
import type { AgentIdentity } from '../../auth/agent.js';
import { errorText } from '../../errors.js';
import type { RequestGate } from '../../limits/request-gate.js';
import type { Log } from '../../log.js';
import type { McpServices } from '../mcp/server.js';
import { bearerToken } from '../tool-call/bearer.js';
import { answerMessage, type StreamContext } from './json-rpc.js';
import { failure, healthCheck, loadServices } from './services.js';
import {
  ConnectMessage,
  originOf,
  RequestMessage,
  requestUuidMetadataKey,
  traceparentOf,
  wholeGatewayServerId,
} from './stream-context.js';

export interface GrpcLimits {
  /** Largest message accepted or sent, in bytes (gRPC answers RESOURCE_EXHAUSTED beyond it). */
  readonly maxMessageBytes: number;
  /** Messages a stream may carry, Connect included; the next ends it with RESOURCE_EXHAUSTED. */
  readonly maxMessagesPerStream: number;
  /** Streams one agent may have open at once; one more is refused with RESOURCE_EXHAUSTED. */
  readonly maxStreamsPerAgent: number;
  /** A stream with no message and nothing in flight for this long ends with DEADLINE_EXCEEDED. */
  readonly idleTimeoutMs: number;
}

export const defaultGrpcLimits: GrpcLimits = {
  maxMessageBytes: 256 * 1024,
  maxMessagesPerStream: 1_000,
  maxStreamsPerAgent: 16,
  idleTimeoutMs: 120_000,
};

export interface GrpcGatewayOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly services: McpServices;
  /** The agent a bearer token names, or null when it names none (checked like the HTTP front's). */
  readonly authenticate: (token: string) => Promise<AgentIdentity | null>;
  readonly limits?: Partial<GrpcLimits>;
  /** The agents' rate and concurrency limits, counted per JSON-RPC request; absent, none apply. */
  readonly requestGate?: RequestGate;
  readonly log: Log;
}

export interface GrpcGateway {
  readonly port: number;
  /** Refuses new streams, lets calls in flight finish (their executions complete), then stops. */
  close(): Promise<void>;
}

export const startGrpcGateway = async (options: GrpcGatewayOptions): Promise<GrpcGateway> => {
  const limits: GrpcLimits = { ...defaultGrpcLimits, ...options.limits };
  const { services, log } = options;
  const streamsPerAgent = new Map<string, number>();
  const inflight = new Set<Promise<unknown>>();
  /** Open streams, each ended by this when the gateway stops. */
  const live = new Set<(code: grpc.status, details: string) => void>();
  let closing = false;

  /**
   * One stream's life: authenticated (from its metadata) → awaiting Connect → connected (each
   * request_body answered as it completes) → half-closed by the client (calls in flight finish,
   * then a clean end) or ended (a refusal status, the client's cancellation or the idle timeout).
   * Messages are taken in order through one chain, so Connected is always the first answer.
   */
  const serveStream = (call: grpc.ServerDuplexStream<unknown, unknown>): void => {
    let state: 'awaiting_connect' | 'connected' | 'half_closed' | 'ended' = 'awaiting_connect';
    let stream: StreamContext | null = null;
    let agent: AgentIdentity | null = null;
    let counted = false;
    let pending = 0;
    let messages = 0;
    let idle: NodeJS.Timeout | undefined;

    const release = () => {
      clearTimeout(idle);
      if (!counted || agent === null) return;
      counted = false;
      const left = (streamsPerAgent.get(agent.id) ?? 1) - 1;
      if (left <= 0) streamsPerAgent.delete(agent.id);
      else streamsPerAgent.set(agent.id, left);
    };
    const fail = (code: grpc.status, details: string): void => {
      if (state === 'ended') return;
      state = 'ended';
      release();
      live.delete(fail);
      call.emit('error', failure(code, details));
    };
    live.add(fail);
    const finishIfDone = () => {
      if (state !== 'half_closed' || pending > 0) return;
      state = 'ended';
      release();
      live.delete(fail);
      call.end();
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        if (pending === 0)
          fail(grpc.status.DEADLINE_EXCEEDED, `No message for ${limits.idleTimeoutMs} ms: the stream ends.`);
        else armIdle();
      }, limits.idleTimeoutMs);
      idle.unref();
    };

    const authenticate = async (): Promise<void> => {
      const authorization = call.metadata.get('authorization')[0];
      const token = bearerToken(typeof authorization === 'string' ? authorization : undefined);
      if (token === null)
        return fail(grpc.status.UNAUTHENTICATED, 'A bearer token is required (authorization metadata).');
      try {
        agent = await options.authenticate(token);
      } catch (error) {
        // The issuer's keys could not be had (or the configuration read): not the token's fault.
        log.warn("an agent's token could not be checked now", { error: errorText(error) });
        return fail(grpc.status.UNAVAILABLE, 'The bearer token could not be checked now: retry shortly.');
      }
      if (agent === null) return fail(grpc.status.UNAUTHENTICATED, 'The bearer token is not valid.');
      if (closing) return fail(grpc.status.UNAVAILABLE, 'The gateway is stopping: retry shortly.');
      const open = streamsPerAgent.get(agent.id) ?? 0;
      if (open >= limits.maxStreamsPerAgent) {
        return fail(
          grpc.status.RESOURCE_EXHAUSTED,
          `An agent may have at most ${limits.maxStreamsPerAgent} streams open at once.`,
        );
      }
      streamsPerAgent.set(agent.id, open + 1);
      counted = true;
      armIdle();
    };

    const connect = async (raw: unknown): Promise<void> => {
      const parsed = ConnectMessage.safeParse(raw ?? {});
      if (!parsed.success || agent === null)
        return fail(grpc.status.INVALID_ARGUMENT, 'The Connect message is not valid.');
      const connectMessage = parsed.data;
      const serverId = connectMessage.server_id;
      let systemKey: string | null = null;
      if (serverId !== wholeGatewayServerId) {
        const current = await services.controlPlane.current();
        const known =
          current.kind === 'active' && current.snapshot.config.systems.some((system) => system.key === serverId);
        if (!known) {
          return fail(
            grpc.status.NOT_FOUND,
            `No server "${serverId.slice(0, 100)}": use a system's key, or "${wholeGatewayServerId}" for the whole gateway.`,
          );
        }
        systemKey = serverId;
      }
      if (state !== 'awaiting_connect') return;
      const requestUuid = call.metadata.get(requestUuidMetadataKey)[0];
      stream = {
        agent,
        systemKey,
        origin: originOf(connectMessage, typeof requestUuid === 'string' ? requestUuid : null),
        traceparent: traceparentOf(connectMessage),
        gate: options.requestGate ?? null,
      };
      state = 'connected';
      call.write({ connected: {} });
    };

    const answer = (context: StreamContext, text: string) => {
      pending += 1;
      const work = answerMessage(services, context, text)
        .then((reply) => {
          // A dropped stream loses no call: the execution completed; only the answer has nowhere to go.
          if (reply !== null && (state === 'connected' || state === 'half_closed') && !call.cancelled) {
            call.write({ json: JSON.stringify(reply) });
          }
        })
        .catch((error: unknown) => {
          log.warn('a gRPC message failed', { error: errorText(error) });
          fail(grpc.status.INTERNAL, 'The gateway met an internal fault.');
        })
        .finally(() => {
          pending -= 1;
          inflight.delete(work);
          finishIfDone();
        });
      inflight.add(work);
    };

    const take = async (raw: unknown): Promise<void> => {
      if (state === 'ended' || state === 'half_closed') return;
      if (closing) return fail(grpc.status.UNAVAILABLE, 'The gateway is stopping: retry on a new stream.');
      messages += 1;
      if (messages > limits.maxMessagesPerStream) {
        return fail(
          grpc.status.RESOURCE_EXHAUSTED,
          `A stream carries at most ${limits.maxMessagesPerStream} messages: open a new one.`,
        );
      }
      armIdle();
      const message = RequestMessage.safeParse(raw);
      const kind = message.success ? message.data.request : undefined;
      if (state === 'awaiting_connect') {
        if (kind !== 'connect' || !message.success) {
          return fail(grpc.status.FAILED_PRECONDITION, 'The first message of a stream must be Connect.');
        }
        return connect(message.data.connect);
      }
      if (kind === 'request_body' && message.success && stream !== null) {
        return answer(stream, message.data.request_body ?? '');
      }
      return fail(grpc.status.FAILED_PRECONDITION, 'Connect comes once, first; then only request_body messages.');
    };

    // One chain: authentication, then every message and the half-close, in the order they came.
    let chain = authenticate();
    const then = (step: () => Promise<void> | void) => {
      chain = chain.then(step).catch((error: unknown) => {
        log.warn('a gRPC stream failed', { error: errorText(error) });
        fail(grpc.status.INTERNAL, 'The gateway met an internal fault.');
      });
    };
    call.on('data', (raw: unknown) => then(() => take(raw)));
    call.on('end', () =>
      then(() => {
        if (state === 'ended') return;
        if (state === 'awaiting_connect')
          return fail(grpc.status.FAILED_PRECONDITION, 'The stream ended before Connect.');
        state = 'half_closed';
        finishIfDone();
      }),
    );
    call.on('cancelled', () => {
      state = 'ended';
      release();
      live.delete(fail);
    });
    call.on('error', () => release());
  };

  const { gateway, health } = loadServices();
  const server = new grpc.Server({
    'grpc.max_receive_message_length': limits.maxMessageBytes,
    'grpc.max_send_message_length': limits.maxMessageBytes * 4,
  });
  server.addService(gateway, { CreateMcpTransport: serveStream });
  server.addService(
    health,
    healthCheck(() => (closing ? 'NOT_SERVING' : 'SERVING')),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const address = options.host.includes(':')
      ? `[${options.host}]:${options.port}`
      : `${options.host}:${options.port}`;
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    );
  });

  let closed: Promise<void> | null = null;
  return {
    port,
    close: () => {
      closed ??= stop();
      return closed;
    },
  };

  async function stop(): Promise<void> {
    closing = true;
    // Calls in flight finish first: their executions complete and their answers go out; then
    // the streams still open end, telling their callers to come back.
    while (inflight.size > 0) await Promise.allSettled([...inflight]);
    for (const end of [...live]) end(grpc.status.UNAVAILABLE, 'The gateway is stopping: retry on a new stream.');
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 5_000);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }
};
