// Checking a receipt as a system would: its ES256 signature against the keys the signer publishes
// (by an independent JWT library), its issuer, and then its claims.
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import type { ReceiptSigner } from '../../shared/receipts/signer.js';

/**
 * The claims of a receipt once its signature and issuer check out. Expiry is the caller's to
 * check (against iat): a test's clock is not the library's.
 */
export const verifiedReceipt = async (
  receipt: unknown,
  signer: ReceiptSigner,
  issuer: string,
): Promise<Record<string, unknown>> => {
  if (typeof receipt !== 'string') throw new Error(`expected a receipt, found ${String(receipt)}`);
  const verifier = JwtVerifier.create({ issuer, audience: null, jwksUri: `${issuer}/.well-known/jwks.json` });
  verifier.cacheJwks({ keys: [...(await signer.publicKeys()).keys] });
  return { ...(await verifier.verify(receipt, { graceSeconds: 10 ** 9 })) };
};
