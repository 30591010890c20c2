// Schema validation of canonical arguments with a real JSON Schema validator (ajv, draft
// 2020-12, no coercion, every error): the schema the validator is compiled from, and its findings
// turned into the gateway's input errors. The validator itself is compiled at load by the local
// runtime (compile-validator.ts) or instantiated from the code config:push generated ahead of
// time (standalone-validators.ts): both read their findings here, so both answer alike.
import type { ErrorObject } from 'ajv';
import { mapSubschemas } from '../catalog/schema-walk.js';
import { isJsonObject, type JsonObject, marks } from '../catalog/tool.js';
import { type InputErrorCode, inputError, inputErrorCodes } from '../errors.js';
import { jsonPointer } from '../json-pointer.js';
import type { InputError } from '../result.js';

/** Checked on the canonical decimal by canonicalization (amountProblem), not by the validator. */
const numericKeywords = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'enum', 'const'];

/**
 * The schema the validator sees: amounts arrive canonical, as decimal strings, so an amount's
 * type becomes string and its numeric limits are checked by canonicalization instead.
 */
export const validationSchema = (schema: JsonObject): JsonObject => {
  const out = mapSubschemas(schema, validationSchema);
  if (schema[marks.amount] !== true) return out;
  for (const key of numericKeywords) delete out[key];
  // An optional amount stays optional: null is still null after canonicalization.
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  out.type = types.includes('null') ? ['string', 'null'] : 'string';
  return out;
};

const codeFor = (keyword: string): InputErrorCode => {
  switch (keyword) {
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'unknown_field';
    case 'required':
      return 'missing_field';
    case 'type':
      return 'wrong_type';
    case 'enum':
    case 'const':
      return 'not_allowed_value';
    case 'pattern':
      return 'pattern_mismatch';
    case 'minLength':
    case 'minItems':
    case 'minProperties':
      return 'too_short';
    case 'maxLength':
    case 'maxItems':
    case 'maxProperties':
      return 'too_long';
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'multipleOf':
      return 'out_of_range';
    case 'format':
      return 'invalid_format';
    default:
      return 'schema_violation';
  }
};

const parameter = (error: ErrorObject, name: string): unknown =>
  isJsonObject(error.params) ? error.params[name] : undefined;

const detail = (error: ErrorObject, code: InputErrorCode): string => {
  const base = inputErrorCodes[code];
  switch (error.keyword) {
    case 'type':
      return `Expected ${String(parameter(error, 'type')).replaceAll(',', ' or ')}.`;
    case 'enum': {
      const allowed = parameter(error, 'allowedValues');
      return Array.isArray(allowed)
        ? `Expected one of: ${allowed.map((item) => JSON.stringify(item)).join(', ')}.`
        : base;
    }
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${base} (limit: ${String(parameter(error, 'limit'))})`;
    case 'format':
      return `Expected the format ${String(parameter(error, 'format'))}.`;
    case 'pattern':
      return `${base} (${String(parameter(error, 'pattern'))})`;
    default:
      return base;
  }
};

const toInputError = (error: ErrorObject): InputError => {
  const code = codeFor(error.keyword);
  let path = error.instancePath;
  const property = parameter(
    error,
    error.keyword === 'required'
      ? 'missingProperty'
      : error.keyword === 'unevaluatedProperties'
        ? 'unevaluatedProperty'
        : 'additionalProperty',
  );
  if ((code === 'missing_field' || code === 'unknown_field') && typeof property === 'string') {
    path = `${path}${jsonPointer([property])}`;
  }
  return inputError(path, code, detail(error, code));
};

/** What an ajv validation function found: nothing when it passed, else each error as an input error. */
export const inputErrorsOf = (valid: unknown, errors: readonly ErrorObject[] | null | undefined): InputError[] =>
  valid ? [] : (errors ?? []).map(toInputError);
