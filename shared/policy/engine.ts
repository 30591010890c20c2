// Cedar decides: what each agent may see (partial evaluation with the arguments unknown, cached
// per agent and configuration), and for each call whether it runs now, waits for people, or is
// refused. A satisfied forbid, no satisfied permit, arguments Cedar cannot hold, or an error in a
// forbid all refuse: the gateway fails closed.
//
// The human step: a satisfied permit without @approval runs the call at once. When only
// annotated permits are satisfied, the least demanding is asked for: the one needing the fewest
// parties; between one party each, the customer's confirmation before staff approval; then the
// smaller quorum; then the approver group's name; then the policy's place in the files. A permit
// asking a customer to confirm counts only for an agent acting for a customer.
//
// Long: the one reading of Cedar's answers (decisions, with the human step, and listings) stays in
// one class, so tools/list and tools/call cannot drift apart.

import type { CedarValueJson, PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool, JsonObject } from '../catalog/tool.js';
import { LruMap } from '../lru.js';
import { setOwn } from '../objects.js';
import { cedarRequestOf } from './cedar-request.js';
import type { CedarModel, RecordShape } from './cedar-schema.js';
import { type CedarConversion, toCedarRecord } from './cedar-values.js';
import { DecisionMemo } from './decision-memo.js';
import type { HumanStep } from './human-step.js';
import { type CedarAnswer, type KnownDecisions, type KnownDecisionTable, knownDecisionsOf } from './known-decisions.js';
import { type CheckedPolicySet, type CompiledPolicies, checkedPolicySetOf, type PolicyInfo } from './policy-set.js';
import { type ToolReach, toolReach } from './reach.js';
import { witnessArguments } from './witness.js';

export type DenyReason = 'no_permit' | 'forbidden' | 'not_representable' | 'evaluation_error';

/**
 * Why a tool is not listed for an agent: no permit applies to it (whatever its arguments), a
 * forbid always holds, no arguments could satisfy the conditions, or the policies cannot be
 * evaluated for it.
 */
export type HiddenReason = 'no_permit' | 'forbidden' | 'no_arguments' | 'evaluation_error';

/** Whether (and why) a tool is listed for an agent: the rule tools/list follows. */
export type Listing =
  | {
      readonly listed: true;
      /**
       * The distinct decisions some arguments get (the first one only, unless every outcome was
       * asked for); null when the conditions cannot be enumerated (the tool is listed then).
       */
      readonly outcomes: readonly PolicyDecision[] | null;
    }
  | { readonly listed: false; readonly reason: HiddenReason; readonly determining: readonly PolicyInfo[] };

export type PolicyDecision =
  | { readonly kind: 'allow'; readonly step: HumanStep | null; readonly determining: readonly PolicyInfo[] }
  | { readonly kind: 'deny'; readonly reason: DenyReason; readonly determining: readonly PolicyInfo[] };

const rank = (policy: PolicyInfo): [number, number, number, string] => [
  policy.approvals.length,
  policy.approvals.includes('staff') ? 1 : 0,
  policy.quorum,
  policy.approvers ?? '',
];

/** A policy's place in the files (Cedar's ids are policy0, policy1, … in file order). */
const policyIndex = (policy: PolicyInfo): number => Number(policy.id.slice('policy'.length));

const compare = (left: PolicyInfo, right: PolicyInfo): number => {
  const [a, b] = [rank(left), rank(right)];
  for (let index = 0; index < a.length; index++) {
    const x = a[index] ?? 0;
    const y = b[index] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return policyIndex(left) - policyIndex(right);
};

/** What the chosen permit asks before a call runs. */
const humanStepOf = (policy: PolicyInfo): HumanStep => {
  const staff = policy.approvals.includes('staff');
  return {
    staff: staff ? policy.approvers : null,
    customer: policy.approvals.includes('customer'),
    quorum: staff ? policy.quorum : 1,
    escalation: staff ? policy.escalation : null,
    reauth_ms: staff ? policy.reauth_ms : null,
    acr: staff ? policy.acr : null,
  };
};

/** Whether a canonical value is, or holds, an integer beyond 2^53 (a bigint). */
const holdsBigInteger = (value: unknown): boolean =>
  typeof value === 'bigint' ||
  (typeof value === 'object' && value !== null && Object.values(value).some(holdsBigInteger));

/** A copy with 0 in place of each integer beyond 2^53. */
const withoutBigIntegers = (value: unknown): unknown => {
  if (typeof value === 'bigint') return 0;
  if (Array.isArray(value)) return value.map(withoutBigIntegers);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    setOwn(out, key, withoutBigIntegers(child));
  }
  return out;
};

/** Agents whose listings are remembered per engine. */
const listedAgents = 1024;

