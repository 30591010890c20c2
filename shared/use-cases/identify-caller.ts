// Who a verified caller is: the agent its subject names in the configuration in force. Behind the
// authorizer, so a config:push takes effect at once, whatever the authorizer has cached.
import { type AgentIdentity, type Caller, identify } from '../auth/agent.js';
import type { Clock } from '../clock.js';
import type { ControlPlane } from '../control-plane/control-plane.js';

/** Where identification reads the configured agents: the control plane's snapshot, and the time. */
export interface IdentifyDeps {
  readonly controlPlane: ControlPlane;
  readonly clock: Clock;
}

/**
 * The agent a caller is under the configuration in force: the last good snapshot, stale or turned
 * off included (its agents are still who they were); with none loaded yet, every subject is unlisted.
 */
export const identifyCaller = async (deps: IdentifyDeps, caller: Caller | null): Promise<AgentIdentity | null> => {
  if (caller === null) return null;
  const state = await deps.controlPlane.current();
  return identify(caller, state.snapshot?.config.agents ?? [], deps.clock.now());
};
