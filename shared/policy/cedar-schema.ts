// The Cedar model of the gateway, generated from the catalog: principal Agent (in its Groups,
// with `outside` and the `customer` it acts for), resource System, one action per tool (members
// of the action groups "<system key>", "read" and "write"), and a context { arguments } typed
// from the tool's input schema. Amounts are Cedar decimals, so policies compare them exactly.
import type { SchemaJson, TypeOfAttribute } from '@cedar-policy/cedar-wasm/nodejs';
import type { CatalogTool } from '../catalog/tool.js';
import { isJsonObject, type JsonObject, marks } from '../catalog/tool.js';

export type CedarType =
  | { readonly kind: 'string' }
  | { readonly kind: 'long' }
  | { readonly kind: 'bool' }
  | { readonly kind: 'decimal' }
  | { readonly kind: 'set'; readonly element: CedarType }
  | { readonly kind: 'record'; readonly attributes: ReadonlyMap<string, CedarAttribute> };

export interface CedarAttribute {
  readonly type: CedarType;
  readonly required: boolean;
}

export type RecordShape = Extract<CedarType, { kind: 'record' }>;

/** Branches of a JSON Schema type other than null (a nullable field is an optional attribute). */
const typesOf = (schema: JsonObject): string[] => {
  const type = schema.type;
  const list = Array.isArray(type)
    ? type.filter((item): item is string => typeof item === 'string')
    : typeof type === 'string'
      ? [type]
      : [];
  return list.filter((item) => item !== 'null');
};

/**
 * The Cedar type of an input field, or null when Cedar cannot represent it exactly (a plain
 * `number`, a union of types, a schema without a type): such fields are left out of the context,
 * so a policy that names them is refused when the configuration loads.
 */
export const cedarTypeOf = (schema: JsonObject): CedarType | null => {
  if (schema[marks.amount] === true) return { kind: 'decimal' };
  const types = typesOf(schema);
  if (types.length === 0 && Array.isArray(schema.enum) && schema.enum.every((item) => typeof item === 'string')) {
    return { kind: 'string' };
  }
  if (types.length !== 1) return null;
  switch (types[0]) {
    case 'string':
      return { kind: 'string' };
    case 'integer':
      return { kind: 'long' };
    case 'boolean':
      return { kind: 'bool' };
    case 'array': {
      const element = isJsonObject(schema.items) ? cedarTypeOf(schema.items) : null;
      return element === null ? null : { kind: 'set', element };
    }
    case 'object':
      return recordOf(schema);
    default:
      return null;
  }
};

export const recordOf = (schema: JsonObject): RecordShape => {
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === 'string') : [],
  );
  const attributes = new Map<string, CedarAttribute>();
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  for (const [name, child] of Object.entries(properties)) {
    if (!isJsonObject(child)) continue;
    const type = cedarTypeOf(child);
    const nullable = Array.isArray(child.type) && child.type.includes('null');
    if (type !== null) attributes.set(name, { type, required: required.has(name) && !nullable });
  }
  return { kind: 'record', attributes };
};

const toSchemaType = (type: CedarType): TypeOfAttribute<string> => {
  switch (type.kind) {
    case 'string':
      return { type: 'String' };
    case 'long':
      return { type: 'Long' };
    case 'bool':
      return { type: 'Boolean' };
    case 'decimal':
      return { type: 'Extension', name: 'decimal' };
    case 'set':
      return { type: 'Set', element: toSchemaType(type.element) };
    case 'record':
      return {
        type: 'Record',
        attributes: Object.fromEntries(
          [...type.attributes].map(([name, attribute]) => [
            name,
            { ...toSchemaType(attribute.type), required: attribute.required },
          ]),
        ),
      };
  }
};

export const entityTypes = { agent: 'Agent', group: 'Group', system: 'System' } as const;

export interface CedarModel {
  readonly schema: SchemaJson<string>;
  /** The arguments' Cedar shape of every tool, by tool name. */
  readonly shapes: ReadonlyMap<string, RecordShape>;
}

export const cedarModelOf = (tools: readonly CatalogTool[]): CedarModel => {
  const shapes = new Map(tools.map((tool) => [tool.name, recordOf(tool.inputSchema)]));
  const groups = new Set<string>(['read', 'write', ...tools.map((tool) => tool.systemKey)]);
  return {
    shapes,
    schema: {
      '': {
        entityTypes: {
          [entityTypes.group]: {},
          [entityTypes.system]: {},
          [entityTypes.agent]: {
            memberOfTypes: [entityTypes.group],
            shape: {
              type: 'Record',
              attributes: {
                outside: { type: 'Boolean', required: true },
                customer: { type: 'String', required: false },
              },
            },
          },
        },
        actions: {
          ...Object.fromEntries([...groups].map((group) => [group, {}])),
          ...Object.fromEntries(
            tools.map((tool) => [
              tool.name,
              {
                memberOf: [{ id: tool.systemKey }, { id: tool.access }],
                appliesTo: {
                  principalTypes: [entityTypes.agent],
                  resourceTypes: [entityTypes.system],
                  context: {
                    type: 'Record',
                    attributes: {
                      arguments: { ...toSchemaType(shapes.get(tool.name) ?? recordOf({})), required: true },
                    },
                  },
                },
              },
            ]),
          ),
        },
      },
    },
  };
};
