// AWS clients for the deployed functions, built once per container from the parsed environment.
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { FunctionEnvironment } from './environment.js';

export const serviceLogger = (serviceName: string): Logger => new Logger({ serviceName });

let documents: DynamoDBDocumentClient | undefined;

export const executionStoreFor = (environment: FunctionEnvironment): ExecutionStore => {
  documents ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return new DynamoDbExecutionStore(documents, environment.EXECUTIONS_TABLE);
};
