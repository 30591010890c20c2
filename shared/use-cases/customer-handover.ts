// A held call handed over to the customer by URL elicitation, met again when the client retries
// the same tools/call: the retry answers the call that is already recorded (never a second one),
// once the record shows the customer's step is over. Two ways to find it: by the sealed state the
// client echoes (2026-07-28), or by the agent's own recent calls (2025-11-25, no state on the wire).
import { canonicalizeArguments } from '../arguments/canonicalize.js';
import type { StrictArguments } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { type Execution, toResultObject } from '../executions/execution.js';
import type { ResultObject } from '../result.js';
import { findOwnCall, type OwnCallDeps } from './tasks.js';

export interface HandoverDeps extends OwnCallDeps {
  readonly controlPlane: ControlPlane;
}

/** What a retry finds: a call still waiting for the customer, a call past that step, or nothing. */
export type Resumed =
  | { readonly kind: 'waiting_for_customer'; readonly execution: Execution }
  | { readonly kind: 'customer_step_over'; readonly execution: Execution; readonly result: ResultObject }
  | { readonly kind: 'no_such_call' };

/** The customer has not answered yet: the record says so, not the client. */
const waitsForCustomer = (execution: Execution): boolean =>
  execution.status === 'pending_approval' &&
  execution.decision?.step?.customer === true &&
  execution.customer_confirmed_at === null;

/** The canonical arguments hash of a tools/call as the catalog reads it now; null when it cannot be read. */
const canonicalHashOf = async (
  deps: HandoverDeps,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
): Promise<string | null> => {
  const state = await deps.controlPlane.current();
  if (state.kind !== 'active') return null;
  const tool = state.snapshot.catalog.byName.get(name);
  if (tool === undefined || !state.snapshot.policy.isListed(agent, tool)) return null;
  const canonical = canonicalizeArguments(tool, args);
  return canonical.ok ? canonical.arguments.hash : null;
};

const resumed = (execution: Execution): Resumed =>
  waitsForCustomer(execution)
    ? { kind: 'waiting_for_customer', execution }
    : { kind: 'customer_step_over', execution, result: toResultObject(execution) };

/**
 * 2026-07-28: the call a verified requestState names, only if this retry is the very request it was
 * minted for (same tool and canonical arguments) and the call is the agent's own.
 */
export const resumeByState = async (
  deps: HandoverDeps,
  agent: AgentIdentity,
  minted: { readonly execution_id: string; readonly tool: string; readonly arguments_hash: string },
  name: string,
  args: StrictArguments,
): Promise<Resumed> => {
  if (minted.tool !== name) return { kind: 'no_such_call' };
  const execution = await findOwnCall(deps, agent, minted.execution_id);
  if (execution === undefined || execution.tool !== name || execution.arguments_hash !== minted.arguments_hash) {
    return { kind: 'no_such_call' };
  }
  if ((await canonicalHashOf(deps, agent, name, args)) !== minted.arguments_hash) return { kind: 'no_such_call' };
  return resumed(execution);
};

/** How many of the agent's newest calls a 2025-11-25 retry looks through. */
const recentCallsLooked = 25;

/**
 * 2025-11-25: the agent's newest call of this tool with the same canonical arguments that was held
 * for the customer and whose approval time has not run out — still waiting for the customer, or
 * answered by them since. Only the newest such call counts, so a call made after it is never
 * skipped for an older one.
 */
export const resumeByArguments = async (
  deps: HandoverDeps,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
): Promise<Resumed> => {
  const hash = await canonicalHashOf(deps, agent, name, args);
  if (hash === null) return { kind: 'no_such_call' };
  const page = await deps.store.listByAgent(agent.id, { limit: recentCallsLooked });
  const now = deps.clock.now();
  const match = page.items.find(
    (item) =>
      item.tool === name &&
      item.arguments_hash === hash &&
      item.decision?.step?.customer === true &&
      item.expires_at !== null &&
      Date.parse(item.expires_at) > now,
  );
  if (match === undefined) return { kind: 'no_such_call' };
  const execution = await findOwnCall(deps, agent, match.execution_id);
  return execution === undefined ? { kind: 'no_such_call' } : resumed(execution);
};
