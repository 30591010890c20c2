// Approval receipts are compact JWS (ES256) signed by the gateway's receipt key: the private part
// is never in the gateway's memory in AWS (KMS signs) and is owner-only in the local data folder.
// This port signs a payload and names the public keys a receipt is checked against.
import { createHash } from 'node:crypto';

/** One public key as a JSON Web Key (RFC 7517), with its key id (a type, so it reads as any JSON object). */
export type PublicJwk = {
  readonly kty: 'EC';
  readonly crv: 'P-256';
  readonly x: string;
  readonly y: string;
  readonly kid: string;
  readonly alg: 'ES256';
  readonly use: 'sig';
};

/** What `/.well-known/jwks.json` serves. */
export type JwkSet = {
  readonly keys: readonly PublicJwk[];
};

/** Where the gateway serves its receipt keys' JWK Set, from its public base URL. */
export const jwksPath = '/.well-known/jwks.json';

export interface ReceiptSigner {
  /** Signs `payload` (a JSON object) as a compact JWS, ES256, its header naming the key (`kid`). */
  sign(payload: Readonly<Record<string, unknown>>): Promise<string>;
  /** The public keys receipts are checked against. */
  publicKeys(): Promise<JwkSet>;
}

/** The key id of a P-256 public key: its RFC 7638 thumbprint (SHA-256 of the required members, in order). */
export const jwkThumbprint = (key: { readonly x: string; readonly y: string }): string =>
  createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x: key.x, y: key.y }))
    .digest('base64url');

/** The public JWK of a P-256 key from its x and y coordinates (base64url). */
export const publicJwkOf = (key: { readonly x: string; readonly y: string }): PublicJwk => ({
  kty: 'EC',
  crv: 'P-256',
  x: key.x,
  y: key.y,
  kid: jwkThumbprint(key),
  alg: 'ES256',
  use: 'sig',
});

/** The signing input of a compact JWS: base64url(header).base64url(payload). */
export const signingInput = (kid: string, payload: Readonly<Record<string, unknown>>): string => {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  return `${encode({ alg: 'ES256', typ: 'JWT', kid })}.${encode(payload)}`;
};
