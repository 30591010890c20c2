// Operations from their two sources, in one shape: a dereferenced OpenAPI 3.0/3.1 document, and
// the operations an admin describes in the configuration file.
import * as z from 'zod';
import type { AdminOperation } from '../config/schema.js';
import { type FormEncoding, formStyles } from '../wire/form-body.js';
import { isJsonObject, type JsonObject } from './tool.js';

export interface ParameterSpec {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly required: boolean;
  readonly schema: JsonObject;
  readonly description: string | undefined;
}

export interface OperationSpec {
  /** Where the operation comes from, for messages (e.g. "openapi: POST /purchase-orders"). */
  readonly source: string;
  /** Where its problems are reported, relative to its system in the configuration. */
  readonly configPath: readonly PropertyKey[];
  readonly operationId: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly summary: string | undefined;
  readonly description: string | undefined;
  readonly parameters: readonly ParameterSpec[];
  /** The request body, JSON or a form, when there is one the gateway can send. */
  readonly body: BodySpec | undefined;
  /** Why the request body cannot be sent (its media types, or a form field's encoding). */
  readonly unsupportedBody: string | undefined;
  readonly responseSchema: JsonObject | null;
  /** For admin-described operations: the input schema exactly as written. */
  readonly inputSchema: JsonObject | undefined;
  /** OpenAPI 3.0 schemas use `nullable` and boolean exclusive bounds; 3.1 is JSON Schema 2020-12. */
  readonly dialect: 'openapi-3.0' | 'json-schema-2020-12';
}

