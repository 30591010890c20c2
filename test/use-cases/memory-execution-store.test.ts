// The in-memory execution store meets the same contract as the DynamoDB adapter, so use-case tests
// on it stand for the real store.
import { describe } from 'vitest';
import { MemoryExecutionStore } from '../../shared/adapters/memory/execution-store.js';
import { executionListingContract } from '../contracts/execution-listing.contract.js';
import { executionStoreContract } from '../contracts/execution-store.contract.js';
import { verifies } from '../support/requirements.js';

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
    ],
    'the port contract in memory',
  ),
  () => {
    executionStoreContract('MemoryExecutionStore', async () => ({
      store: new MemoryExecutionStore(),
      close: async () => undefined,
    }));
  },
);

describe(verifies('ops.executions-newest-first', 'the listing in memory'), () => {
  executionListingContract('MemoryExecutionStore', async () => {
    const store = new MemoryExecutionStore();
    return { store, listing: store, close: async () => undefined };
  });
});
