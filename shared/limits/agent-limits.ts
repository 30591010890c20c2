// The limits that apply to one agent: the configured defaults, raised or lowered for its groups,
// then for the agent itself. Pure, so the MCP endpoint and the hold path read the same numbers.
import type { AgentIdentity } from '../auth/agent.js';
import { Limits } from '../config/schema.js';
import type { ControlPlane } from '../control-plane/control-plane.js';

export interface AgentLimits {
  readonly concurrentRequests: number;
  readonly requestsPerSecond: number;
  readonly burst: number;
  readonly pendingCalls: number;
  /** Bytes of requests per second (the bucket holds one second's worth). */
  readonly requestBytesPerSecond: number;
  /** Bytes of requests per day (the bucket holds one day's worth). */
  readonly requestBytesPerDay: number;
}

/**
 * The defaults, for the moments no configuration has loaded yet: parsed on first need, not at
 * import (a schema's first parse costs about a millisecond of every cold start).
 */
let defaultLimits: Limits | undefined;
const defaults = (): Limits => {
  defaultLimits ??= Limits.parse({});
  return defaultLimits;
};

type LimitField =
  | 'concurrent_requests'
  | 'requests_per_second'
  | 'burst'
  | 'pending_calls'
  | 'request_bytes_per_second'
  | 'request_bytes_per_day';

type LimitOverrides = Partial<Record<LimitField, number>>;

/**
 * One limit: the agent's own override; else the highest any of its groups sets (a group grants
 * capacity, so belonging to one more group never lowers a limit); else the default.
 */
const limitOf = (
  field: LimitField,
  limits: Limits,
  own: LimitOverrides | undefined,
  groups: readonly LimitOverrides[],
): number => {
  const set = own?.[field];
  if (set !== undefined) return set;
  const fromGroups = groups.map((group) => group[field]).filter((value) => value !== undefined);
  return fromGroups.length > 0 ? Math.max(...fromGroups) : limits[field];
};

/** Each limit as limitOf reads it, for the agent and its groups. */
export const limitsFor = (limits: Limits, agent: Pick<AgentIdentity, 'id' | 'groups'>): AgentLimits => {
  const own = Object.hasOwn(limits.agents, agent.id) ? limits.agents[agent.id] : undefined;
  const groups = agent.groups.flatMap((group) =>
    Object.hasOwn(limits.groups, group) ? [limits.groups[group] ?? {}] : [],
  );
  return {
    concurrentRequests: limitOf('concurrent_requests', limits, own, groups),
    requestsPerSecond: limitOf('requests_per_second', limits, own, groups),
    burst: limitOf('burst', limits, own, groups),
    pendingCalls: limitOf('pending_calls', limits, own, groups),
    requestBytesPerSecond: limitOf('request_bytes_per_second', limits, own, groups),
    requestBytesPerDay: limitOf('request_bytes_per_day', limits, own, groups),
  };
};

/** The limits of `agent` under the configuration held now (the last good one while stale or off). */
export const limitsNow = async (controlPlane: ControlPlane, agent: AgentIdentity): Promise<AgentLimits> => {
  const state = await controlPlane.current();
  return limitsFor(state.snapshot?.config.settings.limits ?? defaults(), agent);
};
