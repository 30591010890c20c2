// Where the local runtime (and config:check, when not asked about AWS) reads `${secret:NAME}`:
// the variable GATEWAY_SECRET_<NAME> (upper case, every other character an underscore), else the
// file `secrets/NAME` in the data folder, which the runtime keeps readable by its owner only. Read
// on every load, so a changed file or a new value is picked up by the next configuration check.
import { readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { SecretLookup } from '../../shared/config/stored-secrets.js';

/** The variable that holds a secret locally: `erp/api-token` → GATEWAY_SECRET_ERP_API_TOKEN. */
export const secretVariable = (name: string): string =>
  `GATEWAY_SECRET_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** The file of a secret under the data folder, or null when the name would lead out of its folder. */
const secretFile = (folder: string, name: string): string | null => {
  const file = resolve(folder, name);
  const inside = relative(folder, file);
  return inside.length === 0 || inside === '..' || inside.startsWith(`..${sep}`) || inside.startsWith(sep)
    ? null
    : file;
};

export const localSecrets = (
  dataDir: string | null,
  environment: Readonly<Record<string, string | undefined>>,
): SecretLookup => {
  const folder = dataDir === null ? null : resolve(dataDir, 'secrets');
  return {
    read: (name) => {
      const variable = environment[secretVariable(name)];
      if (variable !== undefined && variable.length > 0) return variable;
      const file = folder === null ? null : secretFile(folder, name);
      if (file === null) return undefined;
      try {
        // One line ending written by an editor or `echo` is not part of the secret.
        return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
      } catch {
        return undefined;
      }
    },
    where: (name) =>
      folder === null
        ? `set ${secretVariable(name)}`
        : `set ${secretVariable(name)}, or write it to ${join(folder, name)}`,
  };
};
