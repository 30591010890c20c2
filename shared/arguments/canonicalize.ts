// Puts a call's arguments into their one standard form and checks them against the tool's input
// schema, or lists every problem with its JSON Pointer. The canonical form is what policy
// evaluates, what the approver sees, what is hashed, stored and sent.
import { inPlace, memberSchemas } from '../catalog/schema-walk.js';
import {
  type ArgumentsValidator,
  type CatalogTool,
  fieldBindings,
  isJsonObject,
  type JsonObject,
  marks,
  type ToolWithValidator,
} from '../catalog/tool.js';
import { type InputErrorCode, inputError, inputErrorCodes } from '../errors.js';
import { jsonPointer, parseJsonPointer, pointerSegment } from '../json-pointer.js';
import { setOwn } from '../objects.js';
import type { InputError } from '../result.js';
import { canonicalJsonText, lenientJsonText } from '../wire/exact-json.js';
import { formProblems } from '../wire/form-body.js';
import { headerValueMessage, printableHeaderValue } from '../wire/headers.js';
import { parameterText, unsafePathValue } from '../wire/parameter-values.js';
import { canonicalDecimal, compareDecimals, isMultipleOf } from './decimal.js';
import { argumentsHash } from './hash.js';
import type { ArgumentIssue, StrictArguments } from './strict-json.js';
import { canonicalText, identifierProblem } from './text-rules.js';

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

const error = inputError;

/** Marks can sit on the schema itself or on any branch that applies in place (schema-walk.ts). */
const branches = (schema: JsonObject): readonly JsonObject[] => inPlace(schema);

const hasMark = (schema: JsonObject | undefined, mark: string): boolean =>
  schema !== undefined && branches(schema).some((branch) => branch[mark] === true);

/** The schema of a member: several that may govern it are read together, as an allOf. */
const childSchema = (schema: JsonObject | undefined, key: string | number): JsonObject | undefined => {
  if (schema === undefined) return undefined;
  const members = memberSchemas([schema], key);
  return members.length <= 1 ? members[0] : { allOf: members };
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
    const minimum = decimalOf(branch.minimum);
    const maximum = decimalOf(branch.maximum);
    const exclusiveMinimum = decimalOf(branch.exclusiveMinimum);
    const exclusiveMaximum = decimalOf(branch.exclusiveMaximum);
    if (
      (minimum !== null && compareDecimals(amount, minimum) < 0) ||
      (maximum !== null && compareDecimals(amount, maximum) > 0) ||
      (exclusiveMinimum !== null && compareDecimals(amount, exclusiveMinimum) <= 0) ||
      (exclusiveMaximum !== null && compareDecimals(amount, exclusiveMaximum) >= 0)
    ) {
      return 'out_of_range';
    }
    const step = decimalOf(branch.multipleOf);
    if (step !== null && compareDecimals(step, '0') > 0 && !isMultipleOf(amount, step)) return 'out_of_range';
    if (Array.isArray(branch.enum) && !branch.enum.some((option) => decimalOf(option) === amount)) {
      return 'not_allowed_value';
    }
    if ('const' in branch && decimalOf(branch.const) !== amount) return 'not_allowed_value';
  }
  return null;
};

/** An integer beyond ±(2^53−1) kept exact, and where it sits (the validator sees a stand-in there). */
interface ExactInteger {
  readonly container: JsonObject | unknown[];
  readonly key: string | number;
  readonly value: bigint;
  readonly pointer: string;
  readonly schema: JsonObject | undefined;
}

interface Walk {
  readonly numbers: ReadonlyMap<string, string>;
  readonly problems: InputError[];
  readonly exact: ExactInteger[];
}

/**
 * Depth is bounded (32) by the reader before this walk, so recursion here is shallow. Pointers
 * grow by one segment per level, and are read only where a problem or a number's text needs one.
 */
