// The local DynamoDB: dynalite (on disk under the data folder, or in memory; on this thread, or on a
// thread of its own as the local runtime runs it: dynalite-server.ts, store-thread.ts) and its SDK
// clients, with the tables created from the same definitions the CDK stack deploys.

import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TableDefinition } from '../../shared/adapters/dynamodb/tables.js';
import { type LocalAwsCredentials, newLocalAwsCredentials } from './aws-signature.js';
import { type DynaliteOptions, type DynaliteServer, startDynalite } from './dynalite-server.js';
import { startDynaliteThread } from './store-thread.js';

export interface LocalDynamoDb extends DynaliteServer {
  readonly client: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  /** The credential requests must be signed with: anything else is refused. */
  readonly credentials: LocalAwsCredentials;
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

export const startLocalDynamoDb = async (
  options: Omit<DynaliteOptions, 'credentials'> & {
    /** @default a fresh credential for this store */
    credentials?: LocalAwsCredentials;
    /** Whether dynalite runs on a thread of its own (store-thread.ts) rather than this one. */
    thread?: boolean;
  },
): Promise<LocalDynamoDb> => {
  const { thread = false, ...rest } = options;
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const server = await (thread ? startDynaliteThread : startDynalite)({ ...rest, credentials });
  const client = new DynamoDBClient(localAwsClientConfig(server.endpoint, credentials));
  return {
    endpoint: server.endpoint,
    client,
    documents: documentClient(client),
    credentials,
    openCursors: () => server.openCursors(),
    sharedBuffersKept: () => server.sharedBuffersKept(),
    close: async () => {
      client.destroy();
      await server.close();
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
