// Puts a call's arguments into their one standard form and checks them against the tool's input
// schema, or lists every problem with its JSON Pointer. The canonical form is what policy
// evaluates, what the approver sees, what is hashed, stored and sent.
import { createHash } from 'node:crypto';
import canonicalJson from 'canonicalize';
import { type CatalogTool, isJsonObject, type JsonObject, marks } from '../catalog/tool.js';
import { type InputErrorCode, inputErrorCodes } from '../errors.js';
import { unsafePathValue } from '../invoke/call.js';
import { jsonPointer } from '../json-pointer.js';
import type { InputError } from '../result.js';
import type { ArgumentIssue, StrictArguments } from './strict-json.js';
import { canonicalDecimal, canonicalText, compareDecimals, identifierProblem, isMultipleOf } from './text-rules.js';
import { validatorFor } from './validation.js';

/** Largest canonical arguments accepted, in UTF-8 bytes. */
export const maxArgumentBytes = 64 * 1024;

export interface CanonicalArguments {
  readonly value: JsonObject;
  /** The canonical serialization (RFC 8785 key order), exactly what is stored and hashed. */
  readonly json: string;
  /** SHA-256 of the canonical serialization, hex. */
  readonly hash: string;
}

export type Canonicalization =
  | { readonly ok: true; readonly arguments: CanonicalArguments }
  | { readonly ok: false; readonly errors: readonly InputError[] };

const error = (path: string, code: InputErrorCode, message: string = inputErrorCodes[code]): InputError => ({
  path,
  code,
  message,
});

/** Marks can sit on the schema itself or on the branches of allOf / anyOf / oneOf. */
const branches = (schema: JsonObject): JsonObject[] => [
  schema,
  ...(['allOf', 'anyOf', 'oneOf'] as const).flatMap((key) => {
    const list = schema[key];
    return Array.isArray(list) ? list.filter(isJsonObject) : [];
  }),
];

const hasMark = (schema: JsonObject | undefined, mark: string): boolean =>
  schema !== undefined && branches(schema).some((branch) => branch[mark] === true);

const childSchema = (schema: JsonObject | undefined, key: string | number): JsonObject | undefined => {
  if (schema === undefined) return undefined;
  for (const branch of branches(schema)) {
    if (typeof key === 'number') {
      const prefix = branch.prefixItems;
      if (Array.isArray(prefix) && isJsonObject(prefix[key])) return prefix[key];
      if (isJsonObject(branch.items)) return branch.items;
    } else {
      const properties = branch.properties;
      if (isJsonObject(properties) && Object.hasOwn(properties, key) && isJsonObject(properties[key])) {
        return properties[key];
      }
    }
  }
  return undefined;
};

const decimalOf = (value: unknown): string | null =>
  typeof value === 'number' || typeof value === 'string' ? canonicalDecimal(value, String(value)) : null;

/**
 * The schema's numeric rules on an amount, compared as decimals (the validator sees the amount
 * as a string). Rules on allOf / anyOf / oneOf branches count as well.
 */
const amountProblem = (schema: JsonObject, amount: string): InputErrorCode | null => {
  for (const branch of branches(schema)) {
    const types = Array.isArray(branch.type) ? branch.type : [branch.type];
    if (types.includes('integer') && !types.includes('number') && !types.includes('string') && amount.includes('.')) {
      return 'wrong_type';
    }
    const limit = (key: string) => decimalOf(branch[key]);
    const minimum = limit('minimum');
    const maximum = limit('maximum');
    const exclusiveMinimum = limit('exclusiveMinimum');
    const exclusiveMaximum = limit('exclusiveMaximum');
    if (
      (minimum !== null && compareDecimals(amount, minimum) < 0) ||
      (maximum !== null && compareDecimals(amount, maximum) > 0) ||
      (exclusiveMinimum !== null && compareDecimals(amount, exclusiveMinimum) <= 0) ||
      (exclusiveMaximum !== null && compareDecimals(amount, exclusiveMaximum) >= 0)
    ) {
      return 'out_of_range';
    }
    const step = limit('multipleOf');
    if (step !== null && compareDecimals(step, '0') > 0 && !isMultipleOf(amount, step)) return 'out_of_range';
    if (Array.isArray(branch.enum) && !branch.enum.some((option) => decimalOf(option) === amount)) {
      return 'not_allowed_value';
    }
    if ('const' in branch && decimalOf(branch.const) !== amount) return 'not_allowed_value';
  }
  return null;
};

