// Receipts signed with a P-256 private key held in this process (the local runtime's key, kept in
// its owner-only data folder). ES256 signatures are the raw 64-byte r||s form JWS asks for.
import { createPublicKey, type KeyObject, sign } from 'node:crypto';
import { type JwkSet, type PublicJwk, publicJwkOf, type ReceiptSigner, signingInput } from '../receipts/signer.js';

export class KeyReceiptSigner implements ReceiptSigner {
  private readonly publicJwk: PublicJwk;

  constructor(private readonly privateKey: KeyObject) {
    const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
    if (jwk.crv !== 'P-256' || jwk.x === undefined || jwk.y === undefined) {
      throw new Error('The receipt key must be a P-256 (prime256v1) EC private key.');
    }
    this.publicJwk = publicJwkOf({ x: jwk.x, y: jwk.y });
  }

  async sign(payload: Readonly<Record<string, unknown>>): Promise<string> {
    const input = signingInput(this.publicJwk.kid, payload);
    const signature = sign('sha256', Buffer.from(input), { key: this.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }

  async publicKeys(): Promise<JwkSet> {
    return { keys: [this.publicJwk] };
  }
}
