// The catalog built from OpenAPI documents: tool names, parameters, bodies, schemas and marks.
//
// Long: the catalog is built from real OpenAPI documents; each conversion rule (names, parameters,
// bodies, schemas, marks) has its table of cases here.
import { describe, expect, it } from 'vitest';
import { buildSystemTools, type SystemTools } from '../../../shared/catalog/build.js';
import { matchesToolPattern } from '../../../shared/catalog/offered.js';
import { loadOpenApiDocument } from '../../../shared/catalog/openapi-document.js';
import { type OperationSpec, operationsFromAdmin, operationsFromOpenApi } from '../../../shared/catalog/operations.js';
import type { CatalogTool, JsonObject } from '../../../shared/catalog/tool.js';
import type { ResolvedOpenApiSystem } from '../../../shared/config/resolved.js';
import type { AdminOperation } from '../../../shared/config/schema.js';
import { verifies } from '../../support/requirements.js';
import { aSystem, httpTargetOf } from '../../support/systems.js';

/** A resolved system with every field the loader fills, its defaults unless overridden. */
const system = (overrides: Partial<ResolvedOpenApiSystem> = {}): ResolvedOpenApiSystem =>
  aSystem({ base_url: 'http://erp.test', openapi: 'erp/openapi.yaml', ...overrides });

const ok = { '200': { description: 'OK' } } as const;

/** OpenAPI text (JSON is YAML) with the given paths. */
const openApiText = (paths: JsonObject, extra: JsonObject = {}, version = '3.1.0'): string =>
  JSON.stringify({ openapi: version, info: { title: 'Test API', version: '1.0.0' }, paths, ...extra });

/** Operations as the snapshot gets them: the document validated and dereferenced by the parser. */
const operationsOf = async (paths: JsonObject, extra: JsonObject = {}, version = '3.1.0'): Promise<OperationSpec[]> => {
  const loaded = await loadOpenApiDocument(openApiText(paths, extra, version));
  if (!loaded.ok) throw new Error(`expected a valid document:\n${loaded.messages.join('\n')}`);
  return operationsFromOpenApi(loaded.document);
};

const build = async (
  paths: JsonObject,
  overrides: Partial<ResolvedOpenApiSystem> = {},
  options: { extra?: JsonObject; version?: string; index?: number } = {},
): Promise<SystemTools> =>
  buildSystemTools(
    system(overrides),
    options.index ?? 0,
    await operationsOf(paths, options.extra ?? {}, options.version ?? '3.1.0'),
  );

const clean = (built: SystemTools): readonly CatalogTool[] => {
  expect(built.problems).toEqual([]);
  expect(built.warnings).toEqual([]);
  return built.tools;
};

const onlyTool = (built: SystemTools): CatalogTool => {
  const tools = clean(built);
  expect(tools).toHaveLength(1);
  const [tool] = tools;
  if (tool === undefined) throw new Error('expected one tool');
  return tool;
};

