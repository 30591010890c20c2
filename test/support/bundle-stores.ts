// The deployed configuration's stores on loopback, as the functions and config:push meet them in
// AWS: the local DynamoDB, S3 and KMS stand-ins, one credential for all three, and the signed
// bundle store over a fresh table, bucket and signing key per test.
import { join } from 'node:path';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { localAwsProfile, writeLocalAwsConfig } from '../../infra/local/aws-config-file.js';
import {
  ensureTables,
  type LocalDynamoDb,
  localAwsClientConfig,
  startLocalDynamoDb,
} from '../../infra/local/dynamodb.js';
import { type LocalKms, startLocalKms } from '../../infra/local/kms.js';
import { type LocalS3, startLocalS3 } from '../../infra/local/s3.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbBundlePointers } from '../../shared/adapters/dynamodb/config-store.js';
import { configTable } from '../../shared/adapters/dynamodb/tables.js';
import { KmsBundleSignatures } from '../../shared/adapters/kms-bundle-signatures.js';
import { S3BundleObjects } from '../../shared/adapters/s3-bundle-objects.js';
import { SignedBundleStore } from '../../shared/control-plane/signed-bundles.js';
import { temporaryFolder } from './runtime-process.js';
import { runProcess } from './spawn.js';

export interface BundleStands {
  readonly dynamodb: LocalDynamoDb;
  readonly s3: LocalS3;
  readonly kms: LocalKms;
  /** S3 requests answered, in order (action and bucket/key). */
  readonly s3Requests: { action: string; resource: string; status: number }[];
  readonly s3Client: S3Client;
  readonly kmsClient: KMSClient;
  close(): Promise<void>;
}

export const startBundleStands = async (): Promise<BundleStands> => {
  const dynamodb = await startLocalDynamoDb({ dataPath: null });
  const s3Requests: BundleStands['s3Requests'] = [];
  const s3 = await startLocalS3({ credentials: dynamodb.credentials, onRequest: (call) => s3Requests.push(call) });
  const kms = await startLocalKms({ credentials: dynamodb.credentials });
  const s3Client = new S3Client({ ...localAwsClientConfig(s3.endpoint, dynamodb.credentials), forcePathStyle: true });
  const kmsClient = new KMSClient(localAwsClientConfig(kms.endpoint, dynamodb.credentials));
  return {
    dynamodb,
    s3,
    kms,
    s3Requests,
    s3Client,
    kmsClient,
    close: async () => {
      s3Client.destroy();
      kmsClient.destroy();
      await Promise.all([dynamodb.close(), s3.close(), kms.close()]);
    },
  };
};

export interface DeployedStores {
  readonly store: SignedBundleStore;
  readonly tableName: string;
  readonly bucket: string;
  readonly keyArn: string;
}

let count = 0;
/** A fresh table, bucket and signing key, and the store over them. */
export const freshStores = async (stands: BundleStands): Promise<DeployedStores> => {
  count += 1;
  const tableName = `config-${count}`;
  const bucket = `bundles-${count}`;
  await ensureTables(stands.dynamodb.client, [{ definition: configTable, tableName }]);
  stands.s3.createBucket(bucket);
  const keyArn = stands.kms.createSigningKey();
  const store = new SignedBundleStore(
    new DynamoDbBundlePointers(stands.dynamodb.documents, tableName),
    new S3BundleObjects(stands.s3Client, bucket),
    new KmsBundleSignatures(stands.kmsClient, keyArn),
  );
  return { store, tableName, bucket, keyArn };
};

/** Runs `npm run config:push` against the stand-ins, reading their credential as an operator would, from an AWS config file. */
export const configPushRunner = async (stands: BundleStands) => {
  const folder = await temporaryFolder('gateway-push-');
  const awsConfig = join(folder.path, 'aws-config');
  await writeLocalAwsConfig(awsConfig, {
    credentials: stands.dynamodb.credentials,
    dynamodbEndpoint: stands.dynamodb.endpoint,
    stepFunctionsEndpoint: 'http://127.0.0.1:9',
  });
  const push = (target: DeployedStores, args: string[], extra: Record<string, string> = {}) => {
    const {
      AWS_ACCESS_KEY_ID: _id,
      AWS_SECRET_ACCESS_KEY: _secret,
      AWS_SESSION_TOKEN: _token,
      ...environment
    } = process.env;
    const endpoints = [
      ...['--table', target.tableName, '--bucket', target.bucket, '--key', target.keyArn],
      ...['--endpoint', stands.dynamodb.endpoint, '--s3-endpoint', stands.s3.endpoint],
      ...['--kms-endpoint', stands.kms.endpoint],
    ];
    return runProcess(
      process.execPath,
      ['--import', 'tsx', projectPath('scripts/config-push.ts'), ...endpoints, ...args],
      {
        cwd: projectPath(),
        env: {
          ...environment,
          AWS_CONFIG_FILE: awsConfig,
          AWS_SHARED_CREDENTIALS_FILE: join(folder.path, 'no-credentials'),
          AWS_PROFILE: localAwsProfile,
          ...extra,
        },
      },
    );
  };
  return { push, remove: () => folder.remove() };
};
