// The fixed caps of the fronts agents reach, as data: what one agent's gRPC streams may hold, and
// the throttling of the API Gateway stages all agents share in AWS (the floor under the per-agent
// limits). Unlike the allowances of agent-limits.ts, configuration does not change these per
// agent or group: the fronts read them here, and docs/reference.md states them (a test compares).

/** What the gRPC front allows one agent's streams. */
export interface GrpcCaps {
  /** Largest message accepted or sent, in bytes (gRPC answers RESOURCE_EXHAUSTED beyond it). */
  readonly maxMessageBytes: number;
  /** Messages a stream may carry, Connect included; the next ends it with RESOURCE_EXHAUSTED. */
  readonly maxMessagesPerStream: number;
  /** Streams one agent may have open at once; one more is refused with RESOURCE_EXHAUSTED. */
  readonly maxStreamsPerAgent: number;
  /** A stream with no message and nothing in flight for this long ends with DEADLINE_EXCEEDED. */
  readonly idleTimeoutMs: number;
}

/** API Gateway's throttling of every route of a stage, all agents together (it has no per-client throttling). */
export interface StageThrottlingCaps {
  /** Steady-state requests (or WebSocket connections and messages) per second. */
  readonly rateLimitPerSecond: number;
  /** Requests accepted at once above the rate. */
  readonly burstLimit: number;
}

/** The caps each front applies unless its deployment or start says otherwise. */
export const transportCaps: { readonly grpc: GrpcCaps; readonly apiStage: StageThrottlingCaps } = {
  grpc: {
    maxMessageBytes: 256 * 1024,
    maxMessagesPerStream: 1_000,
    maxStreamsPerAgent: 16,
    idleTimeoutMs: 120_000,
  },
  apiStage: { rateLimitPerSecond: 200, burstLimit: 400 },
};