export class PolicyEngine {
  /** Whether each tool is listed, per agent (id, groups, customer); bounded, as agents come from tokens. */
  private readonly listings = new LruMap<string, Map<string, boolean>>(listedAgents);
  /** Decisions made, by everything Cedar was shown that can change one (decision-memo.ts). */
  private readonly decisions: DecisionMemo<PolicyDecision>;

  constructor(
    private readonly compiled: CompiledPolicies,
    private readonly model: CedarModel,
    /** Answers config:push knew for every call of an agent to a tool (known-decisions.ts), when usable. */
    private readonly known: KnownDecisionTable | null = null,
  ) {
    this.decisions = new DecisionMemo(compiled.argumentsRead);
  }

  /** How many decisions are remembered (at most decisionMemoEntries). */
  get rememberedDecisions(): number {
    return this.decisions.size;
  }

  /** The policies as checked, for the compiled snapshot config:push writes. */
  get checked(): CheckedPolicySet {
    return checkedPolicySetOf(this.compiled);
  }

  /** Whether Cedar holds the policies pre-parsed yet (a deferred set is pre-parsed by the first call that needs Cedar). */
  get policiesParsed(): boolean {
    return this.compiled.isParsed();
  }

  /** The answers every call of these agents to these tools gets, whatever its arguments, for config:push. */
  knownDecisions(agents: readonly AgentIdentity[], tools: readonly CatalogTool[]): KnownDecisions {
    return knownDecisionsOf(this.compiled, agents, tools);
  }

  /** Every policy, in its files' order. */
  get policies(): readonly PolicyInfo[] {
    return [...this.compiled.policies.values()];
  }

  private info(ids: readonly string[]): PolicyInfo[] {
    return ids.flatMap((id) => this.compiled.policies.get(id) ?? []);
  }

  /** The policies, in their files' order. */
  private inFileOrder(ids: readonly string[]): PolicyInfo[] {
    return this.info(ids).sort((left, right) => policyIndex(left) - policyIndex(right));
  }

  private shapeOf(tool: CatalogTool): RecordShape {
    return this.model.shapes.get(tool.name) ?? { kind: 'record', attributes: new Map() };
  }

  /** One concrete evaluation, with the gateway's fail-closed reading of Cedar's answer. */
  private evaluate(agent: AgentIdentity, tool: CatalogTool, args: Record<string, CedarValueJson>): PolicyDecision {
    return this.evaluated(agent, tool, args).decision;
  }

  /** The decision, and whether Cedar answered it without any error (only such a decision is remembered). */
  private evaluated(
    agent: AgentIdentity,
    tool: CatalogTool,
    args: Record<string, CedarValueJson>,
  ): { readonly decision: PolicyDecision; readonly clean: boolean } {
    const refused: { decision: PolicyDecision; clean: boolean } = {
      decision: { kind: 'deny', reason: 'evaluation_error', determining: [] },
      clean: false,
    };
    if (!this.compiled.parse()) return refused;
    const answer = cedar.statefulIsAuthorized({
      ...cedarRequestOf(agent, tool),
      context: { arguments: args },
      preparsedPolicySetId: this.compiled.setId,
    });
    if (answer.type === 'failure') return refused;
    const { decision, diagnostics } = answer.response;
    // Cedar lists policies in no set order (it may differ from one evaluation to the next): file order.
    const errored = this.inFileOrder(diagnostics.errors.map((error) => error.policyId));
    // A forbid that could not be evaluated might have applied: refuse rather than guess.
    if (errored.some((policy) => policy.effect === 'forbid')) {
      return {
        decision: {
          kind: 'deny',
          reason: 'evaluation_error',
          determining: errored.filter((policy) => policy.effect === 'forbid'),
        },
        clean: false,
      };
    }
    const outcome = this.readAnswer(agent, { decision, reason: diagnostics.reason });
    return { decision: outcome, clean: diagnostics.errors.length === 0 };
  }

  /** Cedar's decision and the policies that determined it, read as the gateway's decision. */
  private readAnswer(agent: AgentIdentity, answer: CedarAnswer): PolicyDecision {
    const { decision } = answer;
    const determining = this.inFileOrder(answer.reason);
    if (decision === 'deny') {
      const forbids = determining.filter((policy) => policy.effect === 'forbid');
      return forbids.length > 0
        ? { kind: 'deny', reason: 'forbidden', determining: forbids }
        : { kind: 'deny', reason: 'no_permit', determining: [] };
    }
    const usable = determining.filter(
      (policy) => policy.effect === 'permit' && (agent.customerId !== null || !policy.approvals.includes('customer')),
    );
    const immediate = usable.filter((policy) => policy.approvals.length === 0);
    if (immediate.length > 0) return { kind: 'allow', step: null, determining: immediate };
    const [chosen] = [...usable].sort(compare);
    if (chosen === undefined) return { kind: 'deny', reason: 'no_permit', determining: [] };
    return {
      kind: 'allow',
      step: humanStepOf(chosen),
      determining: [chosen],
    };
  }

