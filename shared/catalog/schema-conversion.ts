// Turns OpenAPI schemas into the JSON Schema 2020-12 that MCP tool input schemas use, and marks
// the properties the gateway treats specially (secrets, identifiers, amounts).
import { isJsonObject, type JsonObject, marks } from './tool.js';

/** Keywords of OpenAPI's schema object that JSON Schema does not have. */
const openApiOnly = new Set(['discriminator', 'xml', 'externalDocs', 'nullable', 'example']);

const nested = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'] as const;
const lists = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const maps = ['properties', 'patternProperties', '$defs', 'dependentSchemas'] as const;

export interface ConversionOptions {
  readonly dialect: 'openapi-3.0' | 'json-schema-2020-12';
  /** Leave out properties marked readOnly (they only appear in answers). */
  readonly dropReadOnly: boolean;
}

/** A copy of the schema in JSON Schema 2020-12, without OpenAPI-only keywords. */
export const toJsonSchema = (schema: JsonObject, options: ConversionOptions): JsonObject => {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (openApiOnly.has(key)) continue;
    out[key] = value;
  }
  if (options.dialect === 'openapi-3.0') {
    if (schema.nullable === true) {
      if (typeof schema.type === 'string') out.type = [schema.type, 'null'];
      else if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
    }
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (typeof schema[flag] === 'boolean') {
        delete out[flag];
        if (schema[flag] === true && typeof schema[bound] === 'number') {
          out[flag] = schema[bound];
          delete out[bound];
        }
      }
    }
  }
  if (schema.example !== undefined && out.examples === undefined) out.examples = [schema.example];
  for (const key of nested) {
    const value = schema[key];
    if (isJsonObject(value)) out[key] = toJsonSchema(value, options);
  }
  for (const key of lists) {
    const value = schema[key];
    if (Array.isArray(value)) out[key] = value.map((item) => (isJsonObject(item) ? toJsonSchema(item, options) : item));
  }
  for (const key of maps) {
    const value = schema[key];
    if (!isJsonObject(value)) continue;
    const converted: JsonObject = {};
    for (const [name, child] of Object.entries(value)) {
      if (!isJsonObject(child)) continue;
      if (key === 'properties' && options.dropReadOnly && child.readOnly === true) continue;
      converted[name] = toJsonSchema(child, options);
    }
    out[key] = converted;
  }
  if (Array.isArray(out.required) && isJsonObject(out.properties)) {
    const present = out.properties;
    out.required = out.required.filter((name) => typeof name === 'string' && name in present);
  }
  return out;
};

/** Whether a $ref is left (a recursive schema the dereferencer could not inline). */
export const hasReference = (value: unknown): boolean => {
  if (Array.isArray(value)) return value.some(hasReference);
  if (!isJsonObject(value)) return false;
  return '$ref' in value || Object.values(value).some(hasReference);
};

export interface MarkRules {
  readonly sensitive: ReadonlySet<string>;
  readonly identifier: ReadonlySet<string>;
  readonly amount: ReadonlySet<string>;
}

/**
 * Sets x-sensitive / x-identifier / x-amount on every property that the schema or the
 * configuration marks: x-sensitive or format: password; x-identifier or format: identifier;
 * x-amount or format: decimal; or a property name listed for the system.
 */
export const applyMarks = (schema: JsonObject, rules: MarkRules, name?: string): JsonObject => {
  const out: JsonObject = { ...schema };
  if (schema.format === 'password' || (name !== undefined && rules.sensitive.has(name))) out[marks.sensitive] = true;
  if (schema.format === 'identifier' || (name !== undefined && rules.identifier.has(name)))
    out[marks.identifier] = true;
  if (schema.format === 'decimal' || (name !== undefined && rules.amount.has(name))) out[marks.amount] = true;
  for (const field of nested) {
    const value = schema[field];
    if (isJsonObject(value)) out[field] = applyMarks(value, rules, field === 'items' ? name : undefined);
  }
  for (const field of lists) {
    const value = schema[field];
    if (Array.isArray(value))
      out[field] = value.map((item) => (isJsonObject(item) ? applyMarks(item, rules, name) : item));
  }
  if (isJsonObject(schema.properties)) {
    const properties: JsonObject = {};
    for (const [property, child] of Object.entries(schema.properties)) {
      properties[property] = isJsonObject(child) ? applyMarks(child, rules, property) : child;
    }
    out.properties = properties;
  }
  return out;
};
