// The one map of where JSON Schema 2020-12 keeps subschemas, and the walks built on it. Every rule
// that reads a tool's schema (conversion, marks, secrets, canonical forms, validation, the Cedar
// model) walks through here, so a composition form one rule understands, all of them do.
import { setOwn } from '../objects.js';
import { isJsonObject, type JsonObject } from './tool.js';

/** Keywords whose value is one subschema. */
export const singleKeywords = [
  'items',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
] as const;
/** Keywords whose value is a list of subschemas. */
export const listKeywords = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
/** Keywords whose value maps names to subschemas. */
export const mapKeywords = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'] as const;

export type SchemaPosition =
  | { readonly keyword: (typeof singleKeywords)[number] }
  | { readonly keyword: (typeof listKeywords)[number]; readonly index: number }
  | { readonly keyword: (typeof mapKeywords)[number]; readonly name: string };

export interface Subschema {
  readonly position: SchemaPosition;
  readonly schema: JsonObject;
}

/** Every direct subschema of a schema (object schemas only: `true` / `false` hold no marks), in keyword order. */
export const subschemas = (schema: JsonObject): Subschema[] => {
  const found: Subschema[] = [];
  for (const keyword of singleKeywords) {
    const child = schema[keyword];
    if (isJsonObject(child)) found.push({ position: { keyword }, schema: child });
  }
  for (const keyword of listKeywords) {
    const list = schema[keyword];
    if (!Array.isArray(list)) continue;
    list.forEach((child, index) => {
      if (isJsonObject(child)) found.push({ position: { keyword, index }, schema: child });
    });
  }
  for (const keyword of mapKeywords) {
    const map = schema[keyword];
    if (!isJsonObject(map)) continue;
    for (const [name, child] of Object.entries(map)) {
      if (isJsonObject(child)) found.push({ position: { keyword, name }, schema: child });
    }
  }
  return found;
};

/**
 * A copy of the schema with every direct object subschema replaced by what `map` answers; every
 * other keyword (including `true` / `false` subschemas) is copied as it is.
 */
export const mapSubschemas = (
  schema: JsonObject,
  map: (child: JsonObject, position: SchemaPosition) => JsonObject,
): JsonObject => {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) setOwn(out, key, value);
  for (const keyword of singleKeywords) {
    const child = schema[keyword];
    if (isJsonObject(child)) out[keyword] = map(child, { keyword });
  }
  for (const keyword of listKeywords) {
    const list = schema[keyword];
    if (Array.isArray(list)) {
      out[keyword] = list.map((child, index) => (isJsonObject(child) ? map(child, { keyword, index }) : child));
    }
  }
  for (const keyword of mapKeywords) {
    const entries = schema[keyword];
    if (!isJsonObject(entries)) continue;
    const mapped: JsonObject = {};
    for (const [name, child] of Object.entries(entries)) {
      setOwn(mapped, name, isJsonObject(child) ? map(child, { keyword, name }) : child);
    }
    out[keyword] = mapped;
  }
  return out;
};

/** Keywords whose subschemas apply to the very value their schema applies to. */
const inPlaceKeywords = new Set<string>(['allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'dependentSchemas']);

/** Tool schemas live as long as their snapshot and are never changed, so each is read once. */
const inPlaceOf = new WeakMap<JsonObject, readonly JsonObject[]>();

/**
 * The schema and every branch that applies to the same value, at any depth: allOf, anyOf, oneOf,
 * if / then / else and dependentSchemas. A mark on any of them counts (which branch a value
 * takes is not known until it is validated, and a secret must not depend on that). `not` is
 * left out: what it describes is what the value is not.
 */
export const inPlace = (schema: JsonObject): readonly JsonObject[] => {
  const known = inPlaceOf.get(schema);
  if (known !== undefined) return known;
  const found: JsonObject[] = [];
  const seen = new Set<JsonObject>();
  const visit = (current: JsonObject) => {
    if (seen.has(current)) return;
    seen.add(current);
    found.push(current);
    for (const child of subschemas(current)) {
      if (inPlaceKeywords.has(child.position.keyword)) visit(child.schema);
    }
  };
  visit(schema);
  inPlaceOf.set(schema, found);
  return found;
};

const patterns = new Map<string, RegExp | null>();

/** A patternProperties pattern as ajv reads it (Unicode); an unreadable one matches every name. */
const matchesPattern = (pattern: string, name: string): boolean => {
  let compiled = patterns.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, 'u');
    } catch {
      compiled = null;
    }
    patterns.set(pattern, compiled);
  }
  return compiled === null || compiled.test(name);
};

