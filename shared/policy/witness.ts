// Whether some arguments could make a conditional policy permit a tool. Cedar's partial
// evaluation leaves residual conditions over the unknown arguments; when they only compare
// argument fields with constants (the usual case: amounts, currencies, flags), a finite set of
// candidate values covers every case (each constant, and the values just beside it), so trying
// those candidates answers exactly. Anything else is not analysed, and the caller stays
// conservative (the tool is listed).
import type { CedarValueJson, Expr, PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import { canonicalDecimal, decimalFromScaled, scaledDecimal } from '../arguments/decimal.js';
import { isJsonObject } from '../catalog/tool.js';
import type { CedarType, RecordShape } from './cedar-schema.js';
import { cedarDecimalLimit, cedarDecimalText, decimalValue } from './cedar-values.js';

type Path = readonly string[];

/** A constant a condition compares a field with: a plain value, or a decimal's text. */
type Literal = { readonly value: string | number | boolean } | { readonly decimal: string };

interface Usage {
  readonly literals: Literal[];
  presence: boolean;
}

const comparisons = new Set(['==', '!=', '<', '<=', '>', '>=']);
const decimalMethods = new Set(['lessThan', 'lessThanOrEqual', 'greaterThan', 'greaterThanOrEqual']);
const structural = new Set(['&&', '||']);

const isUnknown = (expr: unknown): boolean => isJsonObject(expr) && Array.isArray(expr.unknown);

/** The argument path an expression reads (context.arguments.a.b), or null. */
const pathOf = (expr: unknown): Path | null => {
  if (!isJsonObject(expr)) return null;
  const access = expr['.'];
  if (!isJsonObject(access) || typeof access.attr !== 'string') return null;
  if (isUnknown(access.left)) return [access.attr];
  const parent = pathOf(access.left);
  return parent === null ? null : [...parent, access.attr];
};

const mentionsUnknown = (expr: unknown): boolean => {
  if (isUnknown(expr)) return true;
  if (Array.isArray(expr)) return expr.some(mentionsUnknown);
  if (isJsonObject(expr)) return Object.entries(expr).some(([key, value]) => key !== 'Value' && mentionsUnknown(value));
  return false;
};

/** A constant operand: a literal, or a decimal("…") constructor. */
const literalOf = (expr: unknown): Literal | null => {
  if (!isJsonObject(expr)) return null;
  if ('Value' in expr) {
    const value = expr.Value;
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? { value } : null;
  }
  const call = expr.decimal;
  if (Array.isArray(call) && call.length === 1) {
    const [argument] = call;
    if (isJsonObject(argument) && typeof argument.Value === 'string') return { decimal: argument.Value };
  }
  return null;
};

/** Collects the paths the conditions read and the constants they compare them with; false if not analysable. */
const collect = (expr: unknown, usages: Map<string, { path: Path; usage: Usage }>): boolean => {
  if (!mentionsUnknown(expr)) return true;
  if (!isJsonObject(expr)) return false;
  const note = (path: Path): Usage => {
    const key = JSON.stringify(path);
    const found = usages.get(key);
    if (found !== undefined) return found.usage;
    const usage: Usage = { literals: [], presence: false };
    usages.set(key, { path, usage });
    return usage;
  };
  const entries = Object.entries(expr);
  if (entries.length !== 1) return false;
  const [operator, operand] = entries[0] ?? ['', null];
  if (operator === '.') {
    const path = pathOf(expr);
    if (path === null) return false;
    note(path);
    return true;
  }
  if (operator === 'has') {
    if (!isJsonObject(operand) || typeof operand.attr !== 'string') return false;
    const parent = isUnknown(operand.left) ? [] : pathOf(operand.left);
    if (parent === null) return false;
    note([...parent, operand.attr]).presence = true;
    return parent.length === 0 || collect(operand.left, usages);
  }
  if (operator === '!') return isJsonObject(operand) && collect(operand.arg, usages);
  if (structural.has(operator))
    return isJsonObject(operand) && collect(operand.left, usages) && collect(operand.right, usages);
  if (operator === 'if-then-else') {
    return (
      isJsonObject(operand) &&
      collect(operand.if, usages) &&
      collect(operand.then, usages) &&
      collect(operand.else, usages)
    );
  }
  const pair =
    comparisons.has(operator) && isJsonObject(operand)
      ? [operand.left, operand.right]
      : decimalMethods.has(operator) && Array.isArray(operand) && operand.length === 2
        ? operand
        : null;
  if (pair === null) return false;
  const [left, right] = pair;
  const leftPath = pathOf(left);
  const rightPath = pathOf(right);
  const leftLiteral = literalOf(left);
  const rightLiteral = literalOf(right);
  if (leftPath !== null && rightLiteral !== null) note(leftPath).literals.push(rightLiteral);
  else if (rightPath !== null && leftLiteral !== null) note(rightPath).literals.push(leftLiteral);
  else return false;
  return true;
};

const typeAt = (shape: RecordShape, path: Path): { type: CedarType; required: boolean } | null => {
  let current: CedarType = shape;
  let required = true;
  for (const name of path) {
    if (current.kind !== 'record') return null;
    const attribute = current.attributes.get(name);
    if (attribute === undefined) return null;
    required &&= attribute.required;
    current = attribute.type;
  }
  return { type: current, required };
};

/** The decimal `delta` ten-thousandths away (Cedar's step), as Cedar text, or null past Cedar's range. */
const stepped = (decimal: string, delta: bigint): string | null =>
  cedarDecimalText(decimalFromScaled(scaledDecimal(decimal, 4) + delta, 4));

const absent = Symbol('absent');
type Candidate = CedarValueJson | typeof absent;

const candidatesFor = (type: CedarType, usage: Usage, required: boolean): Candidate[] | null => {
  const out: Candidate[] = [];
  const add = (value: Candidate) => {
    if (!out.some((existing) => JSON.stringify(existing) === JSON.stringify(value))) out.push(value);
  };
  switch (type.kind) {
    case 'bool':
      add(true);
      add(false);
      break;
    case 'long':
      add(0);
      for (const literal of usage.literals) {
        if (!('value' in literal) || typeof literal.value !== 'number') return null;
        const { value } = literal;
        for (const near of [value - 1, value, value + 1]) if (Number.isSafeInteger(near)) add(near);
      }
      break;
    case 'string': {
      const strings = usage.literals.flatMap((literal) =>
        'value' in literal && typeof literal.value === 'string' ? [literal.value] : [],
      );
      if (strings.length !== usage.literals.length) return null;
      for (const literal of strings) add(literal);
      // One value equal to none of the constants.
      let other = 'other';
      while (strings.includes(other)) other = `${other}_`;
      add(other);
      break;
    }
    case 'decimal': {
      add(decimalValue('0.0'));
      add(decimalValue(cedarDecimalLimit));
      add(decimalValue(`-${cedarDecimalLimit}`));
      for (const literal of usage.literals) {
        if (!('decimal' in literal)) return null;
        const canonical = canonicalDecimal(literal.decimal);
        if (canonical === null) return null;
        // The constant itself and its nearest neighbours (Cedar decimals have four fractional digits).
        for (const delta of [-1n, 0n, 1n]) {
          const value = stepped(canonical, delta);
          if (value !== null) add(decimalValue(value));
        }
      }
      break;
    }
    case 'record':
      // A record read only for its presence (`has`): present (with its required fields) or absent.
      if (usage.literals.length > 0) return null;
      add(defaultRecord(type));
      break;
    default:
      return null;
  }
  if (!required || usage.presence) add(absent);
  return out;
};

/** A value of every required attribute, so unrelated fields never make evaluation fail. */
const defaultRecord = (shape: RecordShape): Record<string, CedarValueJson> => {
  const record: Record<string, CedarValueJson> = {};
  for (const [name, attribute] of shape.attributes) if (attribute.required) record[name] = defaultsOf(attribute.type);
  return record;
};

const defaultsOf = (type: CedarType): CedarValueJson => {
  switch (type.kind) {
    case 'string':
      return '';
    case 'long':
      return 0;
    case 'bool':
      return false;
    case 'decimal':
      return decimalValue('0.0');
    case 'set':
      return [];
    case 'record':
      return defaultRecord(type);
  }
};

/** The record already placed at `name`, if any (decimals and entities are not records). */
const recordAt = (target: Record<string, CedarValueJson>, name: string): Record<string, CedarValueJson> => {
  const value = target[name];
  if (typeof value !== 'object' || value === null || Array.isArray(value) || '__extn' in value || '__entity' in value)
    return {};
  const record: Record<string, CedarValueJson> = {};
  for (const [key, child] of Object.entries(value)) if (child !== undefined) record[key] = child;
  return record;
};

const place = (record: Record<string, CedarValueJson>, shape: RecordShape, path: Path, value: Candidate) => {
  let target = record;
  let type: CedarType = shape;
  for (const [index, name] of path.entries()) {
    if (type.kind !== 'record') return;
    const attribute = type.attributes.get(name);
    if (attribute === undefined) return;
    if (index === path.length - 1) {
      if (value === absent) delete target[name];
      else target[name] = value;
      return;
    }
    if (attribute.type.kind !== 'record') return;
    const child = { ...defaultRecord(attribute.type), ...recordAt(target, name) };
    target[name] = child;
    target = child;
    type = attribute.type;
  }
};

/** Most argument combinations tried for one tool before giving up (and listing it). */
const maxWitnessCandidates = 4096;

/**
 * The argument values (as Cedar context records) that decide every residual exactly, or null
 * when the residuals cannot be analysed this way.
 */
export const witnessArguments = (
  residuals: readonly PolicyJson[],
  shape: RecordShape,
): Record<string, CedarValueJson>[] | null => {
  const usages = new Map<string, { path: Path; usage: Usage }>();
  for (const residual of residuals) {
    for (const condition of residual.conditions) {
      const body: Expr = condition.body;
      if (!collect(body, usages)) return null;
    }
  }
  const dimensions: { path: Path; values: Candidate[] }[] = [];
  for (const { path, usage } of usages.values()) {
    const type = typeAt(shape, path);
    if (type === null) return null;
    const values = candidatesFor(type.type, usage, type.required);
    if (values === null) return null;
    dimensions.push({ path, values });
  }
  const total = dimensions.reduce((product, dimension) => product * dimension.values.length, 1);
  if (total > maxWitnessCandidates) return null;
  const base = defaultRecord(shape);
  const combinations: Record<string, CedarValueJson>[] = [];
  for (let index = 0; index < total; index++) {
    const record = structuredClone(base);
    let rest = index;
    for (const dimension of dimensions) {
      const value = dimension.values[rest % dimension.values.length];
      rest = Math.floor(rest / dimension.values.length);
      if (value !== undefined) place(record, shape, dimension.path, value);
    }
    combinations.push(record);
  }
  return combinations;
};
