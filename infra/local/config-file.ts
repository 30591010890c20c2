// Reads the configuration file for the local runtime.
import { readFile } from 'node:fs/promises';
import { type ConfigLoad, loadConfigText } from '../../shared/config/load.js';

export const loadConfigFile = async (
  path: string,
  environment: Readonly<Record<string, string | undefined>>,
): Promise<ConfigLoad> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason =
      error instanceof Error && 'code' in error && error.code === 'ENOENT' ? 'the file does not exist' : String(error);
    return { ok: false, problems: [{ file: path, path: '', line: null, message: reason }] };
  }
  return loadConfigText(text, path, environment);
};
