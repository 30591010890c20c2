// Which fields hold secrets, and answers with their values replaced. A field is secret when its
// schema marks it (x-sensitive, format: password), when the system's configuration lists it, or
// when its name says so, read as whole words across snake_case, kebab-case and camelCase:
// `api_key`, `apiKey`, `client-secret`, `portalPassword` are secret; `passenger_name` and
// `boarding_pass` are not.

import { anyApplies, anyWithin, memberSchemas, type StringContent, stringContent } from './catalog/schema-walk.js';
import { isJsonObject, type JsonObject, marks } from './catalog/tool.js';
import { depthOf, maxResultDepth } from './json-depth.js';
import { jsonPointer } from './json-pointer.js';
import { setOwn } from './objects.js';
import { exactJsonText } from './wire/exact-json.js';

export const redactedValue = '[REDACTED]';

/** Word sequences that make a field name secret. */
const secretPhrases: readonly (readonly string[])[] = [
  ['password'],
  ['passwd'],
  ['passphrase'],
  ['secret'],
  ['token'],
  ['apikey'],
  ['api', 'key'],
  ['private', 'key'],
  ['access', 'key'],
  ['secret', 'key'],
  ['signing', 'key'],
  ['encryption', 'key'],
  ['credential'],
  ['credentials'],
  ['authorization'],
  ['cookie'],
  ['session', 'id'],
  ['pin'],
  ['cvv'],
  ['cvc'],
  ['otp'],
];

/** A name as lowercase words: fooBar_baz-qux → foo, bar, baz, qux; HTTPToken → http, token. */
export const nameWords = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);

/** A word of the name matches a word of a phrase as it is or in the plural (api_keys, tokens). */
const sameWord = (word: string | undefined, phraseWord: string): boolean =>
  word === phraseWord || word === `${phraseWord}s`;

const namesSecret = (name: string): boolean => {
  const words = nameWords(name);
  return secretPhrases.some((phrase) =>
    words.some((_, start) => phrase.every((word, offset) => sameWord(words[start + offset], word))),
  );
};

/**
 * Names already read: every call meets the same few, a dozen or more per call, so a known name is
 * one lookup (no order kept, as a least-recently-used map would on every hit). Forgotten all at
 * once when full, so names an agent makes up cannot grow it; a long name is read each time, not kept.
 */
const readNames = new Map<string, boolean>();
const keptNames = 4096;
const longestKeptName = 128;

export const isSecretName = (name: string): boolean => {
  const known = readNames.get(name);
  if (known !== undefined) return known;
  const secret = namesSecret(name);
  if (name.length <= longestKeptName) {
    if (readNames.size >= keptNames) readNames.clear();
    readNames.set(name, secret);
  }
  return secret;
};

export interface SecretRules {
  /** Field names the system's configuration lists as sensitive. */
  readonly names: ReadonlySet<string>;
}

/** Whether a schema marks its value secret: x-sensitive, or format: password. */
const marksSecret = (schema: JsonObject): boolean => schema[marks.sensitive] === true || schema.format === 'password';

/** Where the walk is, and the pointers of the values it hid so far (when asked for). */
interface Hidden {
  readonly path: (string | number)[];
  readonly pointers: string[];
}

/** The JSON a string carries (base64-decoded first when its schema says so); undefined when it cannot be read. */
const readContent = (text: string, base64: boolean): unknown => {
  const texts = base64 ? [text, Buffer.from(text, 'base64').toString('utf8')] : [text];
  for (const candidate of texts) {
    try {
      const parsed: unknown = JSON.parse(candidate);
      // Content nested beyond what the gateway reads is not read (the walk below recurses).
      return depthOf(parsed, maxResultDepth) > maxResultDepth ? undefined : parsed;
    } catch {
      // Not JSON as it is: the decoded reading, or no content to redact (a probe, not a failure).
    }
  }
  return undefined;
};

/**
 * Whether the JSON a string carries (contentMediaType, contentSchema) holds a secret, by its
 * content schema's marks or by name; content that cannot be read counts as secret when its
 * content schema marks one anywhere, so a mark never depends on the text being well formed.
 */
