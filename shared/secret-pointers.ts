// Where redaction hid a value, as JSON Pointers: kept with a held call so whatever shows its
// arguments to people tells a hidden secret from a value that only reads "[REDACTED]".

import { isJsonObject, type JsonObject } from './catalog/tool.js';
import type { Execution } from './executions/execution.js';
import { jsonPointer } from './json-pointer.js';
import { redactedValue, redactWithPointers, type SecretRules } from './secrets.js';
import { exactJsonText, parseExactJson } from './wire/exact-json.js';

/**
 * The JSON Pointers of the values `redactSecrets` hides in these arguments (a secret that is null
 * hides nothing); found in the redaction's own walk (secrets.ts).
 */
export const secretPointers = (value: unknown, schema: JsonObject | null, rules: SecretRules): string[] =>
  redactWithPointers(value, schema, rules).pointers;

/** Whether the value shown at a pointer of a call's arguments is a hidden secret. */
export type HiddenSecret = (pointer: string, value: unknown) => boolean;

/**
 * A call's hidden secrets: the pointers kept with it; on records from before they were kept,
 * every "[REDACTED]" when the arguments were sealed (something was hidden) and none otherwise.
 */
export const hiddenSecretsOf =
  (execution: Pick<Execution, 'secret_pointers' | 'sealed_arguments'>): HiddenSecret =>
  (pointer, value) => {
    if (value !== redactedValue) return false;
    if (execution.secret_pointers !== null) return execution.secret_pointers.includes(pointer);
    return execution.sealed_arguments !== null;
  };

/** A "[REDACTED]" that is the value itself, written so it cannot be read as a hidden secret. */
const lookalikeJson = '"\\u005bREDACTED]"';

const shownJson = (value: unknown, path: readonly (string | number)[], hidden: HiddenSecret): string => {
  if (value === redactedValue) return hidden(jsonPointer(path), value) ? JSON.stringify(value) : lookalikeJson;
  if (Array.isArray(value))
    return `[${value.map((item, index) => shownJson(item, [...path, index], hidden)).join(',')}]`;
  if (isJsonObject(value)) {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${shownJson(value[key], [...path, key], hidden)}`);
    return `{${members.join(',')}}`;
  }
  return exactJsonText(value);
};

/**
 * The shown arguments as canonical JSON in which a hidden secret reads "[REDACTED]" and a value
 * that only looks like one is written "\u005bREDACTED]" (the same value, told apart by eye).
 * Text that is not JSON is returned as it is.
 */
export const shownArgumentsJson = (argumentsJson: string, hidden: HiddenSecret): string => {
  let value: unknown;
  try {
    value = parseExactJson(argumentsJson);
  } catch {
    return argumentsJson;
  }
  return shownJson(value, [], hidden);
};
