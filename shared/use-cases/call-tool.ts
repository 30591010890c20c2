// tools/call for catalog tools: find the tool this agent may see, put its arguments in canonical
// form, and let policy decide. Every call leaves an execution record, refusals included.
import canonicalJson from 'canonicalize';
import { canonicalizeArguments } from '../arguments/canonicalize.js';
import { redactMarked } from '../arguments/redact.js';
import type { StrictArguments } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool, JsonObject } from '../catalog/tool.js';
import { type Clock, isoAt } from '../clock.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import type { GatewaySnapshot } from '../control-plane/snapshot.js';
import { resultMessages } from '../errors.js';
import { type DecisionRecord, type Execution, toResultObject } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';
import type { IdSource } from '../ids.js';
import type { PolicyDecision } from '../policy/engine.js';
import type { ExecutionStatus, InputError, ResultObject } from '../result.js';

export interface CallToolDeps {
  readonly store: ExecutionStore;
  readonly ids: IdSource;
  readonly clock: Clock;
  readonly controlPlane: ControlPlane;
}

/** Tool names as recorded: an unlisted name is the agent's text, so it is bounded. */
const recordedName = (name: string): string => (name.length > 200 ? `${name.slice(0, 200)}…` : name);

/** The catalog tools this agent may see now: none while the configuration is off or stale. */
export const visibleTools = async (
  controlPlane: ControlPlane,
  agent: AgentIdentity,
): Promise<readonly CatalogTool[]> => {
  const state = await controlPlane.current();
  if (state.kind !== 'active') return [];
  const { catalog, policy } = state.snapshot;
  return catalog.tools.filter((tool) => policy.isListed(agent, tool));
};

const decisionRecord = (decision: PolicyDecision, snapshot: GatewaySnapshot): DecisionRecord => ({
  effect: decision.kind,
  reason: decision.kind === 'deny' ? decision.reason : null,
  determining: decision.determining.map((policy) => ({ name: policy.name, file: policy.file, line: policy.line })),
  step: decision.kind === 'allow' ? decision.step : null,
  config_version: snapshot.version,
});

interface Outcome {
  readonly status: ExecutionStatus;
  readonly code: Execution['code'];
  readonly message: string | null;
  readonly inputErrors?: readonly InputError[];
  /** Canonical arguments as kept for the record. */
  readonly argumentsJson?: string;
  readonly argumentsHash?: string;
  readonly decision?: DecisionRecord;
}

const record = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  tool: string,
  outcome: Outcome,
): Promise<ResultObject> => {
  const at = isoAt(deps.clock);
  const execution: Execution = {
    execution_id: deps.ids.next(),
    agent_id: agent.id,
    customer_id: agent.customerId,
    tool: recordedName(tool),
    status: outcome.status,
    arguments_json: outcome.argumentsJson ?? null,
    code: outcome.code,
    message: outcome.message,
    result_json: null,
    approval_url: null,
    input_errors: outcome.inputErrors === undefined ? null : [...outcome.inputErrors],
    arguments_hash: outcome.argumentsHash ?? null,
    decision: outcome.decision ?? null,
    created_at: at,
    updated_at: at,
    history: [{ status: outcome.status, at }],
  };
  await deps.store.create(execution);
  return toResultObject(execution);
};

/** Arguments as kept in clear on a record: secrets redacted (what runs is kept apart, encrypted). */
const keptArguments = (value: JsonObject, tool: CatalogTool): string =>
  canonicalJson(redactMarked(value, tool.inputSchema)) ?? '{}';

export const callTool = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
): Promise<ResultObject> => {
  const state = await deps.controlPlane.current();
  const snapshot = state.kind === 'active' ? state.snapshot : null;
  const tool = snapshot?.catalog.byName.get(name);
  // A tool the agent cannot see answers exactly like one that does not exist.
  if (snapshot === null || tool === undefined || !snapshot.policy.isListed(agent, tool)) {
    return record(deps, agent, name, { status: 'denied', code: 'unknown_tool', message: resultMessages.unknown_tool });
  }
  const canonical = canonicalizeArguments(tool, args);
  if (!canonical.ok) {
    return record(deps, agent, tool.name, {
      status: 'denied',
      code: 'invalid_arguments',
      message: resultMessages.invalid_arguments,
      inputErrors: canonical.errors,
    });
  }
  const decision = snapshot.policy.decide(agent, tool, canonical.arguments.value);
  const kept = {
    argumentsJson: keptArguments(canonical.arguments.value, tool),
    argumentsHash: canonical.arguments.hash,
    decision: decisionRecord(decision, snapshot),
  };
  if (decision.kind === 'deny') {
    return record(deps, agent, tool.name, {
      status: 'denied',
      code: 'policy_denied',
      message: resultMessages.policy_denied,
      ...kept,
    });
  }
  if (decision.step !== null) {
    return record(deps, agent, tool.name, {
      status: 'pending_approval',
      code: null,
      message: decision.step.customer ? resultMessages.waiting_for_customer : resultMessages.waiting_for_staff,
      ...kept,
    });
  }
  // Permitted to run at once; the direct path that sends calls is not wired yet, so nothing is sent.
  return record(deps, agent, tool.name, {
    status: 'failed',
    code: 'execution_unavailable',
    message: resultMessages.execution_unavailable,
    ...kept,
  });
};
