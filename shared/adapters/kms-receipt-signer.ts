// Receipts signed by the stack's KMS receipt key (ECC_NIST_P256, SIGN_VERIFY): kms:Sign signs, so
// the private part never leaves KMS. The public key is read once per container (kms:GetPublicKey)
// and published as a JWK whose kid is its thumbprint, so a new key is a new kid.
import { createPublicKey } from 'node:crypto';
import type { KMSClient } from '@aws-sdk/client-kms';
import { type JwkSet, type PublicJwk, publicJwkOf, type ReceiptSigner, signingInput } from '../receipts/signer.js';
import { kms } from './kms-client.js';
import { type ClientSource, clientOf, onFirstUse } from './on-first-use.js';

/** The most KMS signs as a RAW message; a longer signing input is refused rather than cut. */
export const maxReceiptSigningBytes = 4096;

/** The bytes of an unsigned big-endian integer, left-padded (or stripped of DER's sign byte) to `size`. */
const fixedWidth = (integer: Buffer, size: number): Buffer => {
  const significant = integer.subarray(
    Math.max(
      0,
      integer.findIndex((byte) => byte !== 0),
    ),
  );
  if (significant.length > size) throw new Error('A signature integer is longer than the curve allows.');
  return Buffer.concat([Buffer.alloc(size - significant.length), significant]);
};

/**
 * KMS answers an ECDSA signature as DER (SEQUENCE of two INTEGERs r and s); JWS's ES256 wants the
 * two integers as 32 bytes each, side by side (RFC 7518 §3.4).
 */
export const derToJoseSignature = (der: Uint8Array): Buffer => {
  const bytes = Buffer.from(der);
  // A P-256 signature is at most 72 bytes, so the sequence's length fits DER's one-byte form.
  if (bytes[0] !== 0x30 || bytes[1] !== bytes.length - 2) throw new Error('The signature is not a DER sequence.');
  const integerAt = (offset: number): { value: Buffer; end: number } => {
    const length = bytes[offset + 1];
    if (bytes[offset] !== 0x02 || length === undefined || offset + 2 + length > bytes.length) {
      throw new Error('The signature is not two DER integers.');
    }
    return { value: bytes.subarray(offset + 2, offset + 2 + length), end: offset + 2 + length };
  };
  const r = integerAt(2);
  const s = integerAt(r.end);
  if (s.end !== bytes.length) throw new Error('The signature has bytes after its two integers.');
  return Buffer.concat([fixedWidth(r.value, 32), fixedWidth(s.value, 32)]);
};

/** A P-256 public key's JWK from the SPKI DER GetPublicKey answers. */
const publicJwkFromSpki = (spki: Uint8Array): PublicJwk => {
  const jwk = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }).export({ format: 'jwk' });
  if (jwk.crv !== 'P-256' || jwk.x === undefined || jwk.y === undefined) {
    throw new Error('The receipt key must be a KMS ECC_NIST_P256 signing key.');
  }
  return publicJwkOf({ x: jwk.x, y: jwk.y });
};

export class KmsReceiptSigner implements ReceiptSigner {
  /** The key's public JWK, read on first use and kept for the container's life (a key's public part never changes). */
  private readonly publicJwk = onFirstUse(() => this.readPublicJwk());

  constructor(
    private readonly client: ClientSource<KMSClient>,
    private readonly keyId: string,
  ) {}

  private async readPublicJwk(): Promise<PublicJwk> {
    const [client, { GetPublicKeyCommand }] = await Promise.all([clientOf(this.client), kms()]);
    const { PublicKey } = await client.send(new GetPublicKeyCommand({ KeyId: this.keyId }));
    if (PublicKey === undefined) throw new Error('KMS returned no public key.');
    return publicJwkFromSpki(PublicKey);
  }

  async sign(payload: Readonly<Record<string, unknown>>): Promise<string> {
    const input = signingInput((await this.publicJwk()).kid, payload);
    const message = Buffer.from(input, 'utf8');
    if (message.length > maxReceiptSigningBytes) {
      throw new Error(
        `A receipt's signing input is ${message.length} bytes; KMS signs at most ${maxReceiptSigningBytes}.`,
      );
    }
    const [client, { SignCommand }] = await Promise.all([clientOf(this.client), kms()]);
    const { Signature } = await client.send(
      new SignCommand({ KeyId: this.keyId, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }),
    );
    if (Signature === undefined) throw new Error('KMS returned no signature.');
    return `${input}.${derToJoseSignature(Signature).toString('base64url')}`;
  }

  async publicKeys(): Promise<JwkSet> {
    return { keys: [await this.publicJwk()] };
  }
}
