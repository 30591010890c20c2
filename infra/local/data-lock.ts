// One local runtime per data folder: the embedded store cannot share its files, so a second
// runtime on the same folder is refused with a clear message instead of crashing it. The folder
// and what the runtime keeps in it are readable by their owner only.
import { chmod, lstat, mkdir, open, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** What the runtime keeps in its data folder; only these are tightened in a folder made before. */
const runtimeEntries = ['runtime.lock', 'data.key', 'aws-config', 'dynamodb', 'metrics.jsonl', 'metrics.1.jsonl'];

const tighten = async (path: string): Promise<void> => {
  const stats = await lstat(path).catch(() => null);
  if (stats === null || stats.isSymbolicLink()) return;
  if (stats.isDirectory()) {
    if ((stats.mode & 0o077) !== 0) await chmod(path, 0o700);
    for (const entry of await readdir(path)) await tighten(join(path, entry));
  } else if ((stats.mode & 0o077) !== 0) await chmod(path, 0o600);
};

/**
 * Creates the data folder for its owner only (0700), or checks an existing one: another user's
 * folder is refused; wider permissions are tightened, on the folder and on what the runtime keeps
 * in it (files 0600), since an older version made them with the default umask.
 */
const ownerOnlyDataFolder = async (folder: string): Promise<void> => {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const stats = await lstat(folder);
  if (!stats.isDirectory()) throw new Error(`The data folder ${folder} is not a folder.`);
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new Error(
      `The data folder ${folder} belongs to another user (uid ${stats.uid}); ` +
        'the store must be readable by the gateway’s user only. Use --data-dir <a folder of yours>.',
    );
  }
  if ((stats.mode & 0o077) !== 0) await chmod(folder, 0o700);
  for (const entry of runtimeEntries) await tighten(join(folder, entry));
  // The store's own folder, made before the store opens it, so it never exists with wider permissions.
  await mkdir(join(folder, 'dynamodb'), { recursive: true, mode: 0o700 });
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
};

/** The process of the gateway running on this data folder, or null when none runs there now. */
export const lockHolder = async (folder: string): Promise<number | null> => {
  const holder = Number((await readFile(join(folder, 'runtime.lock'), 'utf8').catch(() => '')).trim());
  return Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder) ? holder : null;
};

export interface DataLock {
  release(): Promise<void>;
}

export const lockDataFolder = async (folder: string): Promise<DataLock> => {
  await ownerOnlyDataFolder(folder);
  const path = join(folder, 'runtime.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return { release: () => rm(path, { force: true }) };
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
      const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new Error(
          `The data folder ${folder} is in use by another gateway (process ${holder}). ` +
            'Stop it first, or start this one with --data-dir <another folder> or --memory.',
        );
      }
      // The previous runtime did not stop cleanly; its lock is stale.
      await rm(path, { force: true });
    }
  }
  throw new Error(`Could not lock the data folder ${folder}.`);
};