/** Depth is bounded (32) by the reader before this walk, so recursion here is shallow. */
const canonicalValue = (
  value: unknown,
  schema: JsonObject | undefined,
  path: (string | number)[],
  numbers: ReadonlyMap<string, string>,
  problems: InputError[],
): unknown => {
  const pointer = jsonPointer(path);
  if (hasMark(schema, marks.amount) && (typeof value === 'string' || typeof value === 'number')) {
    const amount = canonicalDecimal(value, numbers.get(pointer));
    if (amount === null) {
      problems.push(error(pointer, 'invalid_decimal'));
      // A stand-in the validator accepts, so the field is reported once, as invalid_decimal.
      return '0';
    }
    const problem = schema === undefined ? null : amountProblem(schema, amount);
    if (problem !== null) problems.push(error(pointer, problem));
    return amount;
  }
  if (typeof value === 'string') {
    const text = canonicalText(value);
    if (hasMark(schema, marks.identifier)) {
      const problem = identifierProblem(text);
      if (problem !== null) problems.push(error(pointer, problem));
    }
    return text;
  }
  if (typeof value === 'number') return Object.is(value, -0) ? 0 : value;
  if (Array.isArray(value)) {
    return value.map((item, index) =>
      canonicalValue(item, childSchema(schema, index), [...path, index], numbers, problems),
    );
  }
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: canonicalValue(child, childSchema(schema, key), [...path, key], numbers, problems),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
};

const dedupe = (errors: InputError[]): InputError[] => {
  const seen = new Set<string>();
  return errors
    .filter((item) => {
      const key = `${item.path}\u0000${item.code}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((left, right) =>
      left.path === right.path ? left.code.localeCompare(right.code) : left.path < right.path ? -1 : 1,
    );
};

const issueError = (issue: ArgumentIssue): InputError => error(issue.path, issue.code);

export const canonicalizeArguments = (
  tool: Pick<CatalogTool, 'inputSchema'> & Partial<Pick<CatalogTool, 'fields'>>,
  input: StrictArguments,
): Canonicalization => {
  const schema = tool.inputSchema;
  const value = input.value === undefined ? {} : input.value;
  if (!isJsonObject(value)) return { ok: false, errors: [error('', 'not_an_object')] };
  // An amount read from its source text is exact, so an integer beyond 2^53 is not unsafe there.
  // (A number beyond the finite range stays refused, amount or not.)
  const exactAmount = (issue: ArgumentIssue) =>
    issue.code === 'unsafe_integer' &&
    input.numbers.has(issue.path) &&
    hasMark(schemaAt(schema, issue.path), marks.amount);
  const problems: InputError[] = input.issues.filter((issue) => !exactAmount(issue)).map(issueError);
  const canonical = canonicalValue(value, schema, [], input.numbers, problems);
  if (!isJsonObject(canonical)) return { ok: false, errors: [error('', 'not_an_object')] };
  // A path value of "." or ".." would move the call to another path of the system.
  for (const binding of tool.fields ?? []) {
    const value =
      binding.in === 'path' && Object.hasOwn(canonical, binding.field) ? canonical[binding.field] : undefined;
    if (typeof value === 'string' && unsafePathValue(value)) {
      problems.push(
        error(
          jsonPointer([binding.field]),
          'invalid_format',
          'A value that is part of the address cannot be "." or "..".',
        ),
      );
    }
  }
  // Where a value was not read (nested too deep), the validator would only see a stand-in.
  const unread = input.issues.filter((issue) => issue.code === 'nesting_too_deep').map((issue) => issue.path);
  problems.push(
    ...validatorFor(schema)(canonical).filter(
      (found) => !unread.some((path) => found.path === path || found.path.startsWith(`${path}/`)),
    ),
  );
  if (problems.length > 0) {
    // Values already refused (lone surrogates, non-finite numbers) have no canonical text; the
    // size is still reported, measured on the plain serialization.
    if (Buffer.byteLength(JSON.stringify(canonical), 'utf8') > maxArgumentBytes) {
      problems.push(error('', 'arguments_too_large'));
    }
    return { ok: false, errors: dedupe(problems) };
  }
  const json = canonicalJson(canonical) ?? '{}';
  if (Buffer.byteLength(json, 'utf8') > maxArgumentBytes)
    return { ok: false, errors: [error('', 'arguments_too_large')] };
  return {
    ok: true,
    arguments: { value: canonical, json, hash: argumentsHash(json) },
  };
};

/** The hash of a canonical serialization: what is stored with a call and what an approver's decision names. */
export const argumentsHash = (json: string): string => createHash('sha256').update(json).digest('hex');

/** The schema that governs the value at a JSON Pointer, when the schema says. */
const schemaAt = (schema: JsonObject, pointer: string): JsonObject | undefined => {
  if (pointer === '') return schema;
  let current: JsonObject | undefined = schema;
  for (const segment of pointer.slice(1).split('/')) {
    const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
    current = childSchema(current, /^\d+$/.test(key) ? Number(key) : key) ?? childSchema(current, key);
  }
  return current;
};