const toolNamed = (built: SystemTools, name: string): CatalogTool => {
  const tool = built.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name} among ${built.tools.map((found) => found.name).join(', ')}`);
  return tool;
};

const admin = (
  operation: Partial<AdminOperation> & Pick<AdminOperation, 'id' | 'method' | 'path'>,
): AdminOperation => ({
  description: `Admin operation ${operation.id}.`,
  input_schema: { type: 'object', properties: {} },
  ...operation,
});

const buildAdmin = (
  operations: AdminOperation[],
  overrides: Partial<ResolvedOpenApiSystem> = {},
  index = 0,
): SystemTools =>
  buildSystemTools(
    system({ openapi: undefined, operations, ...overrides }),
    index,
    operationsFromAdmin(operations, index),
  );

describe('input schema: merging parameters and body', () => {
  const addLine = (bodyRequired: boolean): JsonObject => ({
    '/orders/{order_id}/lines': {
      post: {
        operationId: 'addLine',
        parameters: [
          { name: 'order_id', in: 'path', required: true, description: 'The order.', schema: { type: 'string' } },
          { name: 'dry_run', in: 'query', schema: { type: 'boolean' } },
          { name: 'page', in: 'query', required: true, schema: { type: 'integer', description: 'Own description.' } },
          { name: 'X-Correlation-Id', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'X-Trace', in: 'header', required: false, schema: { type: 'string' } },
        ],
        requestBody: {
          required: bodyRequired,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                description: 'A line of an order.',
                required: ['sku', 'quantity'],
                properties: {
                  sku: { type: 'string', maxLength: 20 },
                  quantity: { type: 'integer', minimum: 1 },
                  note: { type: 'string' },
                },
              },
            },
          },
        },
        responses: ok,
      },
    },
  });

  const properties = {
    sku: { type: 'string', maxLength: 20 },
    quantity: { type: 'integer', minimum: 1 },
    note: { type: 'string' },
    order_id: { type: 'string', description: 'The order.' },
    dry_run: { type: 'boolean' },
    page: { type: 'integer', description: 'Own description.' },
    'X-Correlation-Id': { type: 'string' },
    'X-Trace': { type: 'string' },
  };

  it(
    verifies(
      'catalog.input-schema',
      'merges path, query and header parameters with the body fields, refusing unknown fields',
    ),
    async () => {
      const tool = onlyTool(await build(addLine(true)));
      expect(tool.name).toBe('erp.add_line');
      expect(tool.inputSchema).toEqual({
        description: 'A line of an order.',
        type: 'object',
        properties,
        required: ['sku', 'quantity', 'order_id', 'page', 'X-Correlation-Id'],
        additionalProperties: false,
      });
      expect(httpTargetOf(tool).fields).toEqual([
        { field: 'sku', in: 'body', name: 'sku' },
        { field: 'quantity', in: 'body', name: 'quantity' },
        { field: 'note', in: 'body', name: 'note' },
        { field: 'order_id', in: 'path', name: 'order_id' },
        { field: 'dry_run', in: 'query', name: 'dry_run' },
        { field: 'page', in: 'query', name: 'page' },
        { field: 'X-Correlation-Id', in: 'header', name: 'X-Correlation-Id' },
        { field: 'X-Trace', in: 'header', name: 'X-Trace' },
      ]);
      expect(httpTargetOf(tool).method).toBe('POST');
      expect(httpTargetOf(tool).path).toBe('/orders/{order_id}/lines');
    },
  );

  it(
    verifies('catalog.input-schema', "requires the body's required fields only when the body is required"),
    async () => {
      const tool = onlyTool(await build(addLine(false)));
      expect(tool.inputSchema).toEqual({
        description: 'A line of an order.',
        type: 'object',
        properties,
        required: ['order_id', 'page', 'X-Correlation-Id'],
        additionalProperties: false,
      });
    },
  );

  it(verifies('catalog.input-schema', 'an operation without parameters or body takes an empty object'), async () => {
    const tool = onlyTool(await build({ '/ping': { get: { operationId: 'ping', responses: ok } } }));
    expect(tool.inputSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(httpTargetOf(tool).fields).toEqual([]);
  });

  it(
    verifies(
      'catalog.input-schema',
      'path-level parameters are merged, and an operation-level one of the same name and place wins',
    ),
    async () => {
      const tool = onlyTool(
        await build({
          '/vendors/{vendor_id}': {
            parameters: [
              { name: 'vendor_id', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
            ],
            get: {
              operationId: 'vendors.get',
              parameters: [{ name: 'verbose', in: 'query', required: true, schema: { type: 'integer' } }],
              responses: ok,
            },
          },
        }),
      );
      expect(tool.inputSchema).toEqual({
        type: 'object',
        properties: { vendor_id: { type: 'string' }, verbose: { type: 'integer' } },
        required: ['vendor_id', 'verbose'],
        additionalProperties: false,
      });
    },
  );
});

describe('input schema: name clashes', () => {
  const search = (parameters: JsonObject[], bodyProperties: JsonObject): JsonObject => ({
    '/orders/search': {
      post: {
        operationId: 'orders.search',
        parameters,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: bodyProperties } } },
        },
        responses: ok,
      },
    },
  });

  it(
    verifies(
      'catalog.input-schema',
      'renames a query parameter named like a body field query_<name>, keeping its wire name',
    ),
    async () => {
      const tool = onlyTool(
        await build(
          search(
            [{ name: 'status', in: 'query', required: true, schema: { type: 'string', enum: ['open', 'closed'] } }],
            { status: { type: 'integer' } },
          ),
        ),
      );
      expect(tool.inputSchema.properties).toEqual({
        status: { type: 'integer' },
        query_status: { type: 'string', enum: ['open', 'closed'] },
      });
      expect(tool.inputSchema.required).toEqual(['query_status']);
      expect(httpTargetOf(tool).fields).toEqual([
        { field: 'status', in: 'body', name: 'status' },
        { field: 'query_status', in: 'query', name: 'status' },
      ]);
    },
  );

  it(
    verifies(
      'catalog.input-schema',
      'renames a header parameter header_<name>, and a query parameter clashing with a path one',
    ),
    async () => {
      const tool = onlyTool(
        await build({
          '/orders/{id}': {
            put: {
              operationId: 'orders.replace',
              parameters: [
                { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
                { name: 'id', in: 'query', schema: { type: 'string' } },
                { name: 'id', in: 'header', schema: { type: 'string' } },
              ],
              responses: ok,
            },
          },
        }),
      );
      expect(httpTargetOf(tool).fields).toEqual([
        { field: 'id', in: 'path', name: 'id' },
        { field: 'query_id', in: 'query', name: 'id' },
        { field: 'header_id', in: 'header', name: 'id' },
      ]);
      expect(tool.inputSchema.required).toEqual(['id']);
    },
  );

  it(verifies('catalog.input-schema', 'refuses the operation when the renamed field is taken too'), async () => {
    const built = await build(
      search([{ name: 'status', in: 'query', schema: { type: 'string' } }], {
        status: { type: 'string' },
        query_status: { type: 'string' },
      }),
      {},
      { index: 3 },
    );
    expect(built.tools).toEqual([]);
    expect(built.warnings).toEqual([]);
    expect(built.problems).toEqual([
      {
        path: ['systems', 3, 'openapi'],
        message: 'openapi: POST /orders/search (erp.orders.search): the input fields "status" and "query_status" clash',
      },
    ]);
  });

  it(
    verifies('catalog.input-schema', 'does not rename a parameter whose name only matches an Object.prototype member'),
    async () => {
      const tool = onlyTool(
        await build({
          '/things': {
            get: {
              operationId: 'things.list',
              parameters: [
                { name: 'constructor', in: 'query', schema: { type: 'string' } },
                { name: 'toString', in: 'query', schema: { type: 'string' } },
              ],
              responses: ok,
            },
          },
        }),
      );
      expect(httpTargetOf(tool).fields).toEqual([
        { field: 'constructor', in: 'query', name: 'constructor' },
        { field: 'toString', in: 'query', name: 'toString' },
      ]);
    },
  );
});

describe('input schema: bodies that are not objects, cookies, read-only fields', () => {
  it(
    verifies('catalog.input-schema', 'puts an array body under the field "body", sent as the whole body'),
    async () => {
      const tool = onlyTool(
        await build({
          '/tags': {
            put: {
              operationId: 'tags.replace',
              parameters: [{ name: 'body', in: 'query', schema: { type: 'string' } }],
              requestBody: {
                required: true,
                content: {
                  'application/json': { schema: { type: 'array', items: { type: 'string' }, maxItems: 10 } },
                },
              },
              responses: ok,
            },
          },
        }),
      );
      expect(tool.inputSchema).toEqual({
        type: 'object',
        properties: {
          body: { type: 'array', items: { type: 'string' }, maxItems: 10 },
          query_body: { type: 'string' },
        },
        required: ['body'],
        additionalProperties: false,
      });
      expect(httpTargetOf(tool).fields).toEqual([
        { field: 'body', in: 'whole-body', name: 'body' },
        { field: 'query_body', in: 'query', name: 'body' },
      ]);
    },
  );

  it(verifies('catalog.input-schema', 'an optional non-object body is an optional "body" field'), async () => {
    const tool = onlyTool(
      await build({
        '/note': {
          post: {
            operationId: 'note.add',
            requestBody: { content: { 'application/json': { schema: { type: 'string' } } } },
            responses: ok,
          },
        },
      }),
    );
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: { body: { type: 'string' } },
      additionalProperties: false,
    });
    expect(httpTargetOf(tool).fields).toEqual([{ field: 'body', in: 'whole-body', name: 'body' }]);
  });

  it(
    verifies(
      'catalog.header-parameters',
      'leaves out an operation that needs a cookie parameter, with a note; the document stays valid',
    ),
    async () => {
      const paths = {
        '/me': {
          get: {
            operationId: 'me.get',
            parameters: [{ name: 'session', in: 'cookie', required: true, schema: { type: 'string' } }],
            responses: ok,
          },
        },
        '/other': { get: { operationId: 'other.get', responses: ok } },
      };
      const built = await build(paths);
      expect(built.tools.map((tool) => tool.name)).toEqual(['erp.other.get']);
      expect(built.problems).toEqual([]);
      expect(built.warnings).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message:
            'openapi: GET /me (erp.me.get) is left out: it needs the cookie parameter "session", which the gateway does not send',
        },
      ]);
      // disabled_tools may name it (nothing to turn off, and no "there is no tool named" problem).
      const disabled = await build(paths, { disabled_tools: ['erp.me.get'] });
      expect(disabled.problems).toEqual([]);
      expect(disabled.tools.map((tool) => tool.name)).toEqual(['erp.other.get']);
    },
  );

  it(
    verifies('catalog.input-schema', 'leaves read-only body properties out of the input (and out of required)'),
    async () => {
      const tool = onlyTool(
        await build({
          '/vendors': {
            post: {
              operationId: 'vendors.create',
              requestBody: {
                required: true,
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      required: ['id', 'name'],
                      properties: {
                        id: { type: 'string', readOnly: true },
                        name: { type: 'string' },
                        address: {
                          type: 'object',
                          properties: { created_at: { type: 'string', readOnly: true }, city: { type: 'string' } },
                        },
                      },
                    },
                  },
                },
              },
              responses: ok,
            },
          },
        }),
      );
      expect(tool.inputSchema).toEqual({
        type: 'object',
        properties: {
          name: { type: 'string' },
          address: { type: 'object', properties: { city: { type: 'string' } } },
        },
        required: ['name'],
        additionalProperties: false,
      });
      expect(httpTargetOf(tool).fields.map((field) => field.field)).toEqual(['name', 'address']);
    },
  );

  it(
    verifies('catalog.input-schema', 'converts OpenAPI 3.0 schemas: nullable, boolean exclusive bounds, example'),
    async () => {
      const tool = onlyTool(
        await build(
          {
            '/items/{id}': {
              put: {
                operationId: 'items.put',
                parameters: [
                  {
                    name: 'id',
                    in: 'path',
                    required: true,
                    schema: { type: 'integer', minimum: 0, exclusiveMinimum: true, example: 7 },
                  },
                ],
                requestBody: {
                  required: true,
                  content: {
                    'application/json': {
                      schema: {
                        type: 'object',
                        required: ['note'],
                        properties: {
                          note: { type: 'string', nullable: true, example: 'hello' },
                          size: { type: 'number', maximum: 10, exclusiveMaximum: false },
                          ratio: { type: 'number', maximum: 1, exclusiveMaximum: true },
                          kind: { enum: ['a', 'b'], nullable: true },
                          tags: { type: 'array', items: { type: 'string', nullable: true } },
                        },
                      },
                    },
                  },
                },
                responses: ok,
              },
            },
          },
          {},
          { version: '3.0.3' },
        ),
      );
      expect(tool.inputSchema).toEqual({
        type: 'object',
        properties: {
          note: { type: ['string', 'null'], examples: ['hello'] },
          size: { type: 'number', maximum: 10 },
          ratio: { type: 'number', exclusiveMaximum: 1 },
          kind: { enum: ['a', 'b', null] },
          tags: { type: 'array', items: { type: ['string', 'null'] } },
          id: { type: 'integer', exclusiveMinimum: 0, examples: [7] },
        },
        required: ['note', 'id'],
        additionalProperties: false,
      });
    },
  );

  it(
    verifies('catalog.input-schema', 'keeps OpenAPI 3.1 schemas as JSON Schema, only turning example into examples'),
    async () => {
      const tool = onlyTool(
        await build({
          '/items': {
            post: {
              operationId: 'items.create',
              requestBody: {
                required: true,
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: {
                        size: { type: 'number', exclusiveMinimum: 0 },
                        note: { type: ['string', 'null'], example: 'x', examples: ['y'] },
                        code: { type: 'string', example: 'AB-1' },
                      },
                    },
                  },
                },
              },
              responses: ok,
            },
          },
        }),
      );
      expect(tool.inputSchema.properties).toEqual({
        size: { type: 'number', exclusiveMinimum: 0 },
        note: { type: ['string', 'null'], examples: ['y'] },
        code: { type: 'string', examples: ['AB-1'] },
      });
    },
  );
});

describe('admin-described operations', () => {
  it(verifies('catalog.admin-operations', 'binds path fields to the path and the others to the query for GET'), () => {
    const built = buildAdmin([
      admin({
        id: 'shipments.track',
        method: 'GET',
        path: '/shipments/{tracking_number}',
        summary: 'Track a shipment',
        description: 'Where a shipment is.',
        input_schema: {
          type: 'object',
          properties: { tracking_number: { type: 'string', maxLength: 40 }, carrier: { type: 'string' } },
        },
      }),
    ]);
    const tool = onlyTool(built);
    expect(tool).toEqual({
      name: 'erp.shipments.track',
      systemKey: 'erp',
      operationId: 'shipments.track',
      title: 'Track a shipment',
      description: 'Where a shipment is.',
      inputSchema: {
        type: 'object',
        properties: { tracking_number: { type: 'string', maxLength: 40 }, carrier: { type: 'string' } },
        required: ['tracking_number'],
        additionalProperties: false,
      },
      annotations: {
        title: 'Track a shipment',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      },
      access: 'read',
      target: {
        kind: 'http',
        method: 'GET',
        path: '/shipments/{tracking_number}',
        fields: [
          { field: 'tracking_number', in: 'path', name: 'tracking_number' },
          { field: 'carrier', in: 'query', name: 'carrier' },
        ],
      },
      responseSchema: null,
    });
  });

  it(
    verifies('catalog.admin-operations', 'sends the non-path fields as the body for POST and as the query for DELETE'),
    () => {
      const inputSchema = {
        type: 'object',
        required: ['text'],
        properties: { order_id: { type: 'string' }, text: { type: 'string' } },
      };
      const built = buildAdmin([
        admin({ id: 'notes.add', method: 'POST', path: '/orders/{order_id}/notes', input_schema: inputSchema }),
        admin({ id: 'notes.remove', method: 'DELETE', path: '/orders/{order_id}/notes', input_schema: inputSchema }),
        admin({ id: 'notes.replace', method: 'PUT', path: '/orders/{order_id}/notes', input_schema: inputSchema }),
      ]);
      const tools = clean(built);
      expect(tools.map((tool) => [tool.name, httpTargetOf(tool).fields])).toEqual([
        [
          'erp.notes.add',
          [
            { field: 'order_id', in: 'path', name: 'order_id' },
            { field: 'text', in: 'body', name: 'text' },
          ],
        ],
        [
          'erp.notes.remove',
          [
            { field: 'order_id', in: 'path', name: 'order_id' },
            { field: 'text', in: 'query', name: 'text' },
          ],
        ],
        [
          'erp.notes.replace',
          [
            { field: 'order_id', in: 'path', name: 'order_id' },
            { field: 'text', in: 'body', name: 'text' },
          ],
        ],
      ]);
      // The path field is required even though the admin did not list it.
      expect(toolNamed(built, 'erp.notes.add').inputSchema).toEqual({
        type: 'object',
        required: ['text', 'order_id'],
        properties: { order_id: { type: 'string' }, text: { type: 'string' } },
        additionalProperties: false,
      });
    },
  );

  it(
    verifies('catalog.admin-operations', 'refuses fields the admin did not describe, even if the schema allowed them'),
    () => {
      const tool = onlyTool(
        buildAdmin([
          admin({
            id: 'ping',
            method: 'POST',
            path: '/ping',
            input_schema: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: true },
          }),
        ]),
      );
      expect(tool.inputSchema).toEqual({
        type: 'object',
        properties: { n: { type: 'integer' } },
        additionalProperties: false,
      });
      expect(tool.access).toBe('write');
    },
  );

  it(verifies('catalog.admin-operations', 'a {segment} with no input field of that name is a problem'), () => {
    const built = buildAdmin(
      [
        admin({ id: 'ok.get', method: 'GET', path: '/ok' }),
        admin({
          id: 'orders.get',
          method: 'GET',
          path: '/orders/{order_id}',
          input_schema: { type: 'object', properties: { id: { type: 'string' } } },
        }),
      ],
      {},
      1,
    );
    expect(built.tools.map((tool) => tool.name)).toEqual(['erp.ok.get']);
    expect(built.problems).toEqual([
      {
        // Reported at the operation itself, so the message has its line.
        path: ['systems', 1, 'operations', 1],
        message:
          'systems[1].operations[1] (erp.orders.get): the path segment {order_id} has no input field of that name',
      },
    ]);
  });

  it(
    verifies(
      'catalog.admin-operations',
      'a {segment} named like an Object.prototype member still needs its input field',
    ),
    () => {
      const built = buildAdmin([admin({ id: 'odd.get', method: 'GET', path: '/odd/{constructor}' })]);
      expect(built.tools).toEqual([]);
      expect(built.problems).toEqual([
        {
          path: ['systems', 0, 'operations', 0],
          message:
            'systems[0].operations[0] (erp.odd.get): the path segment {constructor} has no input field of that name',
        },
      ]);
    },
  );

  it(verifies('catalog.admin-operations', 'an input schema that is not an object is a problem'), () => {
    const built = buildAdmin([
      admin({
        id: 'list.put',
        method: 'PUT',
        path: '/list',
        input_schema: { type: 'array', items: { type: 'string' } },
      }),
    ]);
    expect(built.tools).toEqual([]);
    expect(built.problems).toEqual([
      {
        path: ['systems', 0, 'operations', 0],
        message: 'systems[0].operations[0] (erp.list.put): the input schema must describe an object',
      },
    ]);
  });

  it(verifies('catalog.admin-operations', 'admin operations become tools beside the OpenAPI ones'), async () => {
    const operations = [
      ...(await operationsOf({ '/vendors': { get: { operationId: 'vendors.list', responses: ok } } })),
      ...operationsFromAdmin([admin({ id: 'vendors.audit', method: 'POST', path: '/vendors/audit' })], 0),
    ];
    const built = buildSystemTools(system(), 0, operations);
    expect(clean(built).map((tool) => [tool.name, tool.access])).toEqual([
      ['erp.vendors.list', 'read'],
      ['erp.vendors.audit', 'write'],
    ]);
  });
});

describe('marks', () => {
  const body = (properties: JsonObject): JsonObject => ({
    '/things': {
      post: {
        operationId: 'things.create',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties } } } },
        responses: ok,
      },
    },
  });

  it(verifies('catalog.marks', 'marks x-sensitive from format: password and from sensitive_fields'), async () => {
    const tool = onlyTool(
      await build(
        body({
          password: { type: 'string', format: 'password' },
          api_key: { type: 'string' },
          already: { type: 'string', 'x-sensitive': true },
          name: { type: 'string' },
        }),
        { sensitive_fields: ['api_key'] },
      ),
    );
    expect(tool.inputSchema.properties).toEqual({
      password: { type: 'string', format: 'password', 'x-sensitive': true },
      api_key: { type: 'string', 'x-sensitive': true },
      already: { type: 'string', 'x-sensitive': true },
      name: { type: 'string' },
    });
  });

  it(
    verifies(
      'catalog.marks',
      'marks x-identifier from the source, format: identifier and identifier_fields, also nested',
    ),
    async () => {
      const tool = onlyTool(
        await build(
          body({
            vendor_id: { type: 'string', 'x-identifier': true, maxLength: 40 },
            reference: { type: 'string', format: 'identifier' },
            sku: { type: 'string' },
            vendor: { type: 'object', properties: { sku: { type: 'string' }, label: { type: 'string' } } },
            lines: {
              type: 'array',
              items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
            },
            codes: { type: 'array', items: { type: 'string' } },
          }),
          { identifier_fields: ['sku', 'codes'] },
        ),
      );
      expect(tool.inputSchema.properties).toEqual({
        vendor_id: { type: 'string', 'x-identifier': true, maxLength: 40 },
        reference: { type: 'string', format: 'identifier', 'x-identifier': true },
        sku: { type: 'string', 'x-identifier': true },
        vendor: {
          type: 'object',
          properties: { sku: { type: 'string', 'x-identifier': true }, label: { type: 'string' } },
        },
        lines: {
          type: 'array',
          items: {
            type: 'object',
            properties: { sku: { type: 'string', 'x-identifier': true }, qty: { type: 'integer' } },
          },
        },
        codes: { type: 'array', items: { type: 'string', 'x-identifier': true }, 'x-identifier': true },
      });
    },
  );

  it(verifies('catalog.marks', 'marks x-amount from format: decimal and amount_fields'), async () => {
    const tool = onlyTool(
      await build(body({ price: { type: ['string', 'number'], format: 'decimal' }, total: { type: 'number' } }), {
        amount_fields: ['total'],
      }),
    );
    expect(tool.inputSchema.properties).toEqual({
      price: { type: ['string', 'number'], format: 'decimal', 'x-amount': true },
      total: { type: 'number', 'x-amount': true },
    });
  });

  it(verifies('catalog.marks', 'marks parameters too, and the answer schema'), async () => {
    const tool = onlyTool(
      await build(
        {
          '/vendors/{vendor_code}': {
            get: {
              operationId: 'vendors.get',
              parameters: [
                { name: 'vendor_code', in: 'path', required: true, schema: { type: 'string' } },
                { name: 'X-Portal-Token', in: 'header', schema: { type: 'string', format: 'password' } },
              ],
              responses: {
                '200': {
                  description: 'The vendor.',
                  content: {
                    'application/json': {
                      schema: {
                        type: 'object',
                        properties: {
                          id: { type: 'string', readOnly: true },
                          api_key: { type: 'string' },
                          limit: { type: 'string', format: 'decimal' },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
        { identifier_fields: ['vendor_code'], sensitive_fields: ['api_key'] },
      ),
    );
    expect(tool.inputSchema.properties).toEqual({
      vendor_code: { type: 'string', 'x-identifier': true },
      'X-Portal-Token': { type: 'string', format: 'password', 'x-sensitive': true },
    });
    // Answers keep their read-only fields.
    expect(tool.responseSchema).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string', readOnly: true },
        api_key: { type: 'string', 'x-sensitive': true },
        limit: { type: 'string', format: 'decimal', 'x-amount': true },
      },
    });
  });
});

describe('annotations, titles and descriptions', () => {
  const verbs = (): JsonObject => ({
    '/things/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: 'things.get', responses: ok },
      put: { operationId: 'things.put', responses: ok },
      post: { operationId: 'things.post', responses: ok },
      delete: { operationId: 'things.delete', responses: ok },
      patch: { operationId: 'things.patch', responses: ok },
      head: { operationId: 'things.head', responses: ok },
      options: { operationId: 'things.options', responses: ok },
    },
  });

  it(
    verifies(['catalog.annotations', 'catalog.access'], 'derives the hints and the access from the method'),
    async () => {
      const tools = clean(await build(verbs()));
      const hints = Object.fromEntries(
        tools.map((tool) => [
          httpTargetOf(tool).method,
          [
            tool.access,
            tool.annotations.readOnlyHint,
            tool.annotations.destructiveHint,
            tool.annotations.idempotentHint,
            tool.annotations.openWorldHint,
          ],
        ]),
      );
      expect(hints).toEqual({
        //       access   readOnly destructive idempotent openWorld
        GET: ['read', true, false, true, true],
        HEAD: ['read', true, false, true, true],
        OPTIONS: ['read', true, false, true, true],
        PUT: ['write', false, false, true, true],
        DELETE: ['write', false, true, true, true],
        POST: ['write', false, false, false, true],
        PATCH: ['write', false, false, false, true],
      });
    },
  );

  it(verifies('catalog.annotations', 'takes the title from the summary, else the humanized operation id'), async () => {
    const built = await build({
      '/orders': {
        get: { operationId: 'orders.list', summary: 'List orders', description: 'All the orders.', responses: ok },
        post: { operationId: 'purchase_orders.create-draft', responses: ok },
      },
    });
    const listed = toolNamed(built, 'erp.orders.list');
    expect(listed.title).toBe('List orders');
    expect(listed.annotations.title).toBe('List orders');
    expect(listed.description).toBe('All the orders.');
    const created = toolNamed(built, 'erp.purchase_orders.create-draft');
    expect(created.title).toBe('Purchase orders create draft');
    expect(created.annotations.title).toBe('Purchase orders create draft');
  });

  it(
    verifies(
      'catalog.annotations',
      'falls back for the title to the humanized id and for the description to the summary, then to "<METHOD> <path> on <key>"',
    ),
    async () => {
      const built = await build(
        {
          '/a': { get: { operationId: 'a.get', summary: 'Read A', responses: ok } },
          '/b/{id}': {
            delete: {
              parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
              responses: ok,
            },
          },
        },
        { key: 'crm' },
      );
      expect(clean(built).map((tool) => [tool.name, tool.operationId, tool.title, tool.description])).toEqual([
        ['crm.a.get', 'a.get', 'Read A', 'Read A'],
        ['crm.delete_b_by_id', 'delete_b_by_id', 'Delete b by id', 'DELETE /b/{id} on crm'],
      ]);
      expect(toolNamed(built, 'crm.delete_b_by_id').systemKey).toBe('crm');
    },
  );

  it(verifies('catalog.annotations', 'keeps the operation id as the source wrote it'), async () => {
    const tool = onlyTool(await build({ '/po': { post: { operationId: 'createPurchaseOrder', responses: ok } } }));
    expect(tool.name).toBe('erp.create_purchase_order');
    expect(tool.operationId).toBe('createPurchaseOrder');
  });
});

describe('access overrides', () => {
  it(
    verifies(['catalog.access', 'catalog.annotations'], 'a POST search made read is a read with readOnlyHint'),
    async () => {
      const built = await build(
        {
          '/orders/search': { post: { operationId: 'orders.search', responses: ok } },
          '/orders/export': { get: { operationId: 'orders.export', responses: ok } },
          '/orders/purge': { post: { operationId: 'orders.purge', responses: ok } },
        },
        { access: { 'erp.orders.search': 'read', 'erp.orders.export': 'write' } },
      );
      const search = toolNamed(built, 'erp.orders.search');
      expect(search.access).toBe('read');
      expect(search.annotations).toEqual({
        title: 'Orders search',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      });
      const exported = toolNamed(built, 'erp.orders.export');
      expect(exported.access).toBe('write');
      expect(exported.annotations.readOnlyHint).toBe(false);
      expect(toolNamed(built, 'erp.orders.purge').access).toBe('write');
      expect(built.problems).toEqual([]);
    },
  );
});

describe('enabled tools: the tools a system offers, by pattern', () => {
  const paths = {
    '/repos/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: 'repos.get', responses: ok },
      delete: { operationId: 'repos.delete', responses: ok },
    },
    '/issues': {
      get: { operationId: 'issues.list', responses: ok },
      post: { operationId: 'issues.create', responses: ok },
    },
    '/gists': { get: { operationId: 'gists.list', responses: ok } },
  };

  it(
    verifies('catalog.enabled-tools', 'offers only the tools a pattern matches; the others are built, turned off'),
    async () => {
      const built = await build(paths, { enabled_tools: ['erp.repos.*', 'erp.*.list'] });
      expect(clean(built).map((tool) => tool.name)).toEqual([
        'erp.repos.get',
        'erp.repos.delete',
        'erp.issues.list',
        'erp.gists.list',
      ]);
      expect(built.disabled.map((tool) => tool.name)).toEqual(['erp.issues.create']);
    },
  );

  it(verifies('catalog.enabled-tools', 'disabled_tools still turns off a tool a pattern matches'), async () => {
    const built = await build(paths, { enabled_tools: ['erp.repos.*'], disabled_tools: ['erp.repos.delete'] });
    expect(clean(built).map((tool) => tool.name)).toEqual(['erp.repos.get']);
  });

  it(
    verifies('catalog.enabled-tools', 'a pattern matching no tool is a problem at systems[i].enabled_tools[j]'),
    async () => {
      const built = await build(
        paths,
        { enabled_tools: ['erp.repos.*', 'erp.pulls.*', 'Erp.gists.list'] },
        { index: 1 },
      );
      expect(built.problems).toEqual([
        { path: ['systems', 1, 'enabled_tools', 1], message: 'no tool matches erp.pulls.*' },
        { path: ['systems', 1, 'enabled_tools', 2], message: 'no tool matches Erp.gists.list' },
      ]);
    },
  );

  const patterns: readonly (readonly [pattern: string, name: string, matches: boolean])[] = [
    ['erp.repos.get', 'erp.repos.get', true],
    ['erp.repos.get', 'erp.repos.get_all', false],
    ['erp.*', 'erp.repos.get', true],
    ['*.get', 'erp.repos.get', true],
    ['erp.*.get', 'erp.repos.get', true],
    ['erp.*.get', 'erp.get', false],
    ['*', 'erp.anything', true],
    ['erp.*repos*', 'erp.list_repos_for_org', true],
    ['erp.r*s*s', 'erp.repos', false],
    ['erp.r*o*s', 'erp.repos', true],
    // Only "*" is special: "." and "?" are themselves.
    ['erp?repos', 'erp.repos', false],
    ['erp.repo.', 'erp.repos', false],
  ];
  it.each(patterns)(verifies('catalog.enabled-tools', '%j matches %j: %s'), (pattern, name, matches) => {
    expect(matchesToolPattern(pattern, name)).toBe(matches);
  });
});

describe('disabled tools and unknown names', () => {
  const paths = {
    '/vendors/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: 'vendors.get', responses: ok },
      delete: { operationId: 'vendors.delete', responses: ok },
    },
  };

  it(verifies('catalog.disabled-tools', 'does not build a disabled tool'), async () => {
    const built = await build(paths, { disabled_tools: ['erp.vendors.delete'] });
    expect(clean(built).map((tool) => tool.name)).toEqual(['erp.vendors.get']);
  });

  it(verifies('catalog.disabled-tools', 'a disabled tool can be overridden without a problem'), async () => {
    const built = await build(paths, {
      disabled_tools: ['erp.vendors.delete'],
      access: { 'erp.vendors.delete': 'read' },
    });
    expect(clean(built).map((tool) => tool.name)).toEqual(['erp.vendors.get']);
  });

  it(
    verifies('catalog.disabled-tools', 'a disabled name matching no tool is a problem at systems[i].disabled_tools[j]'),
    async () => {
      const built = await build(paths, { disabled_tools: ['erp.vendors.delete', 'erp.vendors.remove'] }, { index: 2 });
      expect(built.tools.map((tool) => tool.name)).toEqual(['erp.vendors.get']);
      expect(built.problems).toEqual([
        { path: ['systems', 2, 'disabled_tools', 1], message: 'there is no tool named erp.vendors.remove' },
      ]);
    },
  );

  it(
    verifies(
      ['catalog.disabled-tools', 'catalog.access'],
      'an access name matching no tool is a problem at systems[i].access.<name>',
    ),
    async () => {
      const built = await build(
        paths,
        { access: { 'erp.vendors.get': 'read', 'vendors.delete': 'read' } },
        { index: 1 },
      );
      expect(built.problems).toEqual([
        { path: ['systems', 1, 'access', 'vendors.delete'], message: 'there is no tool named vendors.delete' },
      ]);
    },
  );
});

describe('tool names', () => {
  it(
    verifies('catalog.tool-naming', 'refuses a second operation whose name normalizes to one already used'),
    async () => {
      const built = await build({
        '/a': { post: { operationId: 'createOrder', responses: ok } },
        '/b': { post: { operationId: 'create_order', responses: ok } },
      });
      expect(built.tools.map((tool) => [tool.name, httpTargetOf(tool).path])).toEqual([['erp.create_order', '/a']]);
      expect(built.problems).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message: 'openapi: POST /b: the tool name erp.create_order is also used by openapi: POST /a',
        },
      ]);
    },
  );

  it(
    verifies(
      ['catalog.tool-naming', 'catalog.admin-operations'],
      'refuses an admin operation named like an OpenAPI one',
    ),
    async () => {
      const operations = [
        ...(await operationsOf({ '/a': { post: { operationId: 'Orders.Create', responses: ok } } })),
        ...operationsFromAdmin([admin({ id: 'orders.create', method: 'POST', path: '/a2' })], 0),
      ];
      const built = buildSystemTools(system(), 0, operations);
      expect(built.tools.map((tool) => httpTargetOf(tool).path)).toEqual(['/a']);
      expect(built.problems).toEqual([
        {
          path: ['systems', 0, 'operations', 0],
          message: 'systems[0].operations[0]: the tool name erp.orders.create is also used by openapi: POST /a',
        },
      ]);
    },
  );

  it(verifies('catalog.tool-naming', 'an operation id with no usable character is a problem'), async () => {
    const built = await build({ '/a': { get: { operationId: '¿¿', responses: ok } } });
    expect(built.tools).toEqual([]);
    expect(built.problems).toEqual([
      { path: ['systems', 0, 'openapi'], message: 'openapi: GET /a: the operation id "¿¿" has no usable character' },
    ]);
  });

  it(
    verifies('catalog.tool-name-length', 'a name over 64 characters is offered shortened, with a note naming both'),
    async () => {
      const id = 'x'.repeat(61);
      const built = await build({ '/a': { get: { operationId: id, responses: ok } } });
      const [tool] = built.tools;
      expect(tool?.name).toMatch(/^erp\.x{51}_[0-9a-f]{8}$/);
      expect(built.problems).toEqual([]);
      expect(built.warnings).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message: `openapi: GET /a: offered as ${tool?.name}: its full name erp.${id} is longer than 64 characters`,
        },
      ]);
    },
  );
});

describe('operations left out with a warning', () => {
  it(
    verifies(
      ['catalog.input-schema', 'catalog.form-bodies'],
      'leaves out an operation whose body is neither JSON nor a form naming its fields, with a warning and no problem',
    ),
    async () => {
      const built = await build({
        '/upload': {
          post: {
            operationId: 'upload',
            requestBody: {
              content: {
                'multipart/form-data': { schema: { type: 'object' } },
                'text/plain': { schema: { type: 'string' } },
              },
            },
            responses: ok,
          },
        },
        '/form': {
          post: {
            operationId: 'form',
            requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
            responses: ok,
          },
        },
        '/json': {
          post: {
            operationId: 'json',
            requestBody: {
              content: {
                'text/plain': { schema: { type: 'string' } },
                'application/merge-patch+json; charset=utf-8': {
                  schema: { type: 'object', properties: { a: { type: 'string' } } },
                },
              },
            },
            responses: ok,
          },
        },
      });
      expect(built.tools.map((tool) => tool.name)).toEqual(['erp.json']);
      expect(built.problems).toEqual([]);
      expect(built.warnings).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message:
            'openapi: POST /upload (erp.upload) is left out: its request body is multipart/form-data, text/plain, not JSON or a form',
        },
        {
          path: ['systems', 0, 'openapi'],
          message:
            'openapi: POST /form (erp.form) is left out: its request body is a form that does not name its fields (an object with properties)',
        },
      ]);
    },
  );

  const recursive = {
    components: {
      schemas: {
        Node: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
          },
        },
      },
    },
  };

  it(
    verifies('catalog.input-schema', 'leaves out an operation whose input schema is recursive, with a warning'),
    async () => {
      const built = await build(
        {
          '/trees': {
            post: {
              operationId: 'makeTree',
              requestBody: {
                required: true,
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: { label: { type: 'string' }, root: { $ref: '#/components/schemas/Node' } },
                    },
                  },
                },
              },
              responses: ok,
            },
          },
          '/forest': {
            put: {
              operationId: 'forest.put',
              requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
              responses: ok,
            },
          },
        },
        {},
        { extra: recursive },
      );
      expect(built.tools).toEqual([]);
      expect(built.problems).toEqual([]);
      expect(built.warnings).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message: 'openapi: POST /trees (erp.make_tree) is left out: its input schema is recursive',
        },
        {
          path: ['systems', 0, 'openapi'],
          message: 'openapi: PUT /forest (erp.forest.put) is left out: its input schema is recursive',
        },
      ]);
    },
  );

  it(
    verifies('catalog.input-schema', 'keeps an operation whose answer is recursive, without an answer schema'),
    async () => {
      const tool = onlyTool(
        await build(
          {
            '/tree': {
              get: {
                operationId: 'tree.get',
                responses: {
                  '200': {
                    description: 'The tree.',
                    content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
                  },
                },
              },
            },
          },
          {},
          { extra: recursive },
        ),
      );
      expect(tool.name).toBe('erp.tree.get');
      expect(tool.responseSchema).toBeNull();
    },
  );
});

describe('header and cookie parameters the gateway will not take from agents', () => {
  const withParameters = (parameters: JsonObject[]): JsonObject => ({
    '/orders': { get: { operationId: 'orders.list', parameters, responses: ok } },
    '/other': { get: { operationId: 'other.get', responses: ok } },
  });
  const header = (name: string, required: boolean): JsonObject => ({
    name,
    in: 'header',
    required,
    schema: { type: 'string' },
  });
  const keep = header('X-Tenant', false);

  it.each([
    'Host',
    'Connection',
    'Keep-Alive',
    'Proxy-Authenticate',
    'Proxy-Authorization',
    'Proxy-Connection',
    'TE',
    'Trailer',
    'Transfer-Encoding',
    'Upgrade',
    'Content-Length',
    'cookie',
    'X Tenant',
  ])(
    verifies('catalog.header-parameters', 'leaves out an operation whose required header parameter is %s, with a note'),
    async (name) => {
      const built = await build(withParameters([keep, header(name, true)]));
      expect(built.problems).toEqual([]);
      expect(built.tools.map((tool) => tool.name)).toEqual(['erp.other.get']);
      expect(built.warnings).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message: `openapi: GET /orders (erp.orders.list) is left out: it needs the header parameter "${name}", which the gateway does not take from agents`,
        },
      ]);
    },
  );

  it.each(['Host', 'connection', 'TRANSFER-ENCODING', 'Upgrade', 'Content-Length', 'Cookie'])(
    verifies('catalog.header-parameters', 'drops an optional header parameter %s from the input, with a note'),
    async (name) => {
      const built = await build(withParameters([keep, header(name, false)]));
      expect(built.problems).toEqual([]);
      const tool = toolNamed(built, 'erp.orders.list');
      expect(tool.inputSchema).toEqual({
        type: 'object',
        properties: { 'X-Tenant': { type: 'string' } },
        additionalProperties: false,
      });
      expect(httpTargetOf(tool).fields).toEqual([{ field: 'X-Tenant', in: 'header', name: 'X-Tenant' }]);
      expect(built.warnings).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message: `openapi: GET /orders (erp.orders.list): the header parameter "${name}" is not offered: the gateway does not take it from agents`,
        },
      ]);
    },
  );

  it.each(['Forwarded', 'X-Forwarded-For', 'x-forwarded-host', 'X-Forwarded-Proto', 'X-Real-IP'])(
    verifies('catalog.forwarding-headers', 'withholds the forwarding header %s from agents, like the hop-by-hop ones'),
    async (name) => {
      const required = await build(withParameters([keep, header(name, true)]));
      expect(required.tools.map((tool) => tool.name)).toEqual(['erp.other.get']);
      expect(required.warnings.map((warning) => warning.message)).toEqual([
        `openapi: GET /orders (erp.orders.list) is left out: it needs the header parameter "${name}", which the gateway does not take from agents`,
      ]);
      const optional = await build(withParameters([keep, header(name, false)]));
      const tool = toolNamed(optional, 'erp.orders.list');
      expect(Object.keys(tool.inputSchema.properties as JsonObject)).toEqual(['X-Tenant']);
      expect(httpTargetOf(tool).fields).toEqual([{ field: 'X-Tenant', in: 'header', name: 'X-Tenant' }]);
    },
  );

  it.each(['Accept', 'Content-Type', 'authorization'])(
    verifies('catalog.header-parameters', 'ignores a header parameter named %s, as OpenAPI says (no field, no note)'),
    async (name) => {
      const built = await build(withParameters([keep, header(name, true)]));
      const tool = toolNamed(built, 'erp.orders.list');
      expect(built.warnings).toEqual([]);
      expect(built.problems).toEqual([]);
      expect(httpTargetOf(tool).fields).toEqual([{ field: 'X-Tenant', in: 'header', name: 'X-Tenant' }]);
      expect(Object.keys(tool.inputSchema.properties as JsonObject)).toEqual(['X-Tenant']);
    },
  );

  it.each<[string, string, Partial<ResolvedOpenApiSystem>]>([
    ['the api key header', 'API_KEY', { credentials: { type: 'api_key', header: 'api_key', value: 'k' } }],
    ['x-request-id', 'X-Request-Id', {}],
    ['traceparent', 'traceparent', {}],
    ['the approval receipt', 'Approval-Receipt', {}],
  ])(
    verifies('catalog.header-parameters', 'does not ask agents for %s, which the gateway sends itself (a note)'),
    async (_label, name, overrides) => {
      const built = await build(withParameters([keep, header(name, true)]), overrides);
      expect(built.problems).toEqual([]);
      const tool = toolNamed(built, 'erp.orders.list');
      expect(httpTargetOf(tool).fields).toEqual([{ field: 'X-Tenant', in: 'header', name: 'X-Tenant' }]);
      expect(tool.inputSchema.required).toBeUndefined();
      expect(built.warnings).toEqual([
        {
          path: ['systems', 0, 'openapi'],
          message: `openapi: GET /orders (erp.orders.list): the header parameter "${name}" is not offered: the gateway sends its own`,
        },
      ]);
    },
  );

  it(verifies('catalog.header-parameters', 'drops an optional cookie parameter with a note'), async () => {
    const built = await build(
      withParameters([keep, { name: 'theme', in: 'cookie', required: false, schema: { type: 'string' } }]),
    );
    expect(built.problems).toEqual([]);
    expect(httpTargetOf(toolNamed(built, 'erp.orders.list')).fields).toEqual([
      { field: 'X-Tenant', in: 'header', name: 'X-Tenant' },
    ]);
    expect(built.warnings).toEqual([
      {
        path: ['systems', 0, 'openapi'],
        message:
          'openapi: GET /orders (erp.orders.list): the cookie parameter "theme" is not offered: the gateway does not send cookies',
      },
    ]);
  });
});