const canonicalValue = (value: unknown, schema: JsonObject | undefined, pointer: string, walk: Walk): unknown => {
  const { numbers, problems } = walk;
  if (hasMark(schema, marks.amount) && (typeof value === 'string' || typeof value === 'number')) {
    const amount = canonicalDecimal(value, typeof value === 'number' ? numbers.get(pointer) : undefined);
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
  if (typeof value === 'number') {
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      // Beyond 2^53 a double is not the number written: the digits come from the text, exactly.
      const digits = canonicalDecimal(value, numbers.get(pointer));
      if (digits !== null && !digits.includes('.')) return BigInt(digits);
      problems.push(error(pointer, 'unsafe_integer'));
    }
    return Object.is(value, -0) ? 0 : value;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const [index, item] of value.entries()) {
      const child = childSchema(schema, index);
      const childPointer = pointer + pointerSegment(index);
      const canonical = canonicalValue(item, child, childPointer, walk);
      out.push(canonical);
      if (typeof canonical === 'bigint') {
        walk.exact.push({ container: out, key: index, value: canonical, pointer: childPointer, schema: child });
      }
    }
    return out;
  }
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      const child = childSchema(schema, key);
      const childPointer = pointer + pointerSegment(key);
      const canonical = canonicalValue(item, child, childPointer, walk);
      setOwn(out, key, canonical);
      if (typeof canonical === 'bigint') {
        walk.exact.push({ container: out, key, value: canonical, pointer: childPointer, schema: child });
      }
    }
    return out;
  }
  return value;
};

/**
 * Validates with the schema's validator, which cannot read a bigint: each exact integer is shown
 * to it as a double of the same sign and size (so type checks hold), and its numeric limits are
 * checked exactly, on its digits, instead.
 */
const validate = (
  validator: ArgumentsValidator,
  canonical: JsonObject,
  exact: readonly ExactInteger[],
): InputError[] => {
  for (const item of exact) setOwn(item.container, item.key, Number(item.value));
  let found: InputError[];
  try {
    found = validator(canonical);
  } finally {
    for (const item of exact) setOwn(item.container, item.key, item.value);
  }
  if (exact.length === 0) return found;
  const exactAt = new Set(exact.map((item) => item.pointer));
  const numeric: ReadonlySet<string> = new Set<InputErrorCode>(['out_of_range', 'not_allowed_value']);
  return [
    ...found.filter((problem) => !(exactAt.has(problem.path) && numeric.has(problem.code))),
    ...exact.flatMap((item) => {
      const problem = item.schema === undefined ? null : amountProblem(item.schema, item.value.toString());
      return problem === null ? [] : [error(item.pointer, problem)];
    }),
  ];
};

/** Most input errors an answer (and the record) lists; the rest are counted in one last entry. */
export const maxInputErrors = 100;
/** Longest path or message an input error keeps (a key can be as long as the request). */
const maxErrorText = 500;

const clip = (text: string): string => (text.length > maxErrorText ? `${text.slice(0, maxErrorText)}…` : text);

