// The local runtime's own endpoints (the store, Step Functions) and its data folder, as another
// process on the same machine meets them: refused without the run's credential, and unreadable.

import { createPrivateKey, randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptKeyFile } from '../../infra/local/receipt-key.js';
import { KeyReceiptSigner } from '../../shared/adapters/key-receipt-signer.js';
import { jwksPath } from '../../shared/receipts/signer.js';
import { signedAwsCall, unsignedAwsCall } from '../support/aws-requests.js';
import { verifies } from '../support/requirements.js';
import { startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
beforeAll(async () => {
  folder = await temporaryFolder('gateway-endpoints-');
});
afterAll(async () => {
  await folder.remove();
});

/** Every folder and file under `root` with its permission bits. */
const modes = async (root: string): Promise<{ path: string; directory: boolean; mode: number }[]> => {
  const found: { path: string; directory: boolean; mode: number }[] = [];
  const visit = async (path: string) => {
    const stats = await lstat(path);
    found.push({ path, directory: stats.isDirectory(), mode: stats.mode & 0o777 });
    if (stats.isDirectory()) for (const entry of await readdir(path)) await visit(join(path, entry));
  };
  await visit(root);
  return found;
};

const ownerOnly = (entries: { directory: boolean; mode: number; path: string }[]) =>
  entries
    .filter((entry) => entry.mode !== (entry.directory ? 0o700 : 0o600))
    .map((entry) => `${entry.path} ${entry.mode.toString(8)}`);

const scan = {
  service: 'dynamodb' as const,
  target: 'DynamoDB_20120810.Scan',
  body: '{"TableName":"gateway-executions"}',
};

describe('the local runtime’s endpoints and data folder', () => {
  it(verifies(
    ['local.endpoints-authenticated', 'local.data-folder-owner-only', 'receipt-key.local-key', 'receipt-key.jwks'],
    'answers only its own credential, kept owner-only in the data folder with everything else',
  ), async () => {
    const dataDir = join(folder.path, 'fresh');
    const runtime = await startRuntimeProcess(['--data-dir', dataDir]);
    try {
      const entries = await modes(dataDir);
      expect(entries.map((entry) => entry.path)).toEqual(
        expect.arrayContaining([
          join(dataDir, 'aws-config'),
          join(dataDir, 'data.key'),
          join(dataDir, receiptKeyFile),
          join(dataDir, 'dynamodb'),
        ]),
      );
      // The receipt key's public half is served without a token: the key in the folder.
      const jwks = await fetch(`${runtime.baseUrl}${jwksPath}`);
      expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
      const published = await new KeyReceiptSigner(
        createPrivateKey(await readFile(join(dataDir, receiptKeyFile), 'utf8')),
      ).publicKeys();
      expect(await jwks.json()).toEqual(published);
      expect(entries.filter((entry) => !entry.directory).length).toBeGreaterThan(4);
      expect(ownerOnly(entries)).toEqual([]);

      // Another process, without the credential: refused at both endpoints.
      expect((await unsignedAwsCall(runtime.dynamodbEndpoint, scan)).status).toBe(403);
      const forgedDecision = await unsignedAwsCall(runtime.stepFunctionsEndpoint, {
        service: 'states',
        target: 'AWSStepFunctions.SendTaskSuccess',
        body: JSON.stringify({ taskToken: 'a-token', output: '{"outcome":"approved"}' }),
      });
      expect(forgedDecision.status).toBe(403);
      // A tool with the credential from the file (as the AWS CLI would read it) is answered.
      const allowed = await signedAwsCall(runtime.dynamodbEndpoint, runtime.awsCredentials, scan);
      expect(allowed.status).toBe(200);
    } finally {
      expect((await runtime.stop()).code).toBe(0);
    }
    // The credential ends with the run.
    expect((await readdir(dataDir)).includes('aws-config')).toBe(false);
  }, 120_000);

  it(verifies(
    'local.data-folder-owner-only',
    'tightens a data folder and files an older version left readable by others',
  ), async () => {
    const dataDir = join(folder.path, 'older');
    await mkdir(join(dataDir, 'dynamodb'), { recursive: true });
    await chmod(dataDir, 0o755);
    await chmod(join(dataDir, 'dynamodb'), 0o755);
    await writeFile(join(dataDir, 'data.key'), `${randomBytes(32).toString('base64')}\n`);
    await chmod(join(dataDir, 'data.key'), 0o644);
    const runtime = await startRuntimeProcess(['--data-dir', dataDir]);
    try {
      expect(ownerOnly(await modes(dataDir))).toEqual([]);
    } finally {
      await runtime.stop();
    }
  }, 120_000);
});
