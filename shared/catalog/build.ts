// Builds a system's tools from its operations: one input schema per tool merging path, query and
// header parameters with the fields of its JSON or form body, marks, annotations and the wire bindings.
//
// Name clashes: a body field keeps its name; a parameter whose name is taken is renamed
// `<location>_<name>` (e.g. query_id); if that is taken too, the operation is refused.
import type { ResolvedOpenApiSystem, ResolvedSystem } from '../config/resolved.js';
import { headerParameterRule } from '../wire/headers.js';
import { normalizeOperationId, shortenedNote, toolName } from './naming.js';
import { isTurnedOff, unknownToolNames } from './offered.js';
import type { OperationSpec, ParameterSpec } from './operations.js';
import { applyMarks, hasReference, type MarkRules, toJsonSchema } from './schema-conversion.js';
import { type Access, type CatalogTool, type FieldBinding, isJsonObject, type JsonObject } from './tool.js';

export interface CatalogProblem {
  /** Path in the configuration the problem belongs to. */
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

export interface SystemTools {
  readonly tools: readonly CatalogTool[];
  /** Tools turned off in the configuration: known to policies, offered to nobody. */
  readonly disabled: readonly CatalogTool[];
  readonly problems: readonly CatalogProblem[];
  /** Operations left out, with why (not fatal). */
  readonly warnings: readonly CatalogProblem[];
}

const readMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
const queryMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

const humanize = (id: string): string => {
  const words = normalizeOperationId(id)
    .replace(/[._-]+/g, ' ')
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

interface InputShape {
  readonly schema: JsonObject;
  readonly fields: FieldBinding[];
}

/**
 * Header and cookie parameters agents cannot fill (the gateway's decision in docs/adr/0016-header-parameters-refused-when-the-catalog-is-built.md):
 * names OpenAPI says to ignore (Accept, Content-Type, Authorization) are ignored; the credential's
 * header, x-request-id and traceparent are the gateway's own; the transport's headers, Cookie,
 * names that are no header name, and cookie parameters are never taken from an agent: an optional
 * one is dropped, a required one leaves its operation out. Dropped and left out are noted.
 */
const screenParameters = (
  operation: OperationSpec,
  credentialHeader: string | null,
): { readonly parameters: ParameterSpec[]; readonly notes: string[]; readonly leftOut: string | null } => {
  const parameters: ParameterSpec[] = [];
  const notes: string[] = [];
  for (const parameter of operation.parameters) {
    const quoted = JSON.stringify(parameter.name);
    if (parameter.in === 'cookie') {
      if (parameter.required) {
        return {
          parameters,
          notes,
          leftOut: `it needs the cookie parameter ${quoted}, which the gateway does not send`,
        };
      }
      notes.push(`the cookie parameter ${quoted} is not offered: the gateway does not send cookies`);
      continue;
    }
    const rule = parameter.in === 'header' ? headerParameterRule(parameter.name, credentialHeader) : 'send';
    if (rule === 'ignored') continue;
    if (rule === 'gateway') {
      notes.push(`the header parameter ${quoted} is not offered: the gateway sends its own`);
      continue;
    }
    if (rule === 'forbidden') {
      if (parameter.required) {
        return {
          parameters,
          notes,
          leftOut: `it needs the header parameter ${quoted}, which the gateway does not take from agents`,
        };
      }
      notes.push(`the header parameter ${quoted} is not offered: the gateway does not take it from agents`);
      continue;
    }
    parameters.push(parameter);
  }
  return { parameters, notes, leftOut: null };
};

const openApiInput = (operation: OperationSpec, convert: (schema: JsonObject) => JsonObject): InputShape | string => {
  const properties: JsonObject = {};
  const required: string[] = [];
  const fields: FieldBinding[] = [];
  let topLevel: JsonObject = {};
  if (operation.body !== undefined) {
    const body = convert(operation.body.schema);
    const objectBody = isJsonObject(body.properties) && (body.type === undefined || body.type === 'object');
    const form = operation.body.form;
    if (objectBody && isJsonObject(body.properties)) {
      for (const [name, child] of Object.entries(body.properties)) {
        properties[name] = child;
        const encoding = form?.[name];
        fields.push({ field: name, in: form === undefined ? 'body' : 'form', name, ...(encoding ? { encoding } : {}) });
      }
      if (operation.body.required && Array.isArray(body.required)) {
        required.push(...body.required.filter((name): name is string => typeof name === 'string'));
      }
      const { properties: _properties, required: _required, type: _type, additionalProperties: _extra, ...rest } = body;
      topLevel = rest;
    } else {
      properties.body = body;
      fields.push({ field: 'body', in: 'whole-body', name: 'body' });
      if (operation.body.required) required.push('body');
    }
  }
  for (const parameter of operation.parameters) {
    // Screened out before (screenParameters); kept so the binding's location is never a cookie.
    if (parameter.in === 'cookie') return `cookie parameter "${parameter.name}" cannot be sent by the gateway`;
    let field = parameter.name;
    if (Object.hasOwn(properties, field)) field = `${parameter.in}_${parameter.name}`;
    if (Object.hasOwn(properties, field)) return `the input fields "${parameter.name}" and "${field}" clash`;
    properties[field] = convert({
      ...parameter.schema,
      ...(parameter.description === undefined || 'description' in parameter.schema
        ? {}
        : { description: parameter.description }),
    });
    fields.push({ field, in: parameter.in, name: parameter.name });
    if (parameter.required) required.push(field);
  }
  return {
    schema: {
      ...topLevel,
      type: 'object',
      properties,
      ...(required.length > 0 ? { required: [...new Set(required)] } : {}),
      additionalProperties: false,
    },
    fields,
  };
};

const adminInput = (operation: OperationSpec): InputShape | string => {
  const schema = toJsonSchema(operation.inputSchema ?? {}, { dialect: 'json-schema-2020-12', dropReadOnly: false });
  if (schema.type !== undefined && schema.type !== 'object') return 'the input schema must describe an object';
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === 'string') : [];
  const pathNames = new Set(operation.parameters.map((parameter) => parameter.name));
  for (const name of pathNames) {
    if (!Object.hasOwn(properties, name)) return `the path segment {${name}} has no input field of that name`;
    if (!required.includes(name)) required.push(name);
  }
  const fields: FieldBinding[] = Object.keys(properties).map((field) => ({
    field,
    in: pathNames.has(field) ? 'path' : queryMethods.has(operation.method) ? 'query' : 'body',
    name: field,
  }));
  return {
    schema: {
      ...schema,
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
    },
    fields,
  };
};

/** The fields a system's configuration marks: secrets, identifiers, amounts. */
export const markRulesOf = (
  system: Pick<ResolvedSystem, 'sensitive_fields' | 'identifier_fields' | 'amount_fields'>,
): MarkRules => ({
  sensitive: new Set(system.sensitive_fields),
  identifier: new Set(system.identifier_fields),
  amount: new Set(system.amount_fields),
});

/** What building a system's tools found: problems refuse the configuration, warnings are noted. */
interface Findings {
  readonly problems: CatalogProblem[];
  readonly warnings: CatalogProblem[];
}

/** The operation's tool name, unique in its system, or null with the problem noted. */
const operationToolName = (
  system: ResolvedOpenApiSystem,
  operation: OperationSpec,
  where: readonly PropertyKey[],
  seen: Map<string, string>,
  found: Findings,
): string | null => {
  const named = toolName(system.key, operation.operationId, operation.method, operation.path);
  if (!named.ok) {
    found.problems.push({ path: where, message: `${operation.source}: ${named.reason}` });
    return null;
  }
  const name = named.name;
  const earlier = seen.get(name);
  if (earlier !== undefined) {
    found.problems.push({
      path: where,
      message: `${operation.source}: the tool name ${name} is also used by ${earlier}`,
    });
    return null;
  }
  seen.set(name, operation.source);
  if (named.fullName !== undefined) {
    found.warnings.push({ path: where, message: `${operation.source}: ${shortenedNote(named.fullName, name)}` });
  }
  return name;
};

/**
 * The input a named operation's tool takes, or null when the operation is left out (a warning:
 * a body or parameter the gateway cannot send, a recursive schema) or refused (a problem).
 */
const operationInput = (
  system: ResolvedOpenApiSystem,
  operation: OperationSpec,
  named: string,
  where: readonly PropertyKey[],
  found: Findings,
): InputShape | null => {
  const leftOut = (why: string): null => {
    found.warnings.push({ path: where, message: `${named} is left out: ${why}` });
    return null;
  };
  if (operation.unsupportedBody !== undefined) return leftOut(`its request body is ${operation.unsupportedBody}`);
  const screened = screenParameters(
    operation,
    system.credentials.type === 'api_key' ? system.credentials.header : null,
  );
  if (screened.leftOut !== null) return leftOut(screened.leftOut);
  for (const note of screened.notes) found.warnings.push({ path: where, message: `${named}: ${note}` });
  const convert = (schema: JsonObject) => toJsonSchema(schema, { dialect: operation.dialect, dropReadOnly: true });
  const shape =
    operation.inputSchema === undefined
      ? openApiInput({ ...operation, parameters: screened.parameters }, convert)
      : adminInput(operation);
  if (typeof shape === 'string') {
    found.problems.push({ path: where, message: `${named}: ${shape}` });
    return null;
  }
  if (hasReference(shape.schema)) return leftOut('its input schema is recursive');
  return shape;
};

/** The tool an operation makes: its texts, marks, annotations and wire binding. */
const operationTool = (
  system: ResolvedOpenApiSystem,
  operation: OperationSpec,
  name: string,
  shape: InputShape,
  rules: MarkRules,
): CatalogTool => {
  const access: Access = system.access[name] ?? (readMethods.has(operation.method) ? 'read' : 'write');
  const operationId = operation.operationId ?? name.slice(system.key.length + 1);
  const title = operation.summary ?? humanize(operationId);
  const responseSchema =
    operation.responseSchema === null || hasReference(operation.responseSchema)
      ? null
      : applyMarks(toJsonSchema(operation.responseSchema, { dialect: operation.dialect, dropReadOnly: false }), rules);
  return {
    name,
    systemKey: system.key,
    operationId,
    title,
    description: operation.description ?? operation.summary ?? `${operation.method} ${operation.path} on ${system.key}`,
    inputSchema: applyMarks(shape.schema, rules),
    annotations: {
      title,
      readOnlyHint: access === 'read',
      destructiveHint: operation.method === 'DELETE',
      idempotentHint: access === 'read' || operation.method === 'PUT' || operation.method === 'DELETE',
      openWorldHint: true,
    },
    access,
    target: { kind: 'http', method: operation.method, path: operation.path, fields: shape.fields },
    responseSchema,
  };
};

export const buildSystemTools = (
  system: ResolvedOpenApiSystem,
  systemIndex: number,
  operations: readonly OperationSpec[],
): SystemTools => {
  const tools: CatalogTool[] = [];
  const disabled: CatalogTool[] = [];
  const found: Findings = { problems: [], warnings: [] };
  const systemPath = ['systems', systemIndex];
  const rules = markRulesOf(system);
  const seen = new Map<string, string>();
  for (const operation of operations) {
    const where = [...systemPath, ...operation.configPath];
    const name = operationToolName(system, operation, where, seen, found);
    if (name === null) continue;
    const shape = operationInput(system, operation, `${operation.source} (${name})`, where, found);
    if (shape === null) continue;
    // A turned-off tool is built all the same (policies may still name it) but never offered.
    (isTurnedOff(system, name) ? disabled : tools).push(operationTool(system, operation, name, shape, rules));
  }
  found.problems.push(...unknownToolNames(system, systemPath, seen));
  return { tools, disabled, problems: found.problems, warnings: found.warnings };
};
