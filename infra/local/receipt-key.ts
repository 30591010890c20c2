// The local runtime's receipt key: a P-256 private key (PKCS#8 PEM) kept in the data folder,
// created on first start and readable by its owner only, so receipts verify across restarts; in
// memory mode a fresh one per run.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorText } from '../../shared/errors.js';

/** The key's file in the data folder. */
export const receiptKeyFile = 'receipt-key.pem';

class ReceiptKeyError extends Error {}

const isMissing = (error: unknown): boolean => error instanceof Error && 'code' in error && error.code === 'ENOENT';

const newReceiptKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

/** The key a file holds: a P-256 private key, else a refusal naming the file and what it holds. */
const keyOfFile = (file: string, pem: string): KeyObject => {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (error) {
    throw new ReceiptKeyError(`${file} does not hold a PEM private key (${errorText(error)}).`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new ReceiptKeyError(
      `${file} holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key${key.asymmetricKeyDetails?.namedCurve === undefined ? '' : ` on ${key.asymmetricKeyDetails.namedCurve}`}; the receipt key must be a P-256 (prime256v1) EC private key. Move the file away to have a new key made.`,
    );
  }
  return key;
};

/** Reads the folder's key, or creates it (owner-only, never over an existing file); null: memory mode. */
export const localReceiptKey = async (dataDir: string | null): Promise<KeyObject> => {
  if (dataDir === null) return newReceiptKey();
  const file = join(dataDir, receiptKeyFile);
  const existing = await readFile(file, 'utf8').catch((error: unknown) => {
    if (isMissing(error)) return null;
    throw new ReceiptKeyError(`The receipt key ${file} cannot be read: ${errorText(error)}`);
  });
  if (existing !== null) return keyOfFile(file, existing);
  const key = newReceiptKey();
  const pem = key.export({ format: 'pem', type: 'pkcs8' });
  try {
    await writeFile(file, pem, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw new ReceiptKeyError(`The receipt key ${file} cannot be written: ${errorText(error)}`);
  }
  return key;
};
