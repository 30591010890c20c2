// A real local DynamoDB (dynalite) with the gateway's tables, for adapter and use-case tests.

import { ensureTables, type LocalDynamoDb, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';

export interface TestStore {
  readonly dynamodb: LocalDynamoDb;
  readonly store: DynamoDbExecutionStore;
  close(): Promise<void>;
}

export const startTestStore = async (dataPath: string | null = null, tableName = 'executions'): Promise<TestStore> => {
  const dynamodb = await startLocalDynamoDb({ dataPath });
  await ensureTables(dynamodb.client, [{ definition: executionsTable, tableName }]);
  return {
    dynamodb,
    store: new DynamoDbExecutionStore(dynamodb.documents, tableName),
    close: () => dynamodb.close(),
  };
};
