// Puts a call's arguments into their one standard form and checks them against the tool's input
// schema, or lists every problem with its JSON Pointer. The canonical form is what policy
// evaluates, what the approver sees, what is hashed, stored and sent.
import { createHash } from 'node:crypto';
import canonicalJson from 'canonicalize';
import { type CatalogTool, isJsonObject, type JsonObject, marks } from '../catalog/tool.js';
import { type InputErrorCode, inputErrorCodes } from '../errors.js';
import { jsonPointer } from '../json-pointer.js';
import type { InputError } from '../result.js';
import type { ArgumentIssue, StrictArguments } from './strict-json.js';
import { canonicalDecimal, canonicalText, compareDecimals, identifierProblem } from './text-rules.js';
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

const bound = (schema: JsonObject, key: string): string | null =>
  typeof schema[key] === 'number' ? canonicalDecimal(schema[key], String(schema[key])) : null;

/** Numeric limits of an amount, compared as decimals (its schema type is relaxed to a string). */
const amountRangeProblem = (schema: JsonObject, amount: string): boolean => {
  const minimum = bound(schema, 'minimum');
  const maximum = bound(schema, 'maximum');
  const exclusiveMinimum = bound(schema, 'exclusiveMinimum');
  const exclusiveMaximum = bound(schema, 'exclusiveMaximum');
  return (
    (minimum !== null && compareDecimals(amount, minimum) < 0) ||
    (maximum !== null && compareDecimals(amount, maximum) > 0) ||
    (exclusiveMinimum !== null && compareDecimals(amount, exclusiveMinimum) <= 0) ||
    (exclusiveMaximum !== null && compareDecimals(amount, exclusiveMaximum) >= 0)
  );
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
      return value;
    }
    if (schema !== undefined && amountRangeProblem(schema, amount)) problems.push(error(pointer, 'out_of_range'));
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
  tool: Pick<CatalogTool, 'inputSchema'>,
  input: StrictArguments,
): Canonicalization => {
  const schema = tool.inputSchema;
  const value = input.value === undefined ? {} : input.value;
  if (!isJsonObject(value)) return { ok: false, errors: [error('', 'not_an_object')] };
  // Amounts are read from their source text, so an amount beyond 2^53 is not unsafe.
  const problems: InputError[] = input.issues
    .filter((issue) => issue.code !== 'unsafe_integer' || !hasMark(schemaAt(schema, issue.path), marks.amount))
    .map(issueError);
  const canonical = canonicalValue(value, schema, [], input.numbers, problems);
  if (!isJsonObject(canonical)) return { ok: false, errors: [error('', 'not_an_object')] };
  problems.push(...validatorFor(schema)(canonical));
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
    arguments: { value: canonical, json, hash: createHash('sha256').update(json).digest('hex') },
  };
};

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
