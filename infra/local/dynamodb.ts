// The local DynamoDB: dynalite in-process (on disk under the data folder, or in memory), with the
// tables created from the same definitions the CDK stack deploys.

import { createRequire } from 'node:module';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import type * as DynaliteDb from 'dynalite/db/index.js';
import { executionStoreDocuments } from '../../shared/adapters/dynamodb/store-client.js';
import type { TableDefinition } from '../../shared/adapters/dynamodb/tables.js';
import { type LocalAwsCredentials, newLocalAwsCredentials, requireSignedRequests } from './aws-signature.js';
import { listen } from './net.js';
import { answerFaults, type FaultHooks, type StoreFaultEvent } from './store-faults.js';

export type { StoreFaultEvent } from './store-faults.js';

export interface LocalDynamoDb {
  readonly endpoint: string;
  readonly client: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  /** The credential requests must be signed with: anything else is refused. */
  readonly credentials: LocalAwsCredentials;
  /**
   * Store cursors (LevelDB iterators) not yet ended: each query or scan opens one and ends it
   * before it answers, so between requests this is 0.
   */
  openCursors(): number;
  /** Reads and writes the data folder refused since the start (each answered as a temporary error). */
  faults(): number;
  /**
   * In memory: how many kept keys and records are views into a larger buffer than their own (a
   * slice of Node's shared pool pins the whole slab for as long as it is kept). 0 on disk.
   */
  sharedBuffersKept(): Promise<number>;
  close(): Promise<void>;
}

/** The local runtime's table names (npm run executions reads the first). */
export const localTableNames = { executions: 'gateway-executions', config: 'gateway-config' } as const;

/** The AWS SDK's settings for a local endpoint: the run's own credential, never a real one. */
export const localAwsClientConfig = (endpoint: string, credentials: LocalAwsCredentials) => ({
  endpoint,
  region: 'local',
  credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
});

export const documentClient = (client: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

// dynalite's storage module, patched once at load (dynalite's server looks these functions up on
// the module at each call, so the patches apply to every store made in this process).
const dynaliteDb: typeof DynaliteDb = createRequire(import.meta.url)('dynalite/db/index.js');

interface StoreHooks extends FaultHooks {
  /** Iterators created and not yet ended (their close() not called). */
  openCursors: number;
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
    hooks.openCursors += 1;
    const close = iterator.close.bind(iterator);
    let closing: Promise<void> | undefined;
    iterator.close = () => {
      if (closing === undefined) {
        hooks.openCursors -= 1;
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
  if (hooks !== undefined) answerFaults(store.db, hooks);
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

export const startLocalDynamoDb = async (options: {
  dataPath: string | null;
  port?: number;
  /**
   * Fault injection for tests: kill the process (SIGKILL) at the first write that takes an item
   * out of an index, after the index entry is gone and before the record is written.
   */
  crashBetweenIndexAndRecord?: boolean;
  /** @default a fresh credential for this store */
  credentials?: LocalAwsCredentials;
  /** Told when the data folder begins refusing reads or writes, and when it works again. */
  onFault?: (fault: StoreFaultEvent) => void;
}): Promise<LocalDynamoDb> => {
  const hooks: StoreHooks = {
    openCursors: 0,
    faults: 0,
    failing: false,
    crashBetweenIndexAndRecord: options.crashBetweenIndexAndRecord ?? false,
    ...(options.onFault === undefined ? {} : { onFault: options.onFault }),
  };
  const dynaliteOptions = {
    ...(options.dataPath === null ? {} : { path: options.dataPath }),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  };
  storeHooks.set(dynaliteOptions, hooks);
  const server = dynalite(dynaliteOptions);
  const credentials = options.credentials ?? newLocalAwsCredentials();
  requireSignedRequests(server, credentials, 16 * 1024 * 1024);
  const listening = await listen(server, '127.0.0.1', options.port ?? 0);
  const endpoint = `http://127.0.0.1:${listening.port}`;
  const client = new DynamoDBClient(localAwsClientConfig(endpoint, credentials));
  return {
    endpoint,
    client,
    documents: executionStoreDocuments(client),
    credentials,
    openCursors: () => hooks.openCursors,
    faults: () => hooks.faults,
    sharedBuffersKept: async () => {
      if (hooks.memory === undefined) return 0;
      let shared = 0;
      for await (const entry of hooks.memory.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
        for (const kept of entry) if (Buffer.isBuffer(kept) && kept.buffer.byteLength > kept.byteLength) shared += 1;
      }
      return shared;
    },
    close: async () => {
      client.destroy();
      await listening.close();
    },
  };
};

const createTableInput = (definition: TableDefinition, tableName: string): CreateTableCommandInput => {
  const keySchema = (partition: { name: string }, sort?: { name: string }) => [
    { AttributeName: partition.name, KeyType: 'HASH' as const },
    ...(sort === undefined ? [] : [{ AttributeName: sort.name, KeyType: 'RANGE' as const }]),
  ];
  const attributes = new Map<string, 'S' | 'N'>();
  for (const key of [definition.partitionKey, definition.sortKey]) if (key) attributes.set(key.name, key.type);
  for (const index of definition.globalSecondaryIndexes) {
    for (const key of [index.partitionKey, index.sortKey]) if (key) attributes.set(key.name, key.type);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: keySchema(definition.partitionKey, definition.sortKey),
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
    ...(definition.globalSecondaryIndexes.length === 0
      ? {}
      : {
          GlobalSecondaryIndexes: definition.globalSecondaryIndexes.map((index) => ({
            IndexName: index.indexName,
            KeySchema: keySchema(index.partitionKey, index.sortKey),
            Projection: { ProjectionType: 'ALL' },
          })),
        }),
  };
};

/** Creates every table that does not exist yet; existing tables and their data are kept. */
export const ensureTables = async (
  client: DynamoDBClient,
  tables: readonly { definition: TableDefinition; tableName: string }[],
): Promise<void> => {
  const existing = new Set<string>();
  let start: string | undefined;
  do {
    const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    for (const name of page.TableNames ?? []) existing.add(name);
    start = page.LastEvaluatedTableName;
  } while (start !== undefined);
  for (const { definition, tableName } of tables) {
    if (!existing.has(tableName)) await client.send(new CreateTableCommand(createTableInput(definition, tableName)));
    await waitUntilActive(client, tableName);
    await requireIndexes(client, definition, tableName);
  }
};

/** A table this version reads through an index it lacks (made by an older version) is refused. */
export class OutdatedTableError extends Error {
  override readonly name = 'OutdatedTableError';
}

const requireIndexes = async (client: DynamoDBClient, definition: TableDefinition, tableName: string) => {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  const missing = definition.globalSecondaryIndexes
    .map((index) => index.indexName)
    .filter((name) => !present.has(name));
  if (missing.length > 0) {
    // The embedded store cannot add an index to a table, and its data would not be in it anyway.
    throw new OutdatedTableError(
      `The local table ${tableName} was made by an older version: it lacks the ${missing.join(', ')} index. ` +
        'Start with a new data folder (--data-dir), or move the old one away.',
    );
  }
};

const waitUntilActive = async (client: DynamoDBClient, tableName: string): Promise<void> => {
  for (let attempt = 0; attempt < 500; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`The local table ${tableName} did not become active.`);
};
