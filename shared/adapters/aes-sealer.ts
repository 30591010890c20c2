// AES-256-GCM with one data key held in memory (the local runtime's key). Sealed text is JSON:
// version, a fresh 96-bit IV, the tag and the ciphertext, all base64; the execution id is the
// additional authenticated data.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { Sealer } from '../sealing.js';

export const Sealed = z.object({
  v: z.literal(1),
  iv: z.base64(),
  tag: z.base64(),
  ct: z.base64(),
  /** The data key, encrypted by KMS (envelope encryption); absent for a local key. */
  edk: z.base64().optional(),
});
export type Sealed = z.infer<typeof Sealed>;

export const sealWithKey = (key: Buffer, plaintext: string, context: string): Omit<Sealed, 'edk'> => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { v: 1, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ct: ct.toString('base64') };
};

export const openWithKey = (key: Buffer, sealed: Sealed, context: string): string => {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8');
};

export class AesSealer implements Sealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('The data key must be 32 bytes (256 bits).');
  }

  async seal(plaintext: string, context: string): Promise<string> {
    return JSON.stringify(sealWithKey(this.key, plaintext, context));
  }

  async open(sealed: string, context: string): Promise<string> {
    return openWithKey(this.key, Sealed.parse(JSON.parse(sealed)), context);
  }
}