  /**
   * The call's arguments as a Cedar record. Cedar's JavaScript binding takes numbers as doubles,
   * so an integer beyond 2^53 (kept exact for the system) cannot reach it. In a field no policy
   * reads, Cedar is shown 0 in its place (its value cannot change any decision, and Cedar wants
   * every field of the schema); in a field a policy reads, the call cannot be evaluated exactly
   * and is refused (not_representable).
   */
  private contextOf(tool: CatalogTool, args: JsonObject): CedarConversion {
    const shape = this.shapeOf(tool);
    const read = this.compiled.argumentsRead;
    if (read === 'all') return toCedarRecord(args, shape);
    let shown = args;
    for (const name of shape.attributes.keys()) {
      if (read.has(name) || !Object.hasOwn(args, name) || !holdsBigInteger(args[name])) continue;
      shown = { ...shown };
      setOwn(shown, name, withoutBigIntegers(args[name]));
    }
    return toCedarRecord(shown, shape);
  }

  /** The decision for a call with canonical arguments. */
  decide(agent: AgentIdentity, tool: CatalogTool, args: JsonObject): PolicyDecision {
    const context = this.contextOf(tool, args);
    if (!context.ok || typeof context.value !== 'object' || context.value === null || Array.isArray(context.value)) {
      return { kind: 'deny', reason: 'not_representable', determining: [] };
    }
    const record: Record<string, CedarValueJson> = {};
    for (const [key, value] of Object.entries(context.value)) if (value !== undefined) record[key] = value;
    const key = this.decisions.keyOf(tool, agent, record);
    const remembered = this.decisions.get(key);
    if (remembered !== undefined) return remembered;
    const known = this.known?.answer(agent, tool.name);
    if (known !== undefined) {
      const decision = this.readAnswer(agent, known);
      this.decisions.remember(key, decision);
      return decision;
    }
    const { decision, clean } = this.evaluated(agent, tool, record);
    if (clean) this.decisions.remember(key, decision);
    return decision;
  }

  /**
   * Whether a tool is listed for an agent: unless no arguments could ever get it permitted.
   * Exact when the residual conditions only compare fields with constants; otherwise a
   * conditional tool is listed.
   */
  isListed(agent: AgentIdentity, tool: CatalogTool): boolean {
    const key = JSON.stringify([agent.id, agent.groups, agent.customerId]);
    let forAgent = this.listings.get(key);
    if (forAgent === undefined) {
      forAgent = new Map();
      this.listings.set(key, forAgent);
    }
    const cached = forAgent.get(tool.name);
    if (cached !== undefined) return cached;
    const listed = this.listing(agent, tool, false).listed;
    forAgent.set(tool.name, listed);
    return listed;
  }

  /**
   * Whether a tool is listed for an agent, and why not (the rule of isListed, which this is):
   * with `everyOutcome`, each distinct decision some arguments get, for explaining a tool.
   */
  listing(agent: AgentIdentity, tool: CatalogTool, everyOutcome = true): Listing {
    const answer = cedar.isAuthorizedPartial({
      ...cedarRequestOf(agent, tool),
      context: { arguments: { __extn: { fn: 'unknown', arg: 'arguments' } } },
      policies: { staticPolicies: this.compiled.texts },
    });
    if (answer.type === 'failure') return { listed: false, reason: 'evaluation_error', determining: [] };
    const { response } = answer;
    if (response.decision === 'deny') {
      const forbids = this.inFileOrder(response.satisfied).filter((policy) => policy.effect === 'forbid');
      return forbids.length > 0
        ? { listed: false, reason: 'forbidden', determining: forbids }
        : { listed: false, reason: 'no_permit', determining: [] };
    }
    const residuals: PolicyJson[] = response.nontrivialResiduals.flatMap((id) => response.residuals[id] ?? []);
    const candidates = witnessArguments(residuals, this.shapeOf(tool));
    // Residuals the analysis cannot decide: listed, since some arguments may well be permitted.
    if (candidates === null) return { listed: true, outcomes: null };
    const outcomes: PolicyDecision[] = [];
    const seen = new Set<string>();
    for (const args of candidates) {
      const decision = this.evaluate(agent, tool, args);
      if (!everyOutcome) {
        if (decision.kind === 'allow') return { listed: true, outcomes: [decision] };
        continue;
      }
      const key = JSON.stringify(decision);
      if (!seen.has(key)) outcomes.push(decision);
      seen.add(key);
    }
    if (outcomes.some((decision) => decision.kind === 'allow')) return { listed: true, outcomes };
    return { listed: false, reason: 'no_arguments', determining: this.inFileOrder(response.nontrivialResiduals) };
  }

  /**
   * The policies that may apply to a tool for some agent (whoever it is, whatever its groups)
   * and some arguments: a tool no permit reaches is hidden from every agent.
   */
  reach(tool: CatalogTool): ToolReach {
    return toolReach(tool, this.compiled);
  }
}
