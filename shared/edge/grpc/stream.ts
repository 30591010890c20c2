// One CreateMcpTransport stream of the gRPC tool gateway, from its metadata to its end: the stream
// authenticates by its bearer token, opens with Connect, then carries JSON-RPC messages answered
// by json-rpc.ts, in any order, matched by id.
import * as grpc from '@grpc/grpc-js';
import type { AgentIdentity } from '../../auth/agent.js';
import { errorText } from '../../errors.js';
import type { RequestGate } from '../../limits/request-gate.js';
import type { GrpcCaps } from '../../limits/transport-caps.js';
import type { Log } from '../../log.js';
import type { McpServices } from '../mcp/server.js';
import { bearerToken } from '../tool-call/bearer.js';
import { answerMessage, type StreamContext } from './json-rpc.js';
import { failure } from './services.js';
import {
  ConnectMessage,
  originOf,
  RequestMessage,
  requestUuidMetadataKey,
  traceparentOf,
  wholeGatewayServerId,
} from './stream-context.js';

/** What every stream of one gateway shares: its parts, its caps, and what it counts and waits for. */
export interface StreamFront {
  readonly services: McpServices;
  /** The agent a bearer token names, or null when it names none. */
  readonly authenticate: (token: string) => Promise<AgentIdentity | null>;
  readonly requestGate: RequestGate | null;
  readonly log: Log;
  readonly caps: GrpcCaps;
  /** Open streams per agent (an agent with none is absent). */
  readonly streamsPerAgent: Map<string, number>;
  /** Answers being worked out: the gateway waits for them before it stops. */
  readonly inflight: Set<Promise<unknown>>;
  /** Open streams, each ended when the gateway stops. */
  readonly live: Set<TransportStream>;
  /** Set once the gateway stops: no new stream or message is taken. */
  closing: boolean;
}

type StreamState = 'awaiting_connect' | 'connected' | 'half_closed' | 'ended';

const internalFault = 'The gateway met an internal fault.';

/**
 * One stream's life: authenticated (from its metadata) → awaiting Connect → connected (each
 * request_body answered as it completes) → half-closed by the client (calls in flight finish,
 * then a clean end) or ended (a refusal status, the client's cancellation or the idle timeout).
 * Messages are taken in order through one chain, so Connected is always the first answer.
 */
export class TransportStream {
  private state: StreamState = 'awaiting_connect';
  private context: StreamContext | null = null;
  private agent: AgentIdentity | null = null;
  /** Whether this stream holds one of its agent's open-stream places. */
  private counted = false;
  /** Answers still being worked out. */
  private pending = 0;
  private messages = 0;
  private idle: NodeJS.Timeout | undefined;
  /** Authentication, then every message and the half-close, in the order they came. */
  private chain: Promise<void>;

  constructor(
    private readonly call: grpc.ServerDuplexStream<unknown, unknown>,
    private readonly front: StreamFront,
  ) {
    front.live.add(this);
    this.chain = this.authenticate();
    call.on('data', (raw: unknown) => this.inOrder(() => this.message(raw)));
    call.on('end', () => this.inOrder(() => this.halfClose()));
    call.on('cancelled', () => this.ended());
    call.on('error', () => this.release());
  }

  /** Ends the stream with a status (once; later calls do nothing). */
  end(code: grpc.status, details: string): void {
    if (this.state === 'ended') return;
    this.ended();
    this.call.emit('error', failure(code, details));
  }

  /** Runs `step` after every step before it; a step that throws ends the stream as an internal fault. */
  private inOrder(step: () => Promise<void> | void): void {
    this.chain = this.chain.then(step).catch((error: unknown) => {
      this.front.log.warn('a gRPC stream failed', { error: errorText(error) });
      this.end(grpc.status.INTERNAL, internalFault);
    });
  }

  /** Checks the bearer token of the call's metadata, then takes one of the agent's stream places. */
  private async authenticate(): Promise<void> {
    const authorization = this.call.metadata.get('authorization')[0];
    const token = bearerToken(typeof authorization === 'string' ? authorization : undefined);
    if (token === null)
      return this.end(grpc.status.UNAUTHENTICATED, 'A bearer token is required (authorization metadata).');
    try {
      this.agent = await this.front.authenticate(token);
    } catch (error) {
      // The issuer's keys could not be had (or the configuration read): not the token's fault.
      this.front.log.warn("an agent's token could not be checked now", { error: errorText(error) });
      return this.end(grpc.status.UNAVAILABLE, 'The bearer token could not be checked now: retry shortly.');
    }
    if (this.agent === null) return this.end(grpc.status.UNAUTHENTICATED, 'The bearer token is not valid.');
    if (this.front.closing) return this.end(grpc.status.UNAVAILABLE, 'The gateway is stopping: retry shortly.');
    const { maxStreamsPerAgent } = this.front.caps;
    const open = this.front.streamsPerAgent.get(this.agent.id) ?? 0;
    if (open >= maxStreamsPerAgent) {
      return this.end(
        grpc.status.RESOURCE_EXHAUSTED,
        `An agent may have at most ${maxStreamsPerAgent} streams open at once.`,
      );
    }
    this.front.streamsPerAgent.set(this.agent.id, open + 1);
    this.counted = true;
    this.armIdle();
  }

