// What a deployed configuration may not hold: `${env:NAME}` values. The functions in AWS read
// no such variables (their environment is the stack's), so config:push refuses them, naming each,
// except in the values only the local runtime reads (agents' tokens, passwords, the data key).
import { formatPath, isLocalOnly } from '../config/resolved.js';
import { readYaml } from '../config/yaml-lines.js';

export interface EnvironmentReference {
  readonly path: string;
  readonly line: number | null;
  readonly value: string;
}

const walk = (data: unknown, path: readonly PropertyKey[]): { path: PropertyKey[]; value: string }[] => {
  if (typeof data === 'string')
    return data.includes('${env:') && !isLocalOnly(path) ? [{ path: [...path], value: data }] : [];
  if (Array.isArray(data)) return data.flatMap((item, index) => walk(item, [...path, index]));
  if (data === null || typeof data !== 'object') return [];
  return Object.entries(data).flatMap(([key, item]) => walk(item, [...path, key]));
};

/** Every value of the configuration text that names `${env:…}`, in document order (none when it does not parse). */
export const environmentReferences = (text: string): EnvironmentReference[] => {
  const read = readYaml(text);
  if (!read.ok) return [];
  return walk(read.data, []).map(({ path, value }) => ({ path: formatPath(path), line: read.lineAt(path), value }));
};
