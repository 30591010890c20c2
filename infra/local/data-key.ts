// The local runtime's data key (AES-256) for secret argument values at rest: from the
// configuration when it names one, else kept in the data folder (created on first start,
// readable by its owner only), else, in memory mode, a fresh one per run.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

class DataKeyError extends Error {}

export const localDataKey = async (configured: string | null, dataDir: string | null): Promise<Buffer> => {
  if (configured !== null) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32)
      throw new DataKeyError('settings.data_key must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`).');
    return key;
  }
  if (dataDir === null) return randomBytes(32);
  const file = join(dataDir, 'data.key');
  const existing = await readFile(file, 'utf8').catch(() => null);
  if (existing !== null) {
    const key = Buffer.from(existing.trim(), 'base64');
    if (key.length !== 32) throw new DataKeyError(`${file} does not hold a 32-byte base64 key.`);
    return key;
  }
  const key = randomBytes(32);
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
};
