// `${secret:NAME}` and `${secret:NAME#field}` references: which stored secrets a configuration
// names, and how a secret's stored text becomes the value the configuration uses. Where the
// secrets are kept (AWS Secrets Manager when deployed; the data folder or the environment locally)
// is an adapter's business: resolution only asks a lookup, synchronously, for values already read.
import { storedSecretReference } from './schema.js';

/** What resolution asks of wherever secrets are kept. */
export interface SecretLookup {
  /** The secret's whole stored text, or undefined when there is no such secret (or it is empty). */
  read(name: string): string | undefined;
  /** Where the secret named would be, for messages (never its value). */
  where(name: string): string;
}

/** Stored secrets, read ahead of resolving a configuration (which is synchronous). */
export interface SecretSource {
  /**
   * The text of each named secret (undefined for one that does not exist), from the cache unless
   * `fresh`. Throws when the store cannot be read (the last good configuration is kept).
   */
  read(names: readonly string[], fresh: boolean): Promise<Map<string, string | undefined>>;
  /** Where a secret is kept, for messages. */
  where(name: string): string;
}

/** The stored secrets a configuration's data names, each once, in document order, but for the paths skipped. */
export const storedSecretNames = (
  data: unknown,
  skip: (path: readonly PropertyKey[]) => boolean = () => false,
): string[] => {
  const names = new Set<string>();
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (typeof value === 'string') {
      const name = storedSecretReference.exec(value)?.[1];
      if (name !== undefined && !skip(path)) names.add(name);
    } else if (Array.isArray(value)) for (const [index, item] of value.entries()) walk(item, [...path, index]);
    else if (value !== null && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) walk(item, [...path, key]);
  };
  walk(data, []);
  return [...names];
};

export type SecretValue = { ok: true; value: string } | { ok: false; reason: string };

/**
 * The value a reference stands for: the whole text, or one field of a JSON object (a string, or a
 * number or boolean as written). The reasons name the secret and the field, never the text.
 */
export const secretValue = (lookup: SecretLookup, name: string, field: string | null): SecretValue => {
  const text = lookup.read(name);
  if (text === undefined || text.length === 0)
    return { ok: false, reason: `the secret ${name} is not set (${lookup.where(name)})` };
  if (field === null) return { ok: true, value: text };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, reason: `the secret ${name} is not a JSON object, so it has no field "${field}"` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return { ok: false, reason: `the secret ${name} is not a JSON object, so it has no field "${field}"` };
  const member: unknown = Object.hasOwn(data, field) ? Reflect.get(data, field) : undefined;
  if (typeof member === 'string' && member.length > 0) return { ok: true, value: member };
  if (typeof member === 'number' || typeof member === 'boolean') return { ok: true, value: String(member) };
  return { ok: false, reason: `the secret ${name} has no text field "${field}"` };
};

/** A lookup over values already read (the deployed functions read them before resolving). */
export const secretLookupOf = (
  values: ReadonlyMap<string, string | undefined>,
  where: (name: string) => string,
): SecretLookup => ({
  read: (name) => values.get(name),
  where,
});
