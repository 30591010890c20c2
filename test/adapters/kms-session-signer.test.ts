// The console's session signer against the local KMS stand-in, with its client given as the
// function gives it: made on the first signature, KMS's SDK loaded then.
import { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { type LocalKms, startLocalKms } from '../../infra/local/kms.js';
import { KmsSessionSigner } from '../../shared/adapters/kms-session-signer.js';
import { verifies } from '../support/requirements.js';

describe('KmsSessionSigner', () => {
  let kms: LocalKms;
  let client: KMSClient | undefined;
  const calls: { action: string; resource: string }[] = [];

  beforeAll(async () => {
    kms = await startLocalKms({ onCall: (call) => calls.push(call) });
  });
  afterAll(async () => {
    client?.destroy();
    await kms?.close();
  });

  it(
    verifies('console.sign-in', 'a session signed by the KMS HMAC key verifies; another text or MAC does not'),
    async () => {
      const keyId = kms.createHmacKey();
      const signer = new KmsSessionSigner(async () => {
        client ??= new KMSClient(localAwsClientConfig(kms.endpoint, kms.credentials));
        return client;
      }, keyId);
      const mac = await signer.sign('session-1');
      expect(await signer.verify('session-1', mac)).toBe(true);
      expect(await signer.verify('session-2', mac)).toBe(false);
      expect(await signer.verify('session-1', Buffer.from('not the mac').toString('base64url'))).toBe(false);
      expect(calls.map((call) => call.action)).toEqual([
        'kms:GenerateMac',
        'kms:VerifyMac',
        'kms:VerifyMac',
        'kms:VerifyMac',
      ]);
    },
  );
});
