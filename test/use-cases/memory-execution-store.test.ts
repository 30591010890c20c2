// The in-memory execution store meets the same contract as the DynamoDB adapter, so use-case tests
// on it stand for the real store.
import { describe } from 'vitest';
import { MemoryExecutionStore } from '../../shared/adapters/memory/execution-store.js';
import { callKeysContract } from '../contracts/call-keys.contract.js';
import { executionListingContract } from '../contracts/execution-listing.contract.js';
import { executionStoreContract } from '../contracts/execution-store.contract.js';
import { quietLog, warningsLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';

/**
 * The in-memory store with the one fault its places can have in a store: giving them back fails,
 * for the agents named in `broken` (the DynamoDB store's test breaks the item itself).
 */
class BrokenPlacesStore extends MemoryExecutionStore {
  readonly broken = new Set<string>();

  override async releasePending(agentId: string, executionIds: readonly string[]): Promise<void> {
    if (this.broken.has(agentId)) throw new Error(`The places of ${agentId} could not be written.`);
    return super.releasePending(agentId, executionIds);
  }
}

// The contract's rules are cited here: the manifest check reads the titles of *.test.ts files only.
describe(
  verifies(
    [
      'store.contract',
      'store.ownership-by-key',
      'store.by-id-and-by-agent',
      'store.conditional-transitions',
      'store.guarded-writes',
      'store.open-calls',
      'store.open-calls-from-records',
      'limits.pending-store-race-safe',
      'limits.pending-released-on-leave',
      'ops.retention',
      'store.lifecycle-plan',
      'store.release-failure-logged',
    ],
    'the port contract in memory',
  ),
  () => {
    executionStoreContract('MemoryExecutionStore', async () => {
      const log = warningsLog();
      const store = new BrokenPlacesStore(log);
      return {
        store,
        warnings: log.warnings,
        breakPlaces: async (agentId) => void store.broken.add(agentId),
        close: async () => undefined,
      };
    });
  },
);

describe(verifies('ops.executions-newest-first', 'the listing in memory'), () => {
  executionListingContract('MemoryExecutionStore', async () => {
    const store = new MemoryExecutionStore(quietLog);
    return { store, listing: store, close: async () => undefined };
  });
});

describe(verifies('store.call-keys', 'call keys in memory'), () => {
  callKeysContract('MemoryExecutionStore', async () => ({
    store: new MemoryExecutionStore(quietLog),
    close: async () => undefined,
  }));
});
