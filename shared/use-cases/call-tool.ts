// tools/call for catalog tools: find the tool this agent may see, then decide. Every call leaves
// an execution record, refusals included.
import canonicalJson from 'canonicalize';
import { canonicalizeArguments } from '../arguments/canonicalize.js';
import { redactMarked } from '../arguments/redact.js';
import type { StrictArguments } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool } from '../catalog/tool.js';
import { type Clock, isoAt } from '../clock.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { type ResultCode, resultMessages } from '../errors.js';
import { type Execution, toResultObject } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';
import type { IdSource } from '../ids.js';
import type { InputError, ResultObject } from '../result.js';

export interface CallToolDeps {
  readonly store: ExecutionStore;
  readonly ids: IdSource;
  readonly clock: Clock;
  readonly controlPlane: ControlPlane;
}

/** Tool names as recorded: an unlisted name is the agent's text, so it is bounded. */
const recordedName = (name: string): string => (name.length > 200 ? `${name.slice(0, 200)}…` : name);

/** The catalog tools this agent may see now (none while the configuration is off or stale). */
export const visibleTools = async (controlPlane: ControlPlane): Promise<readonly CatalogTool[]> => {
  const state = await controlPlane.current();
  return state.kind === 'active' ? state.snapshot.catalog.tools : [];
};

interface Refusal {
  readonly code: Extract<ResultCode, 'unknown_tool' | 'policy_denied' | 'invalid_arguments'>;
  readonly inputErrors?: readonly InputError[];
  /** Canonical arguments as kept for the record (secrets redacted: a refused call is never sent). */
  readonly argumentsJson?: string;
}

const refuse = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  tool: string,
  refusal: Refusal,
): Promise<ResultObject> => {
  const { code } = refusal;
  const at = isoAt(deps.clock);
  const execution: Execution = {
    execution_id: deps.ids.next(),
    agent_id: agent.id,
    customer_id: agent.customerId,
    tool: recordedName(tool),
    status: 'denied',
    arguments_json: refusal.argumentsJson ?? null,
    code,
    message: resultMessages[code],
    result_json: null,
    approval_url: null,
    input_errors: refusal.inputErrors === undefined ? null : [...refusal.inputErrors],
    created_at: at,
    updated_at: at,
    history: [{ status: 'denied', at }],
  };
  await deps.store.create(execution);
  return toResultObject(execution);
};

export const callTool = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
): Promise<ResultObject> => {
  const state = await deps.controlPlane.current();
  const tool = state.kind === 'active' ? state.snapshot.catalog.byName.get(name) : undefined;
  if (tool === undefined) return refuse(deps, agent, name, { code: 'unknown_tool' });
  const canonical = canonicalizeArguments(tool, args);
  if (!canonical.ok)
    return refuse(deps, agent, tool.name, { code: 'invalid_arguments', inputErrors: canonical.errors });
  // No policy engine is wired yet, so nothing is permitted: the gateway fails closed.
  return refuse(deps, agent, tool.name, {
    code: 'policy_denied',
    argumentsJson: canonicalJson(redactMarked(canonical.arguments.value, tool.inputSchema)) ?? '{}',
  });
};
