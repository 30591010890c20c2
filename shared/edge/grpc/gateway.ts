// The gRPC tool gateway (PccToolGateway/CreateMcpTransport): a driving adapter like
// shared/edge/mcp/. The server listens, answers the standard grpc.health.v1 Check for load
// balancers, hands each stream to a TransportStream (stream.ts) and stops by draining them.
import * as grpc from '@grpc/grpc-js';
import type { AgentIdentity } from '../../auth/agent.js';
import type { RequestGate } from '../../limits/request-gate.js';
import { type GrpcCaps, transportCaps } from '../../limits/transport-caps.js';
import type { Log } from '../../log.js';
import type { McpServices } from '../mcp/server.js';
import { healthCheck, loadServices } from './services.js';
import { type StreamFront, TransportStream } from './stream.js';

export interface GrpcGatewayOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly services: McpServices;
  /** The agent a bearer token names, or null when it names none (checked like the HTTP front's). */
  readonly authenticate: (token: string) => Promise<AgentIdentity | null>;
  /** Caps other than those of shared/limits/transport-caps.ts (tests lower them). */
  readonly caps?: Partial<GrpcCaps>;
  /** The agents' rate and concurrency limits, counted per JSON-RPC request; absent, none apply. */
  readonly requestGate?: RequestGate;
  readonly log: Log;
}

export interface GrpcGateway {
  readonly port: number;
  /** Refuses new streams, lets calls in flight finish (their executions complete), then stops. */
  close(): Promise<void>;
}

/** How long a stop waits for the server's connections to close before it cuts them. */
const forceShutdownAfterMs = 5_000;

/** The gRPC server of one gateway: its services, its address, and its stop. */
class GatewayServer {
  private readonly server: grpc.Server;
  private closed: Promise<void> | null = null;

  constructor(private readonly front: StreamFront) {
    const { gateway, health } = loadServices();
    this.server = new grpc.Server({
      'grpc.max_receive_message_length': front.caps.maxMessageBytes,
      'grpc.max_send_message_length': front.caps.maxMessageBytes * 4,
    });
    this.server.addService(gateway, {
      CreateMcpTransport: (call: grpc.ServerDuplexStream<unknown, unknown>) => new TransportStream(call, front),
    });
    this.server.addService(
      health,
      healthCheck(() => this.health()),
    );
  }

  /** Binds `host:port` (an IPv6 host in brackets), resolving to the port bound. */
  listen(host: string, port: number): Promise<number> {
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    return new Promise<number>((resolve, reject) => {
      this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error === null ? resolve(bound) : reject(error),
      );
    });
  }

  /** A stopping gateway tells load balancers to send new streams elsewhere. */
  private health(): 'SERVING' | 'NOT_SERVING' {
    return this.front.closing ? 'NOT_SERVING' : 'SERVING';
  }

  close(): Promise<void> {
    this.closed ??= this.stop();
    return this.closed;
  }

  private async stop(): Promise<void> {
    this.front.closing = true;
    // Calls in flight finish first: their executions complete and their answers go out; then
    // the streams still open end, telling their callers to come back.
    while (this.front.inflight.size > 0) await Promise.allSettled([...this.front.inflight]);
    for (const stream of [...this.front.live]) {
      stream.end(grpc.status.UNAVAILABLE, 'The gateway is stopping: retry on a new stream.');
    }
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, forceShutdownAfterMs);
      this.server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }
}

export const startGrpcGateway = async (options: GrpcGatewayOptions): Promise<GrpcGateway> => {
  const server = new GatewayServer({
    services: options.services,
    authenticate: options.authenticate,
    requestGate: options.requestGate ?? null,
    log: options.log,
    caps: { ...transportCaps.grpc, ...options.caps },
    streamsPerAgent: new Map(),
    inflight: new Set(),
    live: new Set(),
    closing: false,
  });
  const port = await server.listen(options.host, options.port);
  return { port, close: () => server.close() };
};
