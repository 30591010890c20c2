// Where `npm run executions` reads: a deployed table (the default AWS credential chain), any
// DynamoDB endpoint, or the local runtime's data folder. The embedded store cannot be opened twice
// (two dynalite instances on one folder crash), so while a gateway runs on the folder the listing
// goes through that gateway's own store, at the address and with the credential it left in
// <data-dir>/aws-config; otherwise the folder is locked (a gateway started meanwhile is refused)
// and its store opened for the read. The same targets take an operator's settlement of an unknown
// outcome, written through the store adapter, and say who the operator is.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { STSClient } from '@aws-sdk/client-sts';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { indexEarlierCalls } from '../../shared/adapters/dynamodb/earlier-calls.js';
import { DynamoDbExecutionListing } from '../../shared/adapters/dynamodb/execution-listing.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { awsCallerArn } from '../../shared/adapters/sts-caller-identity.js';
import { errorText } from '../../shared/errors.js';
import type { ExecutionListing } from '../../shared/executions/listing.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { Log } from '../../shared/log.js';
import { localAwsProfile, readLocalAwsConfig } from './aws-config-file.js';
import { lockDataFolder, lockHolder } from './data-lock.js';
import { documentClient, localAwsClientConfig, localTableNames, startLocalDynamoDb } from './dynamodb.js';

export type ListingTarget =
  | { readonly kind: 'local'; readonly dataDir: string }
  /** A table by name; `endpoint` for a DynamoDB other than AWS's (credentials from the default chain). */
  | { readonly kind: 'table'; readonly tableName: string; readonly region?: string; readonly endpoint?: string };

export interface OpenedListing {
  readonly listing: ExecutionListing;
  /** The store itself, for an operator's settlement of an unknown outcome. */
  readonly store: ExecutionStore;
  /**
   * Who the operator is, as a settlement records it: the AWS caller's ARN against a deployed table,
   * the OS user name against the local store or another endpoint.
   */
  operator(): Promise<string>;
  /** Gives the calls recorded before the by-time index its attributes; how many it indexed. */
  indexEarlierCalls(): Promise<number>;
  /** Where it reads, for the heading. */
  readonly source: string;
  close(): Promise<void>;
}

/** A target that cannot be read, with what to do about it. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
}

/** The operator as the local machine knows them. */
const osUser = async (): Promise<string> => userInfo().username;

/** The operator as AWS knows them: the caller of the credentials in use. */
const awsCaller = async (region: string | undefined): Promise<string> => {
  const sts = new STSClient(region === undefined ? {} : { region });
  try {
    return await awsCallerArn(sts);
  } finally {
    sts.destroy();
  }
};

/** What the store writes to the log: only a held call's place it could not give back, never a settlement's. */
const storeLog: Log = {
  info: () => undefined,
  warn: (message, ...attributes) =>
    process.stderr.write(`${message} ${JSON.stringify(Object.assign({}, ...attributes))}\n`),
};

/** The listing, the store and the backfill of one table, through one document client. */
const tableParts = (documents: DynamoDBDocumentClient, tableName: string) => ({
  listing: new DynamoDbExecutionListing(documents, tableName),
  store: new DynamoDbExecutionStore(documents, tableName, storeLog),
  indexEarlierCalls: () => indexEarlierCalls(documents, tableName),
});

const tableListing = (
  client: DynamoDBClient,
  tableName: string,
  source: string,
  operator: () => Promise<string> = osUser,
): OpenedListing => ({
  ...tableParts(documentClient(client), tableName),
  operator,
  source,
  close: async () => client.destroy(),
});

/** Through the running gateway's store: the address and credential it wrote for tools. */
const runningGateway = async (dataDir: string, holder: number): Promise<OpenedListing> => {
  const file = join(dataDir, 'aws-config');
  const config = await readLocalAwsConfig(file).catch(() => null);
  if (config === null) {
    throw new TargetError(
      `A gateway (process ${holder}) is running on ${dataDir}, and the address of its store is not in ${file} ` +
        '(it was started with --aws-config-file elsewhere). Stop it, or read through its store: ' +
        `AWS_CONFIG_FILE=<its aws-config file> AWS_PROFILE=${localAwsProfile} npm run executions -- ` +
        `--endpoint <its store's URL> --table ${localTableNames.executions}`,
    );
  }
  const client = new DynamoDBClient(localAwsClientConfig(config.dynamodbEndpoint, config.credentials));
  return tableListing(client, localTableNames.executions, `the running gateway's store (${config.dynamodbEndpoint})`);
};

/** The folder's store opened for the read, under the folder's lock. */
const stoppedGateway = async (dataDir: string): Promise<OpenedListing> => {
  if (!existsSync(join(dataDir, 'dynamodb'))) {
    throw new TargetError(
      `No local store in ${dataDir}: pass --data-dir <the gateway's data folder>, or --table for a deployed one.`,
    );
  }
  const lock = await lockDataFolder(dataDir).catch((error: unknown) => {
    throw new TargetError(errorText(error));
  });
  try {
    const dynamodb = await startLocalDynamoDb({ dataPath: join(dataDir, 'dynamodb') });
    const close = async () => {
      await dynamodb.close();
      await lock.release();
    };
    const table = await dynamodb.client
      .send(new DescribeTableCommand({ TableName: localTableNames.executions }))
      // Only a missing table means the gateway never ran there; any other fault is told as itself.
      .catch((error: unknown) => {
        if (error instanceof Error && error.name === 'ResourceNotFoundException') return null;
        throw error;
      });
    if (table === null) {
      await close();
      throw new TargetError(`The store in ${dataDir} has no executions table yet: the gateway never ran there.`);
    }
    return {
      ...tableParts(dynamodb.documents, localTableNames.executions),
      operator: osUser,
      source: `the local store in ${dataDir}`,
      close,
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
};

export const openListing = async (target: ListingTarget): Promise<OpenedListing> => {
  if (target.kind === 'table') {
    const client = new DynamoDBClient({
      ...(target.region === undefined ? {} : { region: target.region }),
      ...(target.endpoint === undefined ? {} : { endpoint: target.endpoint }),
    });
    // A deployed table: the operator is whoever the AWS credentials say (another endpoint has no STS).
    const operator = target.endpoint === undefined ? () => awsCaller(target.region) : osUser;
    return tableListing(client, target.tableName, `the table ${target.tableName}`, operator);
  }
  const holder = await lockHolder(target.dataDir);
  return holder === null ? stoppedGateway(target.dataDir) : runningGateway(target.dataDir, holder);
};