  /** Takes one message: Connect first, then request_body messages, within the stream's cap. */
  private async message(raw: unknown): Promise<void> {
    if (this.state === 'ended' || this.state === 'half_closed') return;
    if (this.front.closing) return this.end(grpc.status.UNAVAILABLE, 'The gateway is stopping: retry on a new stream.');
    const { maxMessagesPerStream } = this.front.caps;
    this.messages += 1;
    if (this.messages > maxMessagesPerStream) {
      return this.end(
        grpc.status.RESOURCE_EXHAUSTED,
        `A stream carries at most ${maxMessagesPerStream} messages: open a new one.`,
      );
    }
    this.armIdle();
    const message = RequestMessage.safeParse(raw);
    const kind = message.success ? message.data.request : undefined;
    if (this.state === 'awaiting_connect') {
      if (kind !== 'connect' || !message.success) {
        return this.end(grpc.status.FAILED_PRECONDITION, 'The first message of a stream must be Connect.');
      }
      return this.connect(message.data.connect);
    }
    if (kind === 'request_body' && message.success && this.context !== null) {
      return this.answer(this.context, message.data.request_body ?? '');
    }
    return this.end(grpc.status.FAILED_PRECONDITION, 'Connect comes once, first; then only request_body messages.');
  }

  /** Opens the stream on the server Connect names (one system, or the whole gateway), answering Connected. */
  private async connect(raw: unknown): Promise<void> {
    const parsed = ConnectMessage.safeParse(raw ?? {});
    if (!parsed.success || this.agent === null)
      return this.end(grpc.status.INVALID_ARGUMENT, 'The Connect message is not valid.');
    const connectMessage = parsed.data;
    const serverId = connectMessage.server_id;
    if (serverId !== wholeGatewayServerId && !(await this.isSystem(serverId))) {
      return this.end(
        grpc.status.NOT_FOUND,
        `No server "${serverId.slice(0, 100)}": use a system's key, or "${wholeGatewayServerId}" for the whole gateway.`,
      );
    }
    if (this.state !== 'awaiting_connect') return;
    const requestUuid = this.call.metadata.get(requestUuidMetadataKey)[0];
    this.context = {
      agent: this.agent,
      systemKey: serverId === wholeGatewayServerId ? null : serverId,
      origin: originOf(connectMessage, typeof requestUuid === 'string' ? requestUuid : null),
      traceparent: traceparentOf(connectMessage),
      gate: this.front.requestGate,
    };
    this.state = 'connected';
    this.call.write({ connected: {} });
  }

  private async isSystem(key: string): Promise<boolean> {
    const current = await this.front.services.controlPlane.current();
    return current.kind === 'active' && current.snapshot.config.systems.some((system) => system.key === key);
  }

  /** Answers one JSON-RPC message when it completes, while later messages are taken. */
  private answer(context: StreamContext, text: string): void {
    this.pending += 1;
    const work = answerMessage(this.front.services, context, text)
      .then((reply) => {
        // A dropped stream loses no call: the execution completed; only the answer has nowhere to go.
        if (reply !== null && (this.state === 'connected' || this.state === 'half_closed') && !this.call.cancelled) {
          this.call.write({ json: JSON.stringify(reply) });
        }
      })
      .catch((error: unknown) => {
        this.front.log.warn('a gRPC message failed', { error: errorText(error) });
        this.end(grpc.status.INTERNAL, internalFault);
      })
      .finally(() => {
        this.pending -= 1;
        this.front.inflight.delete(work);
        this.finishIfDone();
      });
    this.front.inflight.add(work);
  }

  /** The client sent its last message: the stream ends cleanly once its answers are out. */
  private halfClose(): void {
    if (this.state === 'ended') return;
    if (this.state === 'awaiting_connect') {
      this.end(grpc.status.FAILED_PRECONDITION, 'The stream ended before Connect.');
      return;
    }
    this.state = 'half_closed';
    this.finishIfDone();
  }

  private finishIfDone(): void {
    if (this.state !== 'half_closed' || this.pending > 0) return;
    this.ended();
    this.call.end();
  }

  /** The idle timeout, re-armed by each message; it waits while answers are being worked out. */
  private armIdle(): void {
    const { idleTimeoutMs } = this.front.caps;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.pending === 0)
        this.end(grpc.status.DEADLINE_EXCEEDED, `No message for ${idleTimeoutMs} ms: the stream ends.`);
      else this.armIdle();
    }, idleTimeoutMs);
    this.idle.unref();
  }

  /** Ended by a status, a clean end or the client's cancellation: nothing more is sent or counted. */
  private ended(): void {
    this.state = 'ended';
    this.release();
    this.front.live.delete(this);
  }

  /** Gives back the agent's stream place (once) and stops the idle timer. */
  private release(): void {
    clearTimeout(this.idle);
    if (!this.counted || this.agent === null) return;
    this.counted = false;
    const left = (this.front.streamsPerAgent.get(this.agent.id) ?? 1) - 1;
    if (left <= 0) this.front.streamsPerAgent.delete(this.agent.id);
    else this.front.streamsPerAgent.set(this.agent.id, left);
  }
}
