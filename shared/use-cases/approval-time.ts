// The approval time of a held call, as the approval run's timer needs it: whole seconds, at least one,
// rounded up so the timer never fires before the call has expired.
import type { Execution } from '../executions/execution.js';

export const approvalTimeoutSeconds = (execution: Pick<Execution, 'expires_at'>, now: number): number => {
  if (execution.expires_at === null) return 1;
  return Math.max(1, Math.ceil((Date.parse(execution.expires_at) - now) / 1000));
};
