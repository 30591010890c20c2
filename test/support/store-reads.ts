// What requests read from the execution store, counted by spies that pass every read through to
// the real store (as the bench counts requests on dynalite's wire).
import { vi } from 'vitest';
import type { ExecutionStore } from '../../shared/executions/store.js';

export interface StoreReads {
  /** Reads since the count began (or was last reset). */
  count(): number;
  reset(): void;
}

/** Counts every read of `store` from now on: by id, by owner, and each listing page. */
export const countStoreReads = (store: ExecutionStore): StoreReads => {
  const spies = [
    vi.spyOn(store, 'get'),
    vi.spyOn(store, 'getOwned'),
    vi.spyOn(store, 'listByAgent'),
    vi.spyOn(store, 'listOpen'),
    vi.spyOn(store, 'scanOpen'),
    vi.spyOn(store, 'countUnsettled'),
  ];
  return {
    count: () => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0),
    reset: () => {
      for (const spy of spies) spy.mockClear();
    },
  };
};
