// Values of fields marked sensitive, replaced for everything that is shown or kept in clear.
import { isJsonObject, type JsonObject, marks } from '../catalog/tool.js';

export const redactedValue = '[REDACTED]';

const childOf = (schema: JsonObject | undefined, key: string | number): JsonObject | undefined => {
  if (schema === undefined) return undefined;
  if (typeof key === 'number') return isJsonObject(schema.items) ? schema.items : undefined;
  const properties = schema.properties;
  return isJsonObject(properties) && Object.hasOwn(properties, key) && isJsonObject(properties[key])
    ? properties[key]
    : undefined;
};

/** A copy of canonical arguments with every value of an x-sensitive field redacted. */
export const redactMarked = (value: unknown, schema: JsonObject | undefined): unknown => {
  if (schema?.[marks.sensitive] === true) return redactedValue;
  if (Array.isArray(value)) return value.map((item, index) => redactMarked(item, childOf(schema, index)));
  if (isJsonObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => [key, redactMarked(child, childOf(schema, key))]),
    );
  }
  return value;
};
