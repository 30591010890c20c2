// Agent identities for tests, as authentication hands them to the use-cases.
import type { AgentIdentity } from '../../shared/auth/agent.js';

export const anAgent = (
  id: string,
  groups: readonly string[] = [],
  customerId: string | null = null,
): AgentIdentity => ({
  id,
  groups,
  customerId,
});
