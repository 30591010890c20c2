// Type declarations for the parts of dynalite's storage module (dynalite/db) the local runtime
// patches at load: iterator clean-up, storage faults answered as errors, and the fault injection
// between an index entry and its record.
declare module 'dynalite/db/index.js' {
  /** A LevelDB iterator (abstract-level 3): `close()` ends it; dynalite's streams call `return()`. */
  export interface LevelIterator {
    close(): Promise<void>;
    return?: () => Promise<void>;
  }

  export interface LevelDatabase {
    values(options?: unknown): LevelIterator;
    keys(options?: unknown): LevelIterator;
    /** Entries as stored (buffers, as the in-memory store keeps them, with buffer encodings). */
    iterator(options?: unknown): AsyncIterable<readonly unknown[]>;
    attachResource(resource: unknown): void;
    detachResource(resource: unknown): void;
    /** abstract-level's storage hooks, given encoded keys and values. */
    _put(key: unknown, value: unknown, options: unknown): Promise<void>;
    _batch(operations: { type: string; key: unknown; value?: unknown }[], options: unknown): Promise<void>;
    _del(key: unknown, options: unknown): Promise<void>;
    _get(key: unknown, options: unknown): Promise<unknown>;
    _getMany(keys: unknown[], options: unknown): Promise<unknown[]>;
  }

  export type DynamoItem = Record<string, unknown>;

  export interface DynaliteTable {
    readonly TableName: string;
    readonly GlobalSecondaryIndexes?: readonly { readonly KeySchema: readonly { readonly AttributeName: string }[] }[];
  }

  export interface DynaliteStore {
    readonly db: LevelDatabase;
    /** The very options object given to `dynalite(options)`. */
    readonly options: object;
  }

  export function create(options: object): DynaliteStore;
  export function updateIndexes(
    store: DynaliteStore,
    table: DynaliteTable,
    existingItem: DynamoItem | undefined | null,
    item: DynamoItem | undefined | null,
    callback: (error?: Error | null) => void,
  ): void;
}
