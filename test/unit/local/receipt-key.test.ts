// The local receipt key: made once in the data folder (owner-only), the same key at every start,
// one per run in memory mode, and a file that is not a P-256 private key refused with its name.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localReceiptKey, receiptKeyFile } from '../../../infra/local/receipt-key.js';
import { verifies } from '../../support/requirements.js';
import { temporaryFolder } from '../../support/runtime-process.js';

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
beforeAll(async () => {
  folder = await temporaryFolder('gateway-receipt-key-');
});
afterAll(async () => {
  await folder.remove();
});

const publicPem = (key: Parameters<typeof createPublicKey>[0]) =>
  createPublicKey(key).export({ format: 'pem', type: 'spki' }).toString();

describe('the local receipt key', () => {
  it(verifies('receipt-key.local-key', 'is made once, owner-only, and is the same key at the next start'), async () => {
    const first = await localReceiptKey(folder.path);
    const file = join(folder.path, receiptKeyFile);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(first.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const again = await localReceiptKey(folder.path);
    expect(publicPem(again)).toBe(publicPem(first));
    // In memory mode nothing is written, and each run has its own key.
    expect(publicPem(await localReceiptKey(null))).not.toBe(publicPem(await localReceiptKey(null)));
  });

  it(
    verifies('receipt-key.local-key', 'refuses a file that is not a P-256 private key, or cannot be read'),
    async () => {
      const dir = join(folder.path, 'other');
      await mkdir(dir);
      const file = join(dir, receiptKeyFile);
      await writeFile(file, 'not a key\n', { mode: 0o600 });
      await expect(localReceiptKey(dir)).rejects.toThrow(`${file} does not hold a PEM private key`);
      const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey;
      await writeFile(file, p384.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
      await expect(localReceiptKey(dir)).rejects.toThrow(/secp384r1; the receipt key must be a P-256/);
      // Something there that cannot be read (here a folder, unreadable even to root) is not replaced by a new key.
      const blocked = join(folder.path, 'blocked');
      await mkdir(join(blocked, receiptKeyFile), { recursive: true });
      await expect(localReceiptKey(blocked)).rejects.toThrow(
        `The receipt key ${join(blocked, receiptKeyFile)} cannot be read: EISDIR`,
      );
    },
  );
});
