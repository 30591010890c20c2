// Decisions config:push already knows. For a listed agent (its id, groups and customer fixed by the
// configuration) and a tool to which no policy that reads the context can apply (the scope of
// every such policy excludes it), nothing Cedar is shown varies from call to call: the arguments
// are the context, and nothing else of the request depends on the call. Cedar's answer, its
// decision and the policies that determined it, is then the same for every call, so config:push
// asks Cedar once and writes the answer into the compiled snapshot. A function whose Cedar is the
// release that made the answers answers those calls from the table and pre-parses the policies
// only when a call needs Cedar; with another release it ignores the table.
//
// Whether a policy can apply is Cedar's own judgement: the context-reading policies' scopes,
// without their conditions, are pre-parsed as a set of permits and asked the same request (a
// policy is satisfied only when its scope is, and Cedar evaluates the scope first). Only answers
// without errors are kept. Cost: two evaluations of pre-parsed sets per agent and tool (~0.15 ms
// each pair; GitHub's 1,221 tools, 160 ms an agent), so the table holds the agents, in the
// configuration's order, whose tools fit in knownAnswersAtMost; Cedar decides for the others.
import type { PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool } from '../catalog/tool.js';
import { isRecord, setOwn } from '../objects.js';
import { cedarRelease } from './cedar-release.js';
import { cedarRequestOf } from './cedar-request.js';
import type { CompiledPolicies } from './policy-set.js';

/** Cedar's answer to a call: its decision and the policies that determined it, by id, in file order. */
export interface CedarAnswer {
  readonly decision: 'allow' | 'deny';
  readonly reason: readonly string[];
}

/** What config:push writes: per listed agent, the answer for each tool whose calls all get the same. */
export interface KnownDecisions {
  /** The Cedar release that gave the answers. */
  readonly cedar: string;
  readonly agents: readonly {
    readonly id: string;
    readonly groups: readonly string[];
    readonly customer: string | null;
    readonly answers: Readonly<Record<string, CedarAnswer>>;
  }[];
}

/** The most agent and tool pairs config:push asks Cedar about (some 3 s; GitHub's catalog, 16 agents). */
export const knownAnswersAtMost = 20_000;

/** Whether a policy's conditions mention the context at all. */
const readsContext = (node: unknown): boolean =>
  Array.isArray(node)
    ? node.some(readsContext)
    : isRecord(node) && (node.Var === 'context' || Object.values(node).some(readsContext));

/** A policy's place in the files (Cedar's ids are policy0, policy1, … in file order). */
const indexOf = (id: string): number => Number(id.slice('policy'.length));

/**
 * The scopes of the policies that read the context, as permits without conditions, pre-parsed:
 * the set's id, null when no policy reads the context, undefined when Cedar refused one.
 */
const contextScopes = (compiled: CompiledPolicies): string | null | undefined => {
  const scopes: Record<string, PolicyJson> = {};
  for (const [id, text] of Object.entries(compiled.texts)) {
    const json = cedar.policyToJson(text);
    if (json.type === 'failure') return undefined;
    const { principal, action, resource, conditions } = json.json;
    if (readsContext(conditions)) scopes[id] = { effect: 'permit', principal, action, resource, conditions: [] };
  }
  if (Object.keys(scopes).length === 0) return null;
  const setId = `${compiled.setId}+context-scopes`;
  return cedar.preparsePolicySet(setId, { staticPolicies: scopes }).type === 'success' ? setId : undefined;
};

/** Cedar's answer for every call of this agent to this tool, or null when calls may get different ones. */
const knownAnswer = (
  compiled: CompiledPolicies,
  scopesId: string | null,
  agent: AgentIdentity,
  tool: CatalogTool,
): CedarAnswer | null => {
  const request = { ...cedarRequestOf(agent, tool), context: { arguments: {} } };
  if (scopesId !== null) {
    const applies = cedar.statefulIsAuthorized({ ...request, preparsedPolicySetId: scopesId });
    if (applies.type === 'failure' || applies.response.decision === 'allow') return null;
    if (applies.response.diagnostics.errors.length > 0) return null;
  }
  const answer = cedar.statefulIsAuthorized({ ...request, preparsedPolicySetId: compiled.setId });
  if (answer.type === 'failure' || answer.response.diagnostics.errors.length > 0) return null;
  const reason = [...answer.response.diagnostics.reason].sort((left, right) => indexOf(left) - indexOf(right));
  return { decision: answer.response.decision, reason };
};

/** The answers Cedar gives every call of these agents to these tools, whatever the arguments. */
export const knownDecisionsOf = (
  compiled: CompiledPolicies,
  agents: readonly AgentIdentity[],
  tools: readonly CatalogTool[],
): KnownDecisions => {
  const none = { cedar: cedar.getCedarSDKVersion(), agents: [] };
  const scopesId = contextScopes(compiled);
  if (scopesId === undefined || !compiled.parse()) return none;
  const fitting = agents.slice(0, Math.floor(knownAnswersAtMost / Math.max(1, tools.length)));
  return {
    cedar: none.cedar,
    agents: fitting.map((agent) => {
      const answers: Record<string, CedarAnswer> = {};
      for (const tool of tools) {
        const answer = knownAnswer(compiled, scopesId, agent, tool);
        if (answer !== null) setOwn(answers, tool.name, answer);
      }
      return { id: agent.id, groups: [...agent.groups], customer: agent.customerId, answers };
    }),
  };
};

/** The answers a function may take from a compiled snapshot: those its own Cedar release gave. */
export class KnownDecisionTable {
  private readonly byAgent: Map<string, ReadonlyMap<string, CedarAnswer>>;

  private constructor(known: KnownDecisions) {
    this.byAgent = new Map(
      known.agents.map((agent) => [
        JSON.stringify([agent.id, agent.groups, agent.customer]),
        new Map(Object.entries(agent.answers)),
      ]),
    );
  }

  /** The table, or null without one or when another Cedar release made it. */
  static of(known: KnownDecisions | undefined): KnownDecisionTable | null {
    return known === undefined || known.cedar !== cedarRelease ? null : new KnownDecisionTable(known);
  }

  /** Cedar's answer for every call of this agent to this tool, when config:push knew it. */
  answer(agent: AgentIdentity, tool: string): CedarAnswer | undefined {
    return this.byAgent.get(JSON.stringify([agent.id, agent.groups, agent.customerId]))?.get(tool);
  }
}
