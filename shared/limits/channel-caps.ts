// The per-agent caps of the /tool/call-tool channel, as data: each names the agent limit
// (settings.limits, agent-limits.ts) it follows, so a channel front reads one number per agent and
// the caps of every front can be read in one place.
import type { AgentLimits } from './agent-limits.js';

export const channelCaps = {
  /**
   * Open WebSocket connections an agent may hold, from the upgrade until the socket closes: each
   * holds one of its concurrent requests, so a flood of silent connections is refused (429) before
   * it costs a WebSocket each.
   */
  openSocketsPerAgent: 'concurrentRequests',
} as const satisfies Record<string, keyof AgentLimits>;

type ChannelCap = keyof typeof channelCaps;

/** The number a cap allows an agent under its limits. */
export const channelCapOf = (limits: AgentLimits, cap: ChannelCap): number => limits[channelCaps[cap]];