/** The errors as listed: each clipped, at most maxInputErrors, and a count of the rest. */
const bounded = (errors: readonly InputError[]): InputError[] => {
  const listed = errors
    .slice(0, maxInputErrors)
    .map((item) => ({ path: clip(item.path), code: item.code, message: clip(item.message) }));
  if (errors.length <= maxInputErrors) return listed;
  const rest = errors.length - maxInputErrors;
  return [...listed, error('', 'more_errors', `${inputErrorCodes.more_errors} (${rest} more)`)];
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

/**
 * Past this many unknown fields the arguments are refused on those alone, before their values are
 * walked or validated: thousands of unknown fields would otherwise cost the gateway's thread tens
 * of milliseconds per call, refused anyway.
 */
export const maxUnknownFields = 20;

/**
 * The arguments' fields a schema that closes its object (`additionalProperties: false`, no
 * pattern) does not name, when there are more than maxUnknownFields of them; otherwise null and the
 * whole walk says what is wrong. Those fields are unknown whatever else the schema says.
 */
const manyUnknownFields = (schema: JsonObject, value: JsonObject): InputError[] | null => {
  if (schema.additionalProperties !== false || schema.patternProperties !== undefined) return null;
  const known = isJsonObject(schema.properties) ? schema.properties : {};
  const unknown = Object.keys(value).filter((key) => !Object.hasOwn(known, key));
  return unknown.length > maxUnknownFields ? unknown.map((key) => error(jsonPointer([key]), 'unknown_field')) : null;
};

type CanonicalizedTool = Pick<ToolWithValidator, 'inputSchema' | 'validate'> & Partial<Pick<CatalogTool, 'target'>>;

/**
 * What the reader found, as input errors. An amount read from its source text is exact, so an
 * integer beyond 2^53 is not unsafe there. (A number beyond the finite range stays refused, amount or not.)
 */
const readerProblems = (schema: JsonObject, input: StrictArguments): InputError[] =>
  input.issues
    .filter(
      (issue) =>
        !(
          issue.code === 'unsafe_integer' &&
          input.numbers.has(issue.path) &&
          hasMark(schemaAt(schema, issue.path), marks.amount)
        ),
    )
    .map(issueError);

/** What the wire cannot carry as the approver saw it: path values, header values, form bodies. */
const bindingProblems = (tool: CanonicalizedTool, canonical: JsonObject): InputError[] => {
  const problems: InputError[] = [];
  // A path value of "." or ".." would move the call to another path of the system.
  for (const binding of fieldBindings(tool)) {
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
  // A header value goes on the wire as it is: printable ASCII only (no line breaks to smuggle
  // headers, nothing a system would decode differently from what the approver saw).
  for (const binding of fieldBindings(tool)) {
    if (binding.in !== 'header' || !Object.hasOwn(canonical, binding.field)) continue;
    if (!printableHeaderValue(parameterText(canonical[binding.field]))) {
      problems.push(error(jsonPointer([binding.field]), 'invalid_format', headerValueMessage));
    }
  }
  // A form body carries text only: what it would lose (a null, an empty list) is refused, not dropped.
  const formFields = fieldBindings(tool).filter((binding) => binding.in === 'form');
  for (const found of formProblems(
    formFields
      .filter((binding) => Object.hasOwn(canonical, binding.field))
      .map((binding) => ({ name: binding.name, value: canonical[binding.field], encoding: binding.encoding })),
  )) {
    problems.push(error(jsonPointer(found.path), 'invalid_format', found.message));
  }
  return problems;
};

/** Whether the path is, or lies under, one of the unread values' paths. */
const underUnread = (unread: ReadonlySet<string>, path: string): boolean => {
  for (let end = path.length; end !== -1; end = path.lastIndexOf('/', end - 1)) {
    if (unread.has(path.slice(0, end))) return true;
    if (end === 0) break;
  }
  return false;
};

/**
 * What the schema's validator finds. Where a value was not read (nested too deep, past a cap), the
 * validator would only see a stand-in (or nothing): its findings there are left out; past the
 * value cap the arguments were not all read, so the validator has nothing to say.
 */
const validatorProblems = (
  tool: CanonicalizedTool,
  canonical: JsonObject,
  walk: Walk,
  issues: readonly ArgumentIssue[],
): InputError[] => {
  if (issues.some((issue) => issue.code === 'too_many_values')) return [];
  const unread = new Set(
    issues
      .filter((issue) => issue.code === 'nesting_too_deep' || issue.code === 'too_many_items')
      .map((issue) => issue.path),
  );
  return validate(tool.validate, canonical, walk.exact).filter((found) => !underUnread(unread, found.path));
};

export const canonicalizeArguments = (tool: CanonicalizedTool, input: StrictArguments): Canonicalization => {
  const schema = tool.inputSchema;
  const value = input.value === undefined ? {} : input.value;
  if (!isJsonObject(value)) return { ok: false, errors: [error('', 'not_an_object')] };
  const unknownFields = manyUnknownFields(schema, value);
  if (unknownFields !== null) return { ok: false, errors: bounded(unknownFields) };
  const problems = readerProblems(schema, input);
  const walk: Walk = { numbers: input.numbers, problems, exact: [] };
  const canonical = canonicalValue(value, schema, '', walk);
  if (!isJsonObject(canonical)) return { ok: false, errors: [error('', 'not_an_object')] };
  problems.push(...bindingProblems(tool, canonical));
  problems.push(...validatorProblems(tool, canonical, walk, input.issues));
  if (problems.length > 0) {
    // Values already refused (lone surrogates, non-finite numbers) have no canonical text; the
    // size is still reported, measured on the plain serialization.
    if (Buffer.byteLength(lenientJsonText(canonical), 'utf8') > maxArgumentBytes) {
      problems.push(error('', 'arguments_too_large'));
    }
    return { ok: false, errors: bounded(dedupe(problems)) };
  }
  const json = canonicalJsonText(canonical);
  if (Buffer.byteLength(json, 'utf8') > maxArgumentBytes)
    return { ok: false, errors: [error('', 'arguments_too_large')] };
  return {
    ok: true,
    arguments: { value: canonical, json, hash: argumentsHash(json) },
  };
};

/** The schema that governs the value at a JSON Pointer, when the schema says. */
const schemaAt = (schema: JsonObject, pointer: string): JsonObject | undefined => {
  let current: JsonObject | undefined = schema;
  for (const key of parseJsonPointer(pointer) ?? []) {
    current = childSchema(current, /^\d+$/.test(key) ? Number(key) : key) ?? childSchema(current, key);
  }
  return current;
};