const contentHoldsSecret = (text: string, content: StringContent, rules: SecretRules): boolean => {
  const parsed = readContent(text, content.base64);
  if (parsed === undefined) return content.schemas.some((schema) => anyWithin(schema, marksSecret));
  const inner: Hidden = { path: [], pointers: [] };
  redactUnder(parsed, content.schemas, rules, undefined, inner);
  return inner.pointers.length > 0;
};

/**
 * Whether a value is secret: marked so, listed or named so, or a string that carries JSON with a
 * secret in it (hidden whole: its text is the secret's text).
 */
const isSecretValue = (
  value: unknown,
  schemas: readonly JsonObject[],
  rules: SecretRules,
  name: string | undefined,
): boolean => {
  if (anyApplies(schemas, marksSecret) || (name !== undefined && (rules.names.has(name) || isSecretName(name))))
    return true;
  if (typeof value !== 'string') return false;
  const content = stringContent(schemas);
  return content !== null && contentHoldsSecret(value, content, rules);
};

const redactUnder = (
  value: unknown,
  schemas: readonly JsonObject[],
  rules: SecretRules,
  name: string | undefined,
  hidden: Hidden | null,
): unknown => {
  if (isSecretValue(value, schemas, rules, name)) {
    if (value === null) return null;
    hidden?.pointers.push(jsonPointer(hidden.path));
    return redactedValue;
  }
  if (Array.isArray(value))
    return value.map((item, index) => {
      hidden?.path.push(index);
      const redacted = redactUnder(item, memberSchemas(schemas, index), rules, name, hidden);
      hidden?.path.pop();
      return redacted;
    });
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      hidden?.path.push(key);
      setOwn(out, key, redactUnder(child, memberSchemas(schemas, key), rules, key, hidden));
      hidden?.path.pop();
    }
    return out;
  }
  return value;
};

/** Per schema (tool schemas live as long as their snapshot and never change): whether it is plain, below. */
const plainSchemas = new WeakMap<JsonObject, boolean>();

/**
 * Whether nothing in a schema, at any depth, marks a value secret or says a string carries JSON:
 * then only names can make a value under it secret, as under no schema at all.
 */
const isPlainSchema = (schema: JsonObject): boolean => {
  let plain = plainSchemas.get(schema);
  if (plain === undefined) {
    plain = !anyWithin(schema, (branch) => marksSecret(branch) || stringContent([branch]) !== null);
    plainSchemas.set(schema, plain);
  }
  return plain;
};

/** The schemas a walk reads: none for a plain schema (its walk would find what names alone find). */
const governing = (schema: JsonObject | null): readonly JsonObject[] =>
  schema === null || isPlainSchema(schema) ? [] : [schema];

/**
 * A copy of a JSON value with every secret value replaced by "[REDACTED]": by the schema's marks
 * where a schema is known (on any branch that may apply: allOf, anyOf, oneOf, if / then / else,
 * prefixItems, items, additional and pattern properties; see schema-walk.ts), by the
 * configuration's list and by name everywhere; a string whose schema says it carries JSON
 * (contentMediaType, contentSchema) is hidden whole when that JSON holds a secret.
 */
export const redactSecrets = (value: unknown, schema: JsonObject | null, rules: SecretRules, name?: string): unknown =>
  redactUnder(value, governing(schema), rules, name, null);

/**
 * The redacted copy (as redactSecrets) and, from the same walk, the JSON Pointers of the values it
 * hid: a secret that is null hides nothing; one that already reads "[REDACTED]" is hidden all the
 * same. A held call keeps both (secret-pointers.ts).
 */
export const redactWithPointers = (
  value: unknown,
  schema: JsonObject | null,
  rules: SecretRules,
): { readonly redacted: unknown; readonly pointers: string[] } => {
  const hidden: Hidden = { path: [], pointers: [] };
  const redacted = redactUnder(value, governing(schema), rules, undefined, hidden);
  return { redacted, pointers: hidden.pointers };
};

/** Whether any value in the arguments is secret (so they must be kept encrypted). */
export const holdsSecrets = (value: unknown, schema: JsonObject | null, rules: SecretRules): boolean =>
  exactJsonText(redactSecrets(value, schema, rules)) !== exactJsonText(value);

/** The secret rules of a system's tools: the field names its configuration lists as sensitive. */
export const secretRulesOf = (system: { readonly sensitive_fields?: readonly string[] } | undefined): SecretRules => ({
  names: new Set(system?.sensitive_fields ?? []),
});
