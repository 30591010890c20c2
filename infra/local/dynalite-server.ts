// dynalite, the local DynamoDB's server: on loopback behind the signature check, with its storage
// module patched (cursors that end, exact-size copies in memory, the fault injection tests use). It
// imports no AWS SDK client, so a thread of its own loads only this (store-thread.ts).

import { createRequire } from 'node:module';
import dynalite from 'dynalite';
import type * as DynaliteDb from 'dynalite/db/index.js';
import { type LocalAwsCredentials, requireSignedRequests } from './aws-signature.js';
import { listen } from './net.js';

// dynalite's storage module, patched once at load (dynalite's server looks these functions up on
// the module at each call, so the patches apply to every store made in this process).
const dynaliteDb: typeof DynaliteDb = createRequire(import.meta.url)('dynalite/db/index.js');

interface StoreHooks {
  /** Iterators created and not yet ended (their close() not called), in its first element. */
  readonly cursors: Int32Array;
  crashBetweenIndexAndRecord: boolean;
  /** The in-memory store's database, once dynalite has made it. */
  memory?: DynaliteDb.LevelDatabase;
}
/** Per store, keyed by the options object given to dynalite (which its store keeps as `options`). */
const storeHooks = new WeakMap<object, StoreHooks>();

/**
 * dynalite reads queries and scans through streams that end their LevelDB iterator with
 * `iterator.return()`, which abstract-level 3 iterators do not have (they have `close()`). So no
 * iterator was ever closed: each kept its implicit snapshot, which pins old store files on disk
 * and their blocks in memory. Every iterator the store creates gets a `return()` that closes it.
 */
const closeIteratorsOf = (database: DynaliteDb.LevelDatabase, hooks: StoreHooks): void => {
  const closable = (iterator: DynaliteDb.LevelIterator): DynaliteDb.LevelIterator => {
    Atomics.add(hooks.cursors, 0, 1);
    const close = iterator.close.bind(iterator);
    let closing: Promise<void> | undefined;
    iterator.close = () => {
      if (closing === undefined) {
        Atomics.sub(hooks.cursors, 0, 1);
        closing = close();
      }
      return closing;
    };
    iterator.return = iterator.close;
    return iterator;
  };
  const values = database.values.bind(database);
  const keys = database.keys.bind(database);
  database.values = (options) => closable(values(options));
  database.keys = (options) => closable(keys(options));
};

/**
 * In memory, the store keeps the very buffers it is given, and small buffers are slices of Node's
 * shared 8 KB pool: each kept key or record pinned most of a slab (about 10 KB per call instead of
 * the 1.5 KB it holds). The in-memory store keeps exact-size copies instead.
 */
const ownBuffer = (value: unknown): unknown => {
  if (!Buffer.isBuffer(value)) return value;
  const copy = Buffer.allocUnsafeSlow(value.length);
  value.copy(copy);
  return copy;
};
const keepExactCopies = (database: DynaliteDb.LevelDatabase): void => {
  const put = database._put.bind(database);
  const batch = database._batch.bind(database);
  database._put = (key, value, options) => put(ownBuffer(key), ownBuffer(value), options);
  database._batch = (operations, options) =>
    batch(
      operations.map((operation) => ({
        ...operation,
        key: ownBuffer(operation.key),
        ...(operation.value === undefined ? {} : { value: ownBuffer(operation.value) }),
      })),
      options,
    );
};

/** Whether a write takes the item out of one of the table's global secondary indexes. */
const leavesAnIndex = (
  table: DynaliteDb.DynaliteTable,
  before: DynaliteDb.DynamoItem | undefined | null,
  after: DynaliteDb.DynamoItem | undefined | null,
): boolean =>
  (table.GlobalSecondaryIndexes ?? []).some(
    (index) =>
      index.KeySchema.every((key) => before?.[key.AttributeName] != null) &&
      !index.KeySchema.every((key) => after?.[key.AttributeName] != null),
  );

const createStore = dynaliteDb.create;
dynaliteDb.create = (options) => {
  const store = createStore(options);
  const hooks = storeHooks.get(options);
  if (hooks !== undefined) closeIteratorsOf(store.db, hooks);
  if (hooks !== undefined && !('path' in options)) {
    keepExactCopies(store.db);
    hooks.memory = store.db;
  }
  return store;
};
// dynalite writes a record's index entries first and the record after, as separate writes. The
// fault injection stops the process between the two, where a call has left the index of open
// calls while its record still says it is open.
const updateIndexes = dynaliteDb.updateIndexes;
dynaliteDb.updateIndexes = (store, table, existingItem, item, callback) =>
  updateIndexes(store, table, existingItem, item, (error) => {
    if (
      !error &&
      storeHooks.get(store.options)?.crashBetweenIndexAndRecord &&
      leavesAnIndex(table, existingItem, item)
    ) {
      process.kill(process.pid, 'SIGKILL');
    }
    callback(error);
  });

export interface DynaliteOptions {
  dataPath: string | null;
  port?: number;
  /**
   * Fault injection for tests: kill the process (SIGKILL) at the first write that takes an item
   * out of an index, after the index entry is gone and before the record is written.
   */
  crashBetweenIndexAndRecord?: boolean;
  /** The credential requests must be signed with: anything else is refused. */
  credentials: LocalAwsCredentials;
}

/** The store's server, wherever it runs (this thread, or a thread of its own: store-thread.ts). */
export interface DynaliteServer {
  readonly endpoint: string;
  /**
   * Store cursors (LevelDB iterators) not yet ended: each query or scan opens one and ends it
   * before it answers, so between requests this is 0.
   */
  openCursors(): number;
  /**
   * In memory: how many kept keys and records are views into a larger buffer than their own (a
   * slice of Node's shared pool pins the whole slab for as long as it is kept). 0 on disk.
   */
  sharedBuffersKept(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Starts dynalite on loopback behind the signature check. `cursors` counts its open cursors in its
 * first element (shared memory, so the thread that started a store thread can read it).
 */
export const startDynalite = async (
  options: DynaliteOptions,
  cursors: Int32Array = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)),
): Promise<DynaliteServer> => {
  const hooks: StoreHooks = { cursors, crashBetweenIndexAndRecord: options.crashBetweenIndexAndRecord ?? false };
  const dynaliteOptions = {
    ...(options.dataPath === null ? {} : { path: options.dataPath }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  };
  storeHooks.set(dynaliteOptions, hooks);
  const server = dynalite(dynaliteOptions);
  requireSignedRequests(server, options.credentials, 16 * 1024 * 1024);
  const listening = await listen(server, '127.0.0.1', options.port ?? 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    openCursors: () => Atomics.load(cursors, 0),
    sharedBuffersKept: async () => {
      if (hooks.memory === undefined) return 0;
      let shared = 0;
      for await (const entry of hooks.memory.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
        for (const kept of entry) if (Buffer.isBuffer(kept) && kept.buffer.byteLength > kept.byteLength) shared += 1;
      }
      return shared;
    },
    close: () => listening.close(),
  };
};
