// The Cedar model of the gateway, generated from the catalog: principal Agent (in its Groups,
// with `outside` and the `customer` it acts for), resource System, one action per tool (members
// of the action groups "<system key>", "read" and "write"), and a context { arguments } typed
// from the tool's input schema. Amounts are Cedar decimals, so policies compare them exactly.
import type { EntityJson, SchemaJson, TypeOfAttribute } from '@cedar-policy/cedar-wasm/nodejs';
import { anyApplies, subschemas } from '../catalog/schema-walk.js';
import type { CatalogTool } from '../catalog/tool.js';
import { isJsonObject, type JsonObject, marks } from '../catalog/tool.js';

export type CedarType =
  | { readonly kind: 'string' }
  | { readonly kind: 'long' }
  | { readonly kind: 'bool' }
  | { readonly kind: 'decimal' }
  | { readonly kind: 'set'; readonly element: CedarType }
  | { readonly kind: 'record'; readonly attributes: ReadonlyMap<string, CedarAttribute> };

interface CedarAttribute {
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

/** A schema's reading as a Cedar type: undefined when it says nothing about the type at all. */
type Reading = CedarType | null | undefined;

const sameType = (left: CedarType, right: CedarType): boolean => {
  if (left.kind === 'set' && right.kind === 'set') return sameType(left.element, right.element);
  if (left.kind === 'record' && right.kind === 'record') {
    return (
      left.attributes.size === right.attributes.size &&
      [...left.attributes].every(([name, attribute]) => {
        const other = right.attributes.get(name);
        return other !== undefined && other.required === attribute.required && sameType(attribute.type, other.type);
      })
    );
  }
  return left.kind === right.kind;
};

const onlyNull = (schema: JsonObject): boolean =>
  schema.type === 'null' || (Array.isArray(schema.type) && schema.type.length === 1 && schema.type[0] === 'null');

/** One type the readings agree on; null when one cannot be represented or they differ. */
const agreed = (readings: readonly Reading[]): Reading => {
  const stated = readings.filter((reading) => reading !== undefined);
  const [first] = stated;
  if (first === undefined) return undefined;
  if (first === null) return null;
  return stated.every((reading) => reading !== null && sameType(first, reading)) ? first : null;
};

/** The type the schema states itself (type, or a string enum), without its branches. */
const statedType = (schema: JsonObject): Reading => {
  const types = typesOf(schema);
  if (types.length === 0 && Array.isArray(schema.enum) && schema.enum.every((item) => typeof item === 'string')) {
    return { kind: 'string' };
  }
  if (types.length === 0) return schema.type === undefined && schema.enum === undefined ? undefined : null;
  if (types.length !== 1) return null;
  switch (types[0]) {
    case 'string':
      return { kind: 'string' };
    case 'integer':
      return { kind: 'long' };
    case 'boolean':
      return { kind: 'bool' };
    case 'array': {
      // A Cedar set holds no null, so a list whose items may be null is left out.
      const element = isJsonObject(schema.items) && !allowsNull(schema.items) ? cedarTypeOf(schema.items) : null;
      return element === null ? null : { kind: 'set', element };
    }
    case 'object':
      return recordOf(schema);
    default:
      return null;
  }
};

/**
 * A schema that states no type itself is read through its branches (schema-walk.ts): every
 * allOf branch must agree, and so must every anyOf / oneOf alternative other than null (so
 * FastAPI's Optional[X], `anyOf: [X, {type: null}]`, reads as an optional X).
 */
const reading = (schema: JsonObject): Reading => {
  const stated = statedType(schema);
  if (stated !== undefined) return stated;
  const readings: Reading[] = [];
  for (const branch of subschemas(schema)) {
    if (branch.position.keyword === 'allOf') readings.push(reading(branch.schema));
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const alternatives = subschemas(schema)
      .filter((branch) => branch.position.keyword === keyword && !onlyNull(branch.schema))
      .map((branch) => reading(branch.schema));
    if (alternatives.length > 0) readings.push(alternatives.includes(undefined) ? null : agreed(alternatives));
  }
  return agreed(readings);
};

/**
 * The Cedar type of an input field, or null when Cedar cannot represent it exactly (a plain
 * `number`, a union of types, a schema without a type): such fields are left out of the context,
 * so a policy that names them is refused when the configuration loads. An amount mark on any
 * branch that applies makes the field a decimal, as canonicalization makes its value one.
 */
export const cedarTypeOf = (schema: JsonObject): CedarType | null => {
  if (anyApplies([schema], (branch) => branch[marks.amount] === true)) return { kind: 'decimal' };
  return reading(schema) ?? null;
};

/** Whether the field may be null, on itself or on any branch: then it is an optional attribute. */
const allowsNull = (schema: JsonObject): boolean =>
  anyApplies(
    [schema],
    (branch) => branch.type === 'null' || (Array.isArray(branch.type) && branch.type.includes('null')),
  );

export const recordOf = (schema: JsonObject): RecordShape => {
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === 'string') : [],
  );
  const attributes = new Map<string, CedarAttribute>();
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  for (const [name, child] of Object.entries(properties)) {
    if (!isJsonObject(child)) continue;
    const type = cedarTypeOf(child);
    const nullable = allowsNull(child);
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

/** The action groups a tool's action is in: its system's (Action::"<system>") and Action::"read" or "write". */
const actionGroupsOf = (tool: Pick<CatalogTool, 'systemKey' | 'access'>): readonly string[] => [
  tool.systemKey,
  tool.access,
];

/**
 * A tool's action as a Cedar entity with its groups as parents: what the schema declares, given
 * with each request, so that a decision needs no schema (validation against it is done once, when
 * the policies are compiled).
 */
export const actionEntityOf = (tool: Pick<CatalogTool, 'name' | 'systemKey' | 'access'>): EntityJson => ({
  uid: { type: 'Action', id: tool.name },
  attrs: {},
  parents: actionGroupsOf(tool).map((group) => ({ type: 'Action', id: group })),
});

export interface CedarModel {
  readonly schema: SchemaJson<string>;
  /** The arguments' Cedar shape of every tool, by tool name. */
  readonly shapes: ReadonlyMap<string, RecordShape>;
}

export const cedarModelOf = (tools: readonly CatalogTool[], systemKeys: readonly string[] = []): CedarModel => {
  const shapes = new Map(tools.map((tool) => [tool.name, recordOf(tool.inputSchema)]));
  const groups = new Set<string>(['read', 'write', ...systemKeys, ...tools.map((tool) => tool.systemKey)]);
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
                memberOf: actionGroupsOf(tool).map((group) => ({ id: group })),
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