/** A JSON body, or a form body (application/x-www-form-urlencoded) with its fields' encodings. */
interface BodySpec {
  readonly required: boolean;
  readonly schema: JsonObject;
  /** Present for a form body: the encoding the document gives each field, by name (none: the defaults). */
  readonly form?: Readonly<Record<string, FormEncoding>>;
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

const Parameter = z.looseObject({
  name: z.string(),
  in: z.enum(['path', 'query', 'header', 'cookie']),
  required: z.boolean().optional(),
  description: z.string().optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
});

const Encoding = z.looseObject({
  contentType: z.string().optional(),
  style: z.string().optional(),
  explode: z.boolean().optional(),
  allowReserved: z.boolean().optional(),
});

const MediaTypes = z.record(
  z.string(),
  z.looseObject({
    schema: z.record(z.string(), z.unknown()).optional(),
    encoding: z.record(z.string(), Encoding).optional(),
  }),
);

const Operation = z.looseObject({
  operationId: z.string().optional(),
  summary: z.string().optional(),
  description: z.string().optional(),
  parameters: z.array(Parameter).optional(),
  requestBody: z.looseObject({ required: z.boolean().optional(), content: MediaTypes.optional() }).optional(),
  responses: z.record(z.string(), z.looseObject({ content: MediaTypes.optional() })).optional(),
});

const isJsonMediaType = (type: string): boolean => /^application\/(?:[\w.+-]+\+)?json\b/i.test(type.trim());

const jsonSchemaOf = (content: z.infer<typeof MediaTypes> | undefined): JsonObject | undefined => {
  for (const [type, media] of Object.entries(content ?? {})) {
    if (isJsonMediaType(type)) return media.schema ?? {};
  }
  return undefined;
};

const formMediaType = 'application/x-www-form-urlencoded';

/**
 * A form field's encoding by OpenAPI 3.1's Encoding Object: `style`, `explode` or `allowReserved`
 * given means a style (form unless named; exploded by default only for form); otherwise a JSON
 * `contentType` means the field's JSON text; otherwise the defaults by value (form-body.ts).
 */
const formEncodingOf = (encoding: z.infer<typeof Encoding>): FormEncoding | undefined | string => {
  if (encoding.style !== undefined || encoding.explode !== undefined || encoding.allowReserved !== undefined) {
    const style = formStyles.find((known) => known === (encoding.style ?? 'form'));
    if (style === undefined || style === 'json') return `style ${JSON.stringify(encoding.style)}`;
    return { style, explode: encoding.explode ?? style === 'form' };
  }
  if (encoding.contentType !== undefined && isJsonMediaType(encoding.contentType)) {
    return { style: 'json', explode: false };
  }
  return undefined;
};

/** The request body the gateway sends: JSON first, else a form; or why it cannot send any. */
const bodyOf = (
  requestBody: z.infer<typeof Operation>['requestBody'],
): { body: BodySpec | undefined; unsupported: string | undefined } => {
  const content = requestBody?.content ?? {};
  const required = requestBody?.required ?? false;
  const json = jsonSchemaOf(content);
  if (json !== undefined) return { body: { required, schema: json }, unsupported: undefined };
  const formType = Object.keys(content).find((type) => type.split(';')[0]?.trim().toLowerCase() === formMediaType);
  const media = formType === undefined ? undefined : content[formType];
  if (media === undefined) {
    const types = Object.keys(content);
    return { body: undefined, unsupported: types.length > 0 ? `${types.join(', ')}, not JSON or a form` : undefined };
  }
  const schema = media.schema ?? {};
  if (!isJsonObject(schema.properties) || (schema.type !== undefined && schema.type !== 'object')) {
    return { body: undefined, unsupported: 'a form that does not name its fields (an object with properties)' };
  }
  const form: Record<string, FormEncoding> = {};
  for (const [name, encoding] of Object.entries(media.encoding ?? {})) {
    const found = formEncodingOf(encoding);
    if (typeof found === 'string') {
      return { body: undefined, unsupported: `a form whose field ${JSON.stringify(name)} has ${found}` };
    }
    if (found !== undefined) form[name] = found;
  }
  return { body: { required, schema, form }, unsupported: undefined };
};

const parameterKey = (parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`;

export const operationsFromOpenApi = (document: JsonObject): OperationSpec[] => {
  const dialect =
    typeof document.openapi === 'string' && document.openapi.startsWith('3.0') ? 'openapi-3.0' : 'json-schema-2020-12';
  const paths = isJsonObject(document.paths) ? document.paths : {};
  const operations: OperationSpec[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isJsonObject(item)) continue;
    const shared = z.array(Parameter).safeParse(item.parameters ?? []);
    for (const method of methods) {
      const raw = item[method];
      if (raw === undefined) continue;
      const source = `openapi: ${method.toUpperCase()} ${path}`;
      const operation = Operation.parse(raw);
      // Operation-level parameters override path-level ones with the same name and location.
      const byKey = new Map<string, z.infer<typeof Parameter>>();
      for (const parameter of [...(shared.success ? shared.data : []), ...(operation.parameters ?? [])]) {
        byKey.set(parameterKey(parameter), parameter);
      }
      const { body, unsupported } = bodyOf(operation.requestBody);
      const success = Object.entries(operation.responses ?? {})
        .filter(([status]) => /^2\d\d$/.test(status) || status === '2XX')
        .sort(([left], [right]) => left.localeCompare(right))
        .map(([, response]) => jsonSchemaOf(response.content))
        .find((schema) => schema !== undefined);
      operations.push({
        source,
        configPath: ['openapi'],
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        summary: operation.summary,
        description: operation.description,
        parameters: [...byKey.values()].map((parameter) => ({
          name: parameter.name,
          in: parameter.in,
          required: parameter.in === 'path' ? true : (parameter.required ?? false),
          schema: { ...(parameter.schema ?? {}) },
          description: parameter.description,
        })),
        body,
        unsupportedBody: unsupported,
        responseSchema: success ?? null,
        inputSchema: undefined,
        dialect,
      });
    }
  }
  return operations;
};

const pathParameters = (path: string): string[] =>
  [...path.matchAll(/\{([^}]+)\}/g)].flatMap((match) => match[1] ?? []);

export const operationsFromAdmin = (operations: readonly AdminOperation[], systemIndex: number): OperationSpec[] =>
  operations.map((operation, index) => ({
    source: `systems[${systemIndex}].operations[${index}]`,
    configPath: ['operations', index],
    operationId: operation.id,
    method: operation.method,
    path: operation.path,
    summary: operation.summary,
    description: operation.description,
    parameters: pathParameters(operation.path).map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: {},
      description: undefined,
    })),
    body: undefined,
    unsupportedBody: undefined,
    responseSchema: null,
    inputSchema: operation.input_schema,
    dialect: 'json-schema-2020-12',
  }));
