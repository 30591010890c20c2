// Turns OpenAPI schemas into the JSON Schema 2020-12 that MCP tool input schemas use, and marks
// the properties the gateway treats specially (secrets, identifiers, amounts).
import { mapSubschemas, nameAt } from './schema-walk.js';
import { isJsonObject, type JsonObject, marks } from './tool.js';

/** Keywords of OpenAPI's schema object that JSON Schema does not have. */
const openApiOnly = new Set(['discriminator', 'xml', 'externalDocs', 'nullable', 'example']);

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
  const converted = mapSubschemas(out, (child) => toJsonSchema(child, options));
  if (options.dropReadOnly && isJsonObject(converted.properties)) {
    converted.properties = Object.fromEntries(
      Object.entries(converted.properties).filter(([, child]) => !(isJsonObject(child) && child.readOnly === true)),
    );
  }
  return withKnownRequired(converted);
};

/** `required` names only properties that are there (readOnly ones were left out). */
const withKnownRequired = (out: JsonObject): JsonObject => {
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
  const out = mapSubschemas(schema, (child, position) => applyMarks(child, rules, nameAt(position, name)));
  if (schema.format === 'password' || (name !== undefined && rules.sensitive.has(name))) out[marks.sensitive] = true;
  if (schema.format === 'identifier' || (name !== undefined && rules.identifier.has(name)))
    out[marks.identifier] = true;
  if (schema.format === 'decimal' || (name !== undefined && rules.amount.has(name))) out[marks.amount] = true;
  return out;
};
