// What the gateway would decide for one call, without sending or recording anything: the tool as
// this agent sees it, its arguments in canonical form, and the policy's decision: the steps
// tools/call takes before anything is recorded or sent, and what policy:test rehearses.
import { type CanonicalArguments, canonicalizeArguments } from '../arguments/canonicalize.js';
import type { StrictArguments } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool } from '../catalog/tool.js';
import type { GatewaySnapshot } from '../control-plane/gateway-snapshot.js';
import type { PolicyDecision } from '../policy/engine.js';
import type { InputError } from '../result.js';

export type CallDecision =
  /** No such tool, or one this agent cannot see: the call would answer unknown_tool. */
  | { readonly kind: 'unknown_tool' }
  /** The arguments are refused (invalid_arguments) before the policy sees them. */
  | { readonly kind: 'invalid_arguments'; readonly tool: CatalogTool; readonly errors: readonly InputError[] }
  | {
      readonly kind: 'decided';
      readonly tool: CatalogTool;
      readonly arguments: CanonicalArguments;
      readonly decision: PolicyDecision;
    };

/**
 * The tool, its canonical arguments and the policy's decision. A tool the agent cannot see, or of
 * another system than `systemKey` (a call that names its system), is reported exactly like one
 * that does not exist.
 */
export const decideCall = (
  snapshot: GatewaySnapshot,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
  systemKey: string | null = null,
): CallDecision => {
  const tool = snapshot.catalog.byName.get(name);
  if (tool === undefined || (systemKey !== null && tool.systemKey !== systemKey)) return { kind: 'unknown_tool' };
  const canonical = canonicalizeArguments(tool, args);
  if (!canonical.ok) {
    return snapshot.policy.isListed(agent, tool)
      ? { kind: 'invalid_arguments', tool, errors: canonical.errors }
      : { kind: 'unknown_tool' };
  }
  const decision = snapshot.policy.decide(agent, tool, canonical.arguments.value);
  // A permitted call proves the tool is listed (a tool is hidden only when no arguments could be
  // permitted), so the listing is asked only for a refusal: an unlisted tool stays unknown.
  if (decision.kind !== 'allow' && !snapshot.policy.isListed(agent, tool)) return { kind: 'unknown_tool' };
  return { kind: 'decided', tool, arguments: canonical.arguments, decision };
};
