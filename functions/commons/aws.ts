// AWS clients for the deployed functions, built once per container from the parsed environment.
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbConfigStore } from '../../shared/adapters/dynamodb/config-store.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { KmsSealer } from '../../shared/adapters/kms-sealer.js';
import { UndiciSystemClient } from '../../shared/adapters/undici-system-client.js';
import { systemClock } from '../../shared/clock.js';
import type { ControlPlane } from '../../shared/control-plane/control-plane.js';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { SystemClient } from '../../shared/invoke/system-client.js';
import type { Sealer } from '../../shared/sealing.js';
import { type FunctionEnvironment, referenceVariables } from './environment.js';

export const serviceLogger = (serviceName: string): Logger => new Logger({ serviceName });

let documents: DynamoDBDocumentClient | undefined;
const documentClient = (): DynamoDBDocumentClient => {
  documents ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return documents;
};

export const executionStoreFor = (environment: FunctionEnvironment): ExecutionStore =>
  new DynamoDbExecutionStore(documentClient(), environment.EXECUTIONS_TABLE);

export const controlPlaneFor = (environment: FunctionEnvironment, logger: Logger): ControlPlane =>
  new StoredControlPlane(
    new DynamoDbConfigStore(documentClient(), environment.CONFIG_TABLE),
    referenceVariables(),
    systemClock,
    logger,
    environment.CONFIG_REFRESH_SECONDS * 1000,
  );

let sealer: Sealer | undefined;
export const sealerFor = (environment: FunctionEnvironment): Sealer => {
  sealer ??= new KmsSealer(new KMSClient({}), environment.DATA_KEY_ID);
  return sealer;
};

/** One client (and connection pool) per container. */
export const systemClient: SystemClient = new UndiciSystemClient();
