// The local stand-ins for the AWS the gateway runs on: the data folder's lock, the embedded
// DynamoDB with the stack's tables, and the Step Functions endpoint running the approval run, all
// signed with one credential per run (written to an AWS config file for the operator's tools).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { configTable, executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { approvalDefinition } from '../state-machine/definition.js';
import { writeLocalAwsConfig } from './aws-config-file.js';
import { type LocalAwsCredentials, newLocalAwsCredentials } from './aws-signature.js';
import { lockDataFolder } from './data-lock.js';
import {
  ensureTables,
  type LocalDynamoDb,
  localAwsClientConfig,
  localTableNames,
  OutdatedTableError,
  startLocalDynamoDb,
} from './dynamodb.js';
import type { LocalOptions } from './options.js';
import { type RuntimeStops, StartupError } from './runtime-lifecycle.js';
import { type LocalFunction, type LocalStepFunctions, startLocalStepFunctions } from './step-functions.js';

/** The local names of the approval run and its function (as ARNs, like AWS would give). */
export const localApprovalRuns = {
  stateMachineName: 'gateway-approvals',
  functionArn: 'arn:aws:lambda:local:000000000000:function:gateway-held-call-steps',
} as const;

export interface LocalStore {
  /** The run's credential: the store and the Step Functions endpoint refuse requests not signed with it. */
  readonly awsCredentials: LocalAwsCredentials;
  readonly dynamodb: LocalDynamoDb;
  readonly store: DynamoDbExecutionStore;
}

/** Locks the data folder (this process alone may be sending), then starts the store with its tables. */
export const startLocalStore = async (options: LocalOptions, log: Logger, stops: RuntimeStops): Promise<LocalStore> => {
  if (!options.memory) {
    const lock = await lockDataFolder(options.dataDir);
    stops.onClose(() => lock.release());
  }
  // One credential per run: only this process's clients (and whoever may read the data folder) can sign.
  const awsCredentials = newLocalAwsCredentials();
  const dynamodb = await startLocalDynamoDb({
    dataPath: options.memory ? null : join(options.dataDir, 'dynamodb'),
    // Calls are refused with a temporary error meanwhile; the store tries the folder again at each one.
    onFault: (fault) =>
      fault.kind === 'failing'
        ? log.error('the local store cannot read or write its data folder: calls are refused until it can', {
            data_folder: options.dataDir,
            error: fault.error,
          })
        : log.info('the local store works again', { failed_operations: fault.faults }),
    port: options.dynamodbPort,
    credentials: awsCredentials,
    crashBetweenIndexAndRecord: options.crashAt === 'between-index-and-record',
  });
  stops.onClose(() => dynamodb.close());
  try {
    await ensureTables(dynamodb.client, [
      { definition: executionsTable, tableName: localTableNames.executions },
      { definition: configTable, tableName: localTableNames.config },
    ]);
  } catch (error) {
    if (error instanceof OutdatedTableError)
      throw new StartupError(`${error.message} (data folder: ${options.dataDir})`);
    throw error;
  }
  return {
    awsCredentials,
    dynamodb,
    store: new DynamoDbExecutionStore(dynamodb.documents, localTableNames.executions, log),
  };
};

export interface LocalApprovalRuns {
  readonly stepFunctions: LocalStepFunctions;
  /** The functions the approval run's tasks invoke, by ARN (the held-call steps, once composed). */
  readonly functions: Map<string, LocalFunction>;
  readonly sfnClient: SFNClient;
  /** The owner-only AWS config file naming the credential and both endpoints, if one was written. */
  readonly awsConfigFile: string | null;
}

/**
 * The approval run: the repo's ASL on the local Step Functions endpoint, its tasks run by the same
 * held-call steps function Lambda runs.
 */
export const startLocalApprovalRuns = async (
  options: LocalOptions,
  store: LocalStore,
  log: Logger,
  stops: RuntimeStops,
): Promise<LocalApprovalRuns> => {
  const functions = new Map<string, LocalFunction>();
  const stepFunctions = await startLocalStepFunctions({
    host: '127.0.0.1',
    port: options.stepFunctionsPort,
    stateMachineName: localApprovalRuns.stateMachineName,
    definition: approvalDefinition({ Partition: 'aws', HeldCallStepsFunction: localApprovalRuns.functionArn }),
    functions,
    onError: (message, error) => log.error(message, { error }),
    credentials: store.awsCredentials,
  });
  stops.onClose(() => stepFunctions.close());
  const awsConfigFile = options.awsConfigFile ?? (options.memory ? null : join(options.dataDir, 'aws-config'));
  if (awsConfigFile !== null) {
    await writeLocalAwsConfig(awsConfigFile, {
      credentials: store.awsCredentials,
      dynamodbEndpoint: store.dynamodb.endpoint,
      stepFunctionsEndpoint: stepFunctions.endpoint,
    });
    // The credential dies with the run.
    stops.onClose(() => rm(awsConfigFile, { force: true }));
  }
  const sfnClient = new SFNClient(localAwsClientConfig(stepFunctions.endpoint, store.awsCredentials));
  stops.onClose(async () => sfnClient.destroy());
  return { stepFunctions, functions, sfnClient, awsConfigFile };
};
