// What the gateway shows Cedar for one call: the agent as principal (its groups as parents, and
// `outside` and `customer` when it acts for a customer), the tool as action (with its groups), its
// system as resource, and the call's arguments as the context. One home, so that the decisions
// config:push knows ahead (known-decisions.ts) ask Cedar exactly what a call does.
import type { EntityJson, EntityUid } from '@cedar-policy/cedar-wasm/nodejs';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool } from '../catalog/tool.js';
import { actionEntityOf, entityTypes } from './cedar-schema.js';

const agentUid = (agent: AgentIdentity): EntityUid => ({ type: entityTypes.agent, id: agent.id });

const entitiesOf = (agent: AgentIdentity): EntityJson[] => [
  {
    uid: agentUid(agent),
    attrs: { outside: agent.customerId !== null, ...(agent.customerId === null ? {} : { customer: agent.customerId }) },
    parents: agent.groups.map((group) => ({ type: entityTypes.group, id: group })),
  },
  ...agent.groups.map((group) => ({ uid: { type: entityTypes.group, id: group }, attrs: {}, parents: [] })),
];

/** The request's principal, action, resource and entities: everything but the context. */
export const cedarRequestOf = (agent: AgentIdentity, tool: Pick<CatalogTool, 'name' | 'systemKey' | 'access'>) => ({
  principal: agentUid(agent),
  action: { type: 'Action', id: tool.name },
  resource: { type: entityTypes.system, id: tool.systemKey },
  // The action comes with its groups (Action::"read", Action::"<system>"): no schema is needed.
  entities: [...entitiesOf(agent), actionEntityOf(tool)],
  validateRequest: false,
});
