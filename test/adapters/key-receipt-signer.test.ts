// The local receipt signer's JWS is checked by an independent JWT library against the JWK Set it
// publishes: what a system receiving a receipt does.
import { generateKeyPairSync } from 'node:crypto';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import { describe, expect, it } from 'vitest';
import { KeyReceiptSigner } from '../../shared/adapters/key-receipt-signer.js';
import { type JwkSet, jwkThumbprint } from '../../shared/receipts/signer.js';

const issuer = 'https://gateway.example';
const jwksUri = `${issuer}/.well-known/jwks.json`;

const verifierFor = (jwks: JwkSet) => {
  const verifier = JwtVerifier.create({ issuer, audience: null, jwksUri });
  verifier.cacheJwks({ keys: [...jwks.keys] });
  return verifier;
};

describe('KeyReceiptSigner', () => {
  const signer = new KeyReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: issuer, sub: 'agent-1', jti: 'e-1', iat: now, exp: now + 300 };

  it('signs ES256 that a JWT library verifies against the published keys', async () => {
    const jwks = await signer.publicKeys();
    const receipt = await signer.sign(payload);
    await expect(verifierFor(jwks).verify(receipt)).resolves.toMatchObject({ sub: 'agent-1', jti: 'e-1' });
    expect(jwks.keys[0]?.kid).toBe(jwkThumbprint(jwks.keys[0] ?? { x: '', y: '' }));
  });

  it('a changed payload or another key does not verify', async () => {
    const receipt = await signer.sign(payload);
    const [header, , signature] = receipt.split('.');
    const forged = Buffer.from(JSON.stringify({ ...payload, sub: 'agent-2' })).toString('base64url');
    await expect(verifierFor(await signer.publicKeys()).verify(`${header}.${forged}.${signature}`)).rejects.toThrow();
    const other = new KeyReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    await expect(verifierFor(await other.publicKeys()).verify(receipt)).rejects.toThrow();
  });

  it('refuses a key that is not P-256', () => {
    expect(() => new KeyReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey)).toThrow(
      /P-256/,
    );
  });
});
