// Approval services for use-case tests: the store and clock the test gives, every other port a
// stub that fails loudly if the code under test reaches it.
import type { Clock } from '../../shared/clock.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { ApprovalServices } from '../../shared/use-cases/approval-services.js';

/** A port the test does not expect to be used: calling it rejects, naming it. */
export const unusedPort = (what: string) => () => Promise.reject(new Error(`${what} is not used by this test`));

export const approvalDepsFor = (
  store: ExecutionStore,
  clock: Clock,
  overrides: Partial<ApprovalServices> = {},
): ApprovalServices => ({
  store,
  clock,
  systems: { send: unusedPort('the system client') },
  log: { info: () => undefined, warn: () => undefined },
  controlPlane: { current: unusedPort('the control plane') },
  sealer: { seal: unusedPort('the sealer'), open: unusedPort('the sealer') },
  notifier: { heldCall: unusedPort('the notifier') },
  consoleUrl: (id) => `http://127.0.0.1/console/executions/${id}`,
  approvalRuns: { start: unusedPort('the approval runs'), signal: unusedPort('the approval run signal') },
  ...overrides,
});
