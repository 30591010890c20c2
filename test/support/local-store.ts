// A real local DynamoDB (dynalite) with the gateway's tables, for adapter and use-case tests.

import { ensureTables, type LocalDynamoDb, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { warningsLog } from './logs.js';

export interface TestStore {
  readonly dynamodb: LocalDynamoDb;
  readonly store: DynamoDbExecutionStore;
  /** What the store logged at WARN, in order. */
  readonly warnings: ReturnType<typeof warningsLog>['warnings'];
  close(): Promise<void>;
}

export const startTestStore = async (dataPath: string | null = null, tableName = 'executions'): Promise<TestStore> => {
  const dynamodb = await startLocalDynamoDb({ dataPath });
  await ensureTables(dynamodb.client, [{ definition: executionsTable, tableName }]);
  const log = warningsLog();
  return {
    dynamodb,
    store: new DynamoDbExecutionStore(dynamodb.documents, tableName, log),
    warnings: log.warnings,
    close: () => dynamodb.close(),
  };
};
