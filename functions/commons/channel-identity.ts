// The agent as the /tool/call-tool WebSocket authorizer hands it to the connection's messages: the
// authorizer's context holds strings only, so the identity travels as three of them, rendered the
// way API Gateway renders JWT claims, and is read back with the same claims-to-agent mapping.
import { type AgentIdentity, agentFromClaims, type ClaimNames } from '../../shared/auth/agent.js';

/** The context keys, read back as if they were claims. */
const contextKeys: ClaimNames = { agent: 'agentId', groups: 'agentGroups', customer: 'customerId' };

export type AgentContext = Readonly<Record<'agentId' | 'agentGroups' | 'customerId', string>>;

export const agentContext = (agent: AgentIdentity): AgentContext => ({
  agentId: agent.id,
  agentGroups: `[${agent.groups.join(' ')}]`,
  customerId: agent.customerId ?? '',
});

/** The agent API Gateway passed on from the authorizer, or null when it passed none. */
export const agentFromContext = (context: Readonly<Record<string, unknown>>): AgentIdentity | null =>
  agentFromClaims(context, contextKeys);