const objectAt = (holder: unknown, key: string): JsonObject | null =>
  isJsonObject(holder) && Object.hasOwn(holder, key) && isJsonObject(holder[key]) ? holder[key] : null;

/** The schemas one branch gives a member: `key` is a property name or an array index. */
const memberOf = (branch: JsonObject, key: string | number): JsonObject[] => {
  const found: JsonObject[] = [];
  if (typeof key === 'number') {
    const prefix = Array.isArray(branch.prefixItems) ? branch.prefixItems : [];
    if (key < prefix.length) {
      if (isJsonObject(prefix[key])) found.push(prefix[key]);
    } else if (isJsonObject(branch.items)) found.push(branch.items);
    else if (isJsonObject(branch.unevaluatedItems)) found.push(branch.unevaluatedItems);
    // Which items match `contains` is not known here, so it may govern any of them.
    if (isJsonObject(branch.contains)) found.push(branch.contains);
    return found;
  }
  const property = objectAt(branch.properties, key);
  if (property !== null) found.push(property);
  let matched = property !== null;
  if (isJsonObject(branch.patternProperties)) {
    for (const [pattern, child] of Object.entries(branch.patternProperties)) {
      if (isJsonObject(child) && matchesPattern(pattern, key)) {
        found.push(child);
        matched = true;
      }
    }
  }
  if (!matched) {
    if (isJsonObject(branch.additionalProperties)) found.push(branch.additionalProperties);
    else if (isJsonObject(branch.unevaluatedProperties)) found.push(branch.unevaluatedProperties);
  }
  return found;
};

/**
 * The schemas that may govern the member `key` (a property name or an array index) of a value
 * the given schemas govern, through every branch that applies in place.
 */
export const memberSchemas = (schemas: readonly JsonObject[], key: string | number): JsonObject[] => {
  const found: JsonObject[] = [];
  for (const schema of schemas) {
    for (const branch of inPlace(schema)) {
      for (const member of memberOf(branch, key)) if (!found.includes(member)) found.push(member);
    }
  }
  return found;
};

/** Whether any schema that applies to a value (through any in-place branch) passes `test`. */
export const anyApplies = (schemas: readonly JsonObject[], test: (schema: JsonObject) => boolean): boolean =>
  schemas.some((schema) => inPlace(schema).some(test));

/**
 * The name a subschema's value goes by, for rules that go by field names: a property's name; an
 * array's items and the branches of a field keep the field's name; anything else has none.
 */
export const nameAt = (position: SchemaPosition, name: string | undefined): string | undefined => {
  if (position.keyword === 'properties') return position.name;
  if (inPlaceKeywords.has(position.keyword)) return name;
  switch (position.keyword) {
    case 'items':
    case 'prefixItems':
    case 'unevaluatedItems':
    case 'contains':
      return name;
    default:
      return undefined;
  }
};

/** Media types whose content is JSON text: application/json and every `+json` type. */
const jsonMediaType = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/** What the schemas of a string say about the text it carries (JSON Schema's content keywords). */
export interface StringContent {
  /** The contentSchema of every branch that applies; empty when only the media type says JSON. */
  readonly schemas: readonly JsonObject[];
  /** Whether a branch says the text is base64 (contentEncoding), so it is decoded before it is read. */
  readonly base64: boolean;
}

/**
 * The content a string's schemas describe, through every branch that applies in place: JSON text
 * when a branch names a JSON media type (contentMediaType) or gives its contentSchema; null when
 * no branch says the string carries JSON.
 */
export const stringContent = (schemas: readonly JsonObject[]): StringContent | null => {
  const found: JsonObject[] = [];
  let json = false;
  let base64 = false;
  for (const schema of schemas) {
    for (const branch of inPlace(schema)) {
      if (typeof branch.contentMediaType === 'string' && jsonMediaType.test(branch.contentMediaType)) json = true;
      if (typeof branch.contentEncoding === 'string' && /^base64(?:url)?$/i.test(branch.contentEncoding)) base64 = true;
      if (isJsonObject(branch.contentSchema) && !found.includes(branch.contentSchema)) found.push(branch.contentSchema);
    }
  }
  return json || found.length > 0 ? { schemas: found, base64 } : null;
};

/** Whether a schema or any subschema within it, at any depth, passes `test`. */
export const anyWithin = (schema: JsonObject, test: (schema: JsonObject) => boolean): boolean =>
  test(schema) || subschemas(schema).some((child) => anyWithin(child.schema, test));
