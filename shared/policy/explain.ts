// Which tools an agent sees, and for each hidden one why, in plain words: turned off in the
// configuration, withdrawn or never listed by its MCP server, or the policy's own reason (the
// listing rule of tools/list, PolicyEngine.listing). For one tool, also the policies that may
// apply to it and the human step each decision some arguments get would need.
import { posix } from 'node:path';
import type { AgentIdentity } from '../auth/agent.js';
import { isTurnedOff } from '../catalog/offered.js';
import type { CatalogTool } from '../catalog/tool.js';
import { durationText } from '../config/duration.js';
import type { GatewaySnapshot } from '../control-plane/gateway-snapshot.js';
import type { DenyReason, HiddenReason, PolicyDecision } from './engine.js';
import type { HumanStep } from './human-step.js';
import type { PolicyInfo } from './policy-set.js';

/** A policy as the explanation names it: its @id (or file:line) and where it is. */
export interface PolicyRef {
  readonly name: string;
  readonly effect: 'permit' | 'forbid';
  /** file:line, the file as written from the working folder. */
  readonly at: string;
}

/** What a call gets: run now, held for people, or refused. */
type Verdict = 'run' | 'hold' | 'deny';

export interface Outcome {
  readonly decision: Verdict;
  /** Who must agree first (hold only). */
  readonly step: HumanStep | null;
  /** The engine's reason (deny only). */
  readonly reason: DenyReason | null;
  /** The decision and its human step, in words. */
  readonly words: string;
  readonly policies: readonly PolicyRef[];
}

type HiddenBecause = HiddenReason | 'disabled' | 'withdrawn' | 'not_discovered';

export interface ToolExplanation {
  readonly tool: string;
  readonly system: string;
  readonly visible: boolean;
  /** Why it is hidden; null when visible. */
  readonly hidden: HiddenBecause | null;
  /** Whether what a call gets depends on its arguments (null: not known). */
  readonly depends_on_arguments: boolean | null;
  /** The decisions some arguments get (an empty list when the tool is hidden before policy, or they cannot be enumerated). */
  readonly outcomes: readonly Outcome[];
  /** In words: what a call gets, or why the tool is hidden. */
  readonly summary: string;
  /** The policies that may apply to the tool for some agent and arguments. */
  readonly policies: readonly PolicyRef[];
}

export interface AgentExplanation {
  readonly agent: { readonly id: string; readonly groups: readonly string[]; readonly customer: string | null };
  readonly tools: readonly ToolExplanation[];
  /** MCP systems whose tools are not known (their server has not listed them), with why. */
  readonly undiscovered: readonly { readonly system: string; readonly summary: string }[];
}

export interface ExplainContext {
  readonly snapshot: GatewaySnapshot;
  /** The configuration file, as given: policy files are named relative to its folder. */
  readonly configFile: string;
  /** MCP systems whose tools are not known, with why (not asked, no answer). */
  readonly undiscovered: ReadonlyMap<string, string>;
}

const refOf = (context: ExplainContext, policy: PolicyInfo): PolicyRef => ({
  name: policy.name,
  effect: policy.effect,
  at: `${posix.join(posix.dirname(context.configFile.replaceAll('\\', '/')), policy.file)}:${policy.line}`,
});

const named = (policies: readonly PolicyRef[]): string =>
  policies.map((policy) => (policy.at.endsWith(policy.name) ? policy.at : `${policy.name} (${policy.at})`)).join(', ');

/** What a staff approval asks beyond one approver of the group, in words: "escalates to operations after 4h; …". */
const staffRuleWords = (step: HumanStep): string[] => [
  ...(step.escalation === null
    ? []
    : [`escalates to ${step.escalation.group} after ${durationText(step.escalation.after_ms)}`]),
  ...(step.reauth_ms === null ? [] : [`sign-in within ${durationText(step.reauth_ms)}`]),
  ...(step.acr === null ? [] : [`sign-in class ${step.acr.join(' or ')}`]),
];

/** The staff approval in words: "staff approval by 2 of finance (escalates to operations after 4h; sign-in within 5m)". */
const staffWords = (step: HumanStep, group: string): string => {
  const rules = staffRuleWords(step);
  return `staff approval by ${step.quorum > 1 ? `${step.quorum} of ` : ''}${group}${rules.length > 0 ? ` (${rules.join('; ')})` : ''}`;
};

/** The human step in words. */
export const stepWords = (step: HumanStep | null): string => {
  if (step === null) return 'runs at once';
  const staff = step.staff === null ? null : staffWords(step, step.staff);
  if (step.customer) return staff === null ? 'customer confirmation' : `customer confirmation, then ${staff}`;
  return staff ?? 'runs at once';
};

const denyWords: Readonly<Record<DenyReason, string>> = {
  no_permit: 'refused: no permit holds',
  forbidden: 'refused by a forbid',
  not_representable: 'refused: the arguments cannot be held exactly by the policy',
  evaluation_error: 'refused: a policy cannot be evaluated',
};

export const outcomeOf = (context: ExplainContext, decision: PolicyDecision): Outcome => {
  const policies = decision.determining.map((policy) => refOf(context, policy));
  if (decision.kind === 'deny') {
    return { decision: 'deny', step: null, reason: decision.reason, words: denyWords[decision.reason], policies };
  }
  return {
    decision: decision.step === null ? 'run' : 'hold',
    step: decision.step,
    reason: null,
    words: stepWords(decision.step),
    policies,
  };
};

/** Outcomes are shown least demanding first. */
const verdictOrder: readonly Verdict[] = ['run', 'hold', 'deny'];

const parties = (step: HumanStep | null): number =>
  step === null ? 0 : (step.staff === null ? 0 : 1) + (step.customer ? 1 : 0);

