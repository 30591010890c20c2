// Per-agent admission of MCP requests, in memory: a token bucket for the rate and a count of
// requests in progress. Locally one process sees every request, so both limits are exact; in
// Lambda each instance keeps its own gate (see docs/adr/0015-per-agent-limits.md).
import type { Clock } from '../clock.js';
import { type Refusal, refusal, resultCodes } from '../errors.js';
import type { AgentLimits } from './agent-limits.js';

/** A refusal whose message names the limit reached. */
export interface LimitRefusal extends Refusal {
  readonly code: 'rate_limited' | 'concurrency_limited';
  /** Whole seconds after which a request would be admitted (HTTP Retry-After). */
  readonly retryAfterSeconds: number;
}

export type Admission =
  | { readonly kind: 'admitted'; readonly release: () => void }
  /** `first`: the first refusal since this agent's last admission (log that one, not the flood). */
  | { readonly kind: 'refused'; readonly refusal: LimitRefusal; readonly first: boolean };

interface AgentState {
  tokens: number;
  refilledAt: number;
  inFlight: number;
  /** Refused since its last admission. */
  refusing: boolean;
  /** The limits last applied, so an idle agent can be judged without its configuration. */
  limits: AgentLimits;
}

/** Agents remembered before idle ones (bucket full, nothing in progress) are forgotten. */
const sweepAbove = 10_000;

export class RequestGate {
  private readonly agents = new Map<string, AgentState>();

  constructor(private readonly clock: Clock) {}

  /** Admits one request of `agentId` under `limits`, or says which limit refused it. */
  admit(agentId: string, limits: AgentLimits): Admission {
    const now = this.clock.now();
    const state = this.stateOf(agentId, limits, now);
    this.refill(state, limits, now);
    // A refusal takes nothing: neither a token nor a place.
    if (state.inFlight >= limits.concurrentRequests) {
      return this.refuse(state, {
        ...refusal('concurrency_limited', resultCodes.concurrency_limited.message(limits.concurrentRequests)),
        code: 'concurrency_limited',
        retryAfterSeconds: 1,
      });
    }
    if (state.tokens < 1) {
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - state.tokens) / limits.requestsPerSecond));
      return this.refuse(state, {
        ...refusal(
          'rate_limited',
          resultCodes.rate_limited.message(limits.requestsPerSecond, limits.burst, retryAfterSeconds),
        ),
        code: 'rate_limited',
        retryAfterSeconds,
      });
    }
    state.refusing = false;
    state.tokens -= 1;
    state.inFlight += 1;
    let released = false;
    return {
      kind: 'admitted',
      release: () => {
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
    const fresh: AgentState = { tokens: limits.burst, refilledAt: now, inFlight: 0, refusing: false, limits };
    this.agents.set(agentId, fresh);
    return fresh;
  }

  private refill(state: AgentState, limits: AgentLimits, now: number): void {
    const elapsedMs = Math.max(0, now - state.refilledAt);
    // A lowered burst takes effect at once; a raised one fills at the rate.
    state.tokens = Math.min(limits.burst, state.tokens + (elapsedMs * limits.requestsPerSecond) / 1000);
    state.refilledAt = now;
    state.limits = limits;
  }

  /** An agent with nothing in progress whose bucket has refilled is indistinguishable from a new one. */
  private forgetIdle(now: number): void {
    for (const [agentId, state] of this.agents) {
      const { requestsPerSecond, burst } = state.limits;
      const full = state.tokens + ((now - state.refilledAt) * requestsPerSecond) / 1000 >= burst;
      if (state.inFlight === 0 && full) this.agents.delete(agentId);
    }
  }
}
