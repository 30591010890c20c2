// The pending_calls limit: a call is held only once it has taken one of its agent's places in the
// store (one conditional write). A place whose holder no longer waits is given back when the
// call leaves pending_approval; one left behind by a crash is given back here, the next time the
// agent is found at its limit, so the count repairs itself without a separate recovery pass.
import type { Clock } from '../clock.js';
import type { ExecutionKey, ExecutionStore } from '../executions/store.js';
import { mayStillBeRecorded } from '../ids.js';

/** A place whose execution was never recorded is taken back once its id is this old (ids.ts). */
export { unrecordedGraceMs } from '../ids.js';

const readsAtOnce = 25;

/** The holders among `holders` that no longer wait for a decision. */
const goneHolders = async (
  deps: { readonly store: ExecutionStore; readonly clock: Clock },
  agentId: string,
  holders: readonly string[],
): Promise<string[]> => {
  const now = deps.clock.now();
  const isGone = async (executionId: string): Promise<boolean> => {
    const execution = await deps.store.getOwned({ execution_id: executionId, agent_id: agentId });
    // A place whose execution was never recorded comes back once the record can no longer land.
    if (execution === undefined) return !mayStillBeRecorded(executionId, now);
    // A call past its approval time can only end expired (a decision needs time left).
    const overdue = execution.expires_at !== null && Date.parse(execution.expires_at) <= now;
    return execution.status !== 'pending_approval' || overdue;
  };
  // A few reads at a time: an agent at a large limit must not flood the store in one go.
  const gone: string[] = [];
  for (let start = 0; start < holders.length; start += readsAtOnce) {
    const batch = holders.slice(start, start + readsAtOnce);
    const verdicts = await Promise.all(batch.map(isGone));
    gone.push(...batch.filter((_, index) => verdicts[index] === true));
  }
  return gone;
};

/**
 * Takes a place for the call `key` under `limit`; false when the agent already has `limit` calls
 * waiting. At the limit, places whose holders are gone are given back first, then one more try.
 */
export const takePendingPlace = async (
  deps: { readonly store: ExecutionStore; readonly clock: Clock },
  key: ExecutionKey,
  limit: number,
): Promise<boolean> => {
  const first = await deps.store.reservePending(key.agent_id, key.execution_id, limit);
  if (first.kind === 'reserved') return true;
  const gone = await goneHolders(
    deps,
    key.agent_id,
    first.holders.filter((id) => id !== key.execution_id),
  );
  if (gone.length === 0) return false;
  await deps.store.releasePending(key.agent_id, gone);
  return (await deps.store.reservePending(key.agent_id, key.execution_id, limit)).kind === 'reserved';
};