const outcomeWords = (outcome: Outcome): string =>
  outcome.policies.length === 0 ? outcome.words : `${outcome.words}, by ${named(outcome.policies)}`;

export const agentWords = (agent: AgentIdentity): string =>
  `${agent.id} (${agent.groups.length === 0 ? 'no groups' : `groups: ${agent.groups.join(', ')}`}${agent.customerId === null ? '' : `; acts for customer ${agent.customerId}`})`;

const hiddenWords = (
  because: HiddenReason,
  agent: AgentIdentity,
  determining: readonly PolicyRef[],
  reach: readonly PolicyRef[],
): string => {
  const permits = reach.filter((policy) => policy.effect === 'permit');
  switch (because) {
    case 'no_permit':
      return permits.length === 0
        ? 'no permit mentions this tool, for any agent'
        : `no permit applies to ${agent.id}: the permits that mention it (${named(permits)}) are for other agents or groups`;
    case 'forbidden':
      return `a forbid always holds for this agent: ${named(determining)}`;
    case 'no_arguments':
      return `no arguments could satisfy the conditions of the policies that mention it (${named(determining)})`;
    case 'evaluation_error':
      return 'the policies cannot be evaluated for this tool, so it is refused';
  }
};

/** One tool of the catalog (offered or turned off) for one agent. */
const explainTool = (context: ExplainContext, agent: AgentIdentity, tool: CatalogTool): ToolExplanation => {
  const { snapshot } = context;
  const reach = snapshot.policy.reach(tool);
  const policies = [...reach.permits, ...reach.forbids].map((policy) => refOf(context, policy));
  const base = { tool: tool.name, system: tool.systemKey, policies };
  if (!snapshot.catalog.byName.has(tool.name)) {
    const index = snapshot.config.systems.findIndex((system) => system.key === tool.systemKey);
    const system = snapshot.config.systems[index];
    const turnedOff = system === undefined || isTurnedOff(system, tool.name);
    const field = system?.disabled_tools.includes(tool.name) === false ? 'enabled_tools' : 'disabled_tools';
    return {
      ...base,
      visible: false,
      hidden: turnedOff ? 'disabled' : 'withdrawn',
      depends_on_arguments: null,
      outcomes: [],
      summary: turnedOff
        ? `turned off in the configuration (systems[${index}].${field})`
        : `withdrawn: the MCP server of ${tool.systemKey} has not answered tools/list within allowed_staleness`,
    };
  }
  const listing = snapshot.policy.listing(agent, tool);
  if (!listing.listed) {
    const determining = listing.determining.map((policy) => refOf(context, policy));
    return {
      ...base,
      visible: false,
      hidden: listing.reason,
      depends_on_arguments:
        listing.reason === 'no_arguments' ? true : listing.reason === 'evaluation_error' ? null : false,
      outcomes: [],
      summary: hiddenWords(listing.reason, agent, determining, policies),
    };
  }
  if (listing.outcomes === null) {
    return {
      ...base,
      visible: true,
      hidden: null,
      depends_on_arguments: null,
      outcomes: [],
      summary: `the decision depends on the arguments in ways that cannot be listed here (policies that mention it: ${named(policies)})`,
    };
  }
  const outcomes = listing.outcomes
    .map((decision) => outcomeOf(context, decision))
    .sort(
      (left, right) =>
        verdictOrder.indexOf(left.decision) - verdictOrder.indexOf(right.decision) ||
        parties(left.step) - parties(right.step) ||
        (left.step?.quorum ?? 0) - (right.step?.quorum ?? 0),
    );
  const [only] = outcomes;
  return {
    ...base,
    visible: true,
    hidden: null,
    depends_on_arguments: outcomes.length > 1,
    outcomes,
    summary:
      outcomes.length === 1 && only !== undefined
        ? outcomeWords(only)
        : `depends on the arguments: ${outcomes.map(outcomeWords).join('; ')}`,
  };
};

const undiscoveredOf = (context: ExplainContext) =>
  [...context.undiscovered].map(([system, why]) => ({
    system,
    summary: `the tools of ${system} are not known, so they are hidden: its MCP server has not listed them (${why})`,
  }));

const agentOf = (agent: AgentIdentity) => ({ id: agent.id, groups: agent.groups, customer: agent.customerId });

/** Every tool of the configuration (offered or turned off) for one agent. */
export const explainAgent = (context: ExplainContext, agent: AgentIdentity): AgentExplanation => {
  const { catalog } = context.snapshot;
  const tools = [...catalog.tools, ...catalog.disabled].sort((left, right) => (left.name < right.name ? -1 : 1));
  return {
    agent: agentOf(agent),
    tools: tools.map((tool) => explainTool(context, agent, tool)),
    undiscovered: undiscoveredOf(context),
  };
};

export type OneToolExplanation =
  | { readonly kind: 'tool'; readonly agent: AgentExplanation['agent']; readonly tool: ToolExplanation }
  | {
      readonly kind: 'undiscovered';
      readonly agent: AgentExplanation['agent'];
      readonly system: string;
      readonly summary: string;
    }
  | { readonly kind: 'unknown' };

/** One tool for one agent; a tool of an MCP system whose tools are not known is explained as such. */
export const explainOneTool = (context: ExplainContext, agent: AgentIdentity, name: string): OneToolExplanation => {
  const { catalog } = context.snapshot;
  const tool = catalog.byName.get(name) ?? catalog.disabled.find((candidate) => candidate.name === name);
  if (tool !== undefined) return { kind: 'tool', agent: agentOf(agent), tool: explainTool(context, agent, tool) };
  const system = undiscoveredOf(context).find((found) => name.startsWith(`${found.system}.`));
  return system === undefined ? { kind: 'unknown' } : { kind: 'undiscovered', agent: agentOf(agent), ...system };
};
