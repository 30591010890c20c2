// The KMS receipt signer against the local KMS stand-in: its JWS is checked by an independent JWT
// library against the key set it publishes, as a system receiving a receipt checks it.
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { KMSClient } from '@aws-sdk/client-kms';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { type LocalKms, startLocalKms } from '../../infra/local/kms.js';
import {
  derToJoseSignature,
  KmsReceiptSigner,
  maxReceiptSigningBytes,
} from '../../shared/adapters/kms-receipt-signer.js';
import { type JwkSet, jwkThumbprint } from '../../shared/receipts/signer.js';
import { verifies } from '../support/requirements.js';

const issuer = 'https://gateway.example';

const verifierFor = (jwks: JwkSet) => {
  const verifier = JwtVerifier.create({ issuer, audience: null, jwksUri: `${issuer}/.well-known/jwks.json` });
  verifier.cacheJwks({ keys: [...jwks.keys] });
  return verifier;
};

describe('KmsReceiptSigner', () => {
  let kms: LocalKms;
  let client: KMSClient;
  const calls: { action: string; resource: string }[] = [];
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: issuer, sub: 'agent-1', jti: 'e-1', iat: now, exp: now + 300 };

  beforeAll(async () => {
    kms = await startLocalKms({ onCall: (call) => calls.push(call) });
    client = new KMSClient(localAwsClientConfig(kms.endpoint, kms.credentials));
  });
  afterAll(async () => {
    client?.destroy();
    await kms?.close();
  });

  it(
    verifies('receipt-key.kms-signer', 'signs with kms:Sign; a JWT library verifies it against the published key'),
    async () => {
      const keyArn = kms.createSigningKey();
      const signer = new KmsReceiptSigner(client, keyArn);
      const jwks = await signer.publicKeys();
      const receipts = await Promise.all([signer.sign(payload), signer.sign({ ...payload, jti: 'e-2' })]);
      for (const receipt of receipts) {
        await expect(verifierFor(jwks).verify(receipt)).resolves.toMatchObject({ sub: 'agent-1' });
      }
      expect(jwks.keys).toHaveLength(1);
      expect(jwks.keys[0]?.kid).toBe(jwkThumbprint(jwks.keys[0] ?? { x: '', y: '' }));
      const forKey = calls.filter((call) => call.resource === keyArn).map((call) => call.action);
      // The public key is read once for the container; every receipt is a kms:Sign.
      expect(forKey.filter((action) => action === 'kms:GetPublicKey')).toHaveLength(1);
      expect(forKey.filter((action) => action === 'kms:Sign')).toHaveLength(2);
    },
  );

  it(verifies('receipt-key.kms-signer', 'a changed payload, or another key, does not verify'), async () => {
    const signer = new KmsReceiptSigner(client, kms.createSigningKey());
    const receipt = await signer.sign(payload);
    const [header, , signature] = receipt.split('.');
    const forged = Buffer.from(JSON.stringify({ ...payload, sub: 'agent-2' })).toString('base64url');
    await expect(verifierFor(await signer.publicKeys()).verify(`${header}.${forged}.${signature}`)).rejects.toThrow();
    const other = new KmsReceiptSigner(client, kms.createSigningKey());
    await expect(verifierFor(await other.publicKeys()).verify(receipt)).rejects.toThrow();
  });

  it(verifies('receipt-key.kms-signer', 'a key it may not sign with is an error, not a receipt'), async () => {
    const signer = new KmsReceiptSigner(client, kms.createSigningKey({ denied: ['kms:Sign'] }));
    await expect(signer.sign(payload)).rejects.toThrow(/kms:Sign/);
    const symmetric = new KmsReceiptSigner(client, kms.createSymmetricKey());
    await expect(symmetric.publicKeys()).rejects.toThrow();
    // KMS signs a RAW message of at most 4096 bytes: a longer receipt is refused here, not cut.
    const allowed = new KmsReceiptSigner(client, kms.createSigningKey());
    const long = { ...payload, tool: 'x'.repeat(maxReceiptSigningBytes) };
    await expect(allowed.sign(long)).rejects.toThrow(`KMS signs at most ${maxReceiptSigningBytes}`);
  });

  it(verifies('receipt-key.kms-signer', "DER signatures of every length become JWS's 64-byte r||s"), () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    // Enough signatures that some r or s is short (a leading zero byte) or carries DER's sign byte.
    const lengths = new Set<number>();
    for (let index = 0; index < 300; index += 1) {
      const message = Buffer.from(`message ${index}`);
      const der = sign('sha256', message, privateKey);
      lengths.add(der.length);
      const jose = derToJoseSignature(der);
      expect(jose).toHaveLength(64);
      expect(verify('sha256', message, { key: publicKey, dsaEncoding: 'ieee-p1363' }, jose)).toBe(true);
    }
    expect(lengths.size).toBeGreaterThan(1);
    expect(() => derToJoseSignature(Buffer.from([0x30, 0x03, 0x02, 0x01]))).toThrow(/DER/);
  });
});
