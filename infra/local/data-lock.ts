// One local runtime per data folder: the embedded store cannot share its files, so a second
// runtime on the same folder is refused with a clear message instead of crashing it.
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
};

export interface DataLock {
  release(): Promise<void>;
}

export const lockDataFolder = async (folder: string): Promise<DataLock> => {
  await mkdir(folder, { recursive: true });
  const path = join(folder, 'runtime.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx');
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
