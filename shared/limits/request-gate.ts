// Per-agent admission of MCP requests, in memory: a token bucket for the rate, two buckets of bytes
// for what the requests weigh (per second: what reading them costs the gateway's thread; per day:
// what the agent's calls can make it store), and a count of requests in progress. A request is
// charged its size before its body is read, so a flood of large requests is refused at the cost
// of a gate check, not of reading each one. Locally one process sees every request, so the limits
// are exact; in Lambda each instance keeps its own gate (see docs/adr/0015-per-agent-limits.md).
import type { Clock } from '../clock.js';
import { limitRefusals, type RefusalOf } from '../errors.js';
import type { AgentLimits } from './agent-limits.js';

/** A refusal whose message names the limit reached. */
export type LimitRefusal = RefusalOf<'rate_limited' | 'concurrency_limited'> & {
  /** Whole seconds after which a request would be admitted (HTTP Retry-After). */
  readonly retryAfterSeconds: number;
};

export type Admission =
  | { readonly kind: 'admitted'; readonly release: () => void }
  /** `first`: the first refusal since this agent's last admission (log that one, not the flood). */
  | { readonly kind: 'refused'; readonly refusal: LimitRefusal; readonly first: boolean };

/** What one request costs besides its place and its token: its size, in bytes (0 when it has no body). */
export interface RequestCost {
  readonly bytes: number;
}

interface AgentState {
  tokens: number;
  /** Bytes left of this second's and this day's allowance. */
  secondBytes: number;
  dayBytes: number;
  refilledAt: number;
  inFlight: number;
  /** Refused since its last admission. */
  refusing: boolean;
  /** The limits last applied, so an idle agent can be judged without its configuration. */
  limits: AgentLimits;
}

/** Agents remembered before idle ones (buckets full, nothing in progress) are forgotten. */
const sweepAbove = 10_000;

const daySeconds = 86_400;

/** Whole seconds until a bucket refilled at `perSecond` holds `wanted` (at least one). */
const secondsUntil = (wanted: number, held: number, perSecond: number): number =>
  Math.max(1, Math.ceil((wanted - held) / perSecond));

const limitRefusal = (
  refused: RefusalOf<'rate_limited' | 'concurrency_limited'>,
  retryAfterSeconds: number,
): LimitRefusal => ({ ...refused, retryAfterSeconds });

/** Which limit refuses a request of `bytes` now, if any (a refusal takes nothing). */
const refusalFor = (state: AgentState, limits: AgentLimits, bytes: number): LimitRefusal | null => {
  if (state.inFlight >= limits.concurrentRequests) {
    return limitRefusal(limitRefusals.concurrent(limits.concurrentRequests), 1);
  }
  if (state.tokens < 1) {
    const after = secondsUntil(1, state.tokens, limits.requestsPerSecond);
    return limitRefusal(limitRefusals.requests(limits.requestsPerSecond, limits.burst, after), after);
  }
  if (state.secondBytes < bytes) {
    const after = secondsUntil(bytes, state.secondBytes, limits.requestBytesPerSecond);
    return limitRefusal(limitRefusals.bytes(limits.requestBytesPerSecond, 'second', after), after);
  }
  if (state.dayBytes < bytes) {
    const after = secondsUntil(bytes, state.dayBytes, limits.requestBytesPerDay / daySeconds);
    return limitRefusal(limitRefusals.bytes(limits.requestBytesPerDay, 'day', after), after);
  }
  return null;
};

export class RequestGate {
  private readonly agents = new Map<string, AgentState>();

  constructor(private readonly clock: Clock) {}

  /** Admits one request of `agentId` under `limits`, or says which limit refused it. */
  admit(agentId: string, limits: AgentLimits, cost: RequestCost = { bytes: 0 }): Admission {
    const now = this.clock.now();
    const state = this.stateOf(agentId, limits, now);
    this.refill(state, limits, now);
    const refused = refusalFor(state, limits, cost.bytes);
    if (refused !== null) return this.refuse(state, refused);
    state.refusing = false;
    state.tokens -= 1;
    state.secondBytes -= cost.bytes;
    state.dayBytes -= cost.bytes;
    state.inFlight += 1;
    let released = false;
    return {
      kind: 'admitted',
      release() {
        if (released) return;
        released = true;
        state.inFlight -= 1;
      },
    };
  }

  /** Requests of `agentId` in progress now (for tests and logs). */
  inFlight(agentId: string): number {
    return this.agents.get(agentId)?.inFlight ?? 0;
  }

  private refuse(state: AgentState, refusal: LimitRefusal): Admission {
    const first = !state.refusing;
    state.refusing = true;
    return { kind: 'refused', refusal, first };
  }

  /** How many agents the gate remembers now. */
  remembered(): number {
    return this.agents.size;
  }

  private stateOf(agentId: string, limits: AgentLimits, now: number): AgentState {
    const known = this.agents.get(agentId);
    if (known !== undefined) return known;
    if (this.agents.size >= sweepAbove) this.forgetIdle(now);
    const fresh: AgentState = {
      tokens: limits.burst,
      secondBytes: limits.requestBytesPerSecond,
      dayBytes: limits.requestBytesPerDay,
      refilledAt: now,
      inFlight: 0,
      refusing: false,
      limits,
    };
    this.agents.set(agentId, fresh);
    return fresh;
  }

  private refill(state: AgentState, limits: AgentLimits, now: number): void {
    const elapsedSeconds = Math.max(0, now - state.refilledAt) / 1000;
    // A lowered limit takes effect at once; a raised one fills at the rate.
    state.tokens = Math.min(limits.burst, state.tokens + elapsedSeconds * limits.requestsPerSecond);
    state.secondBytes = Math.min(
      limits.requestBytesPerSecond,
      state.secondBytes + elapsedSeconds * limits.requestBytesPerSecond,
    );
    state.dayBytes = Math.min(
      limits.requestBytesPerDay,
      state.dayBytes + (elapsedSeconds * limits.requestBytesPerDay) / daySeconds,
    );
    state.refilledAt = now;
    state.limits = limits;
  }

  /** An agent with nothing in progress whose buckets have refilled is indistinguishable from a new one. */
  private forgetIdle(now: number): void {
    for (const [agentId, state] of this.agents) {
      if (state.inFlight !== 0) continue;
      this.refill(state, state.limits, now);
      const { burst, requestBytesPerSecond, requestBytesPerDay } = state.limits;
      const full =
        state.tokens >= burst && state.secondBytes >= requestBytesPerSecond && state.dayBytes >= requestBytesPerDay;
      if (full) this.agents.delete(agentId);
    }
  }
}
