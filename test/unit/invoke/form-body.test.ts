// Form bodies (application/x-www-form-urlencoded) from an OpenAPI document to the wire: the tool
// the catalog builds, the body written from the canonical arguments by OpenAPI's encoding rules,
// and the values refused because a form could not carry them as the approver sees them.
import { describe, expect, it } from 'vitest';
import { canonicalizeArguments } from '../../../shared/arguments/canonicalize.js';
import { readArguments } from '../../../shared/arguments/strict-json.js';
import { buildSystemTools } from '../../../shared/catalog/build.js';
import { loadOpenApiDocument } from '../../../shared/catalog/openapi-document.js';
import { operationsFromOpenApi } from '../../../shared/catalog/operations.js';
import type { CatalogTool, JsonObject } from '../../../shared/catalog/tool.js';
import { buildRequest } from '../../../shared/invoke/call.js';
import { type FormEncoding, formBodyText, formProblems } from '../../../shared/wire/form-body.js';
import { verifies } from '../../support/requirements.js';
import { aSystem, httpTargetOf } from '../../support/systems.js';
import { withValidator } from '../../support/validators.js';

/** A Stripe-like create: scalars, a free-form map, a list and a nested object as deepObject. */
const customers = {
  openapi: '3.0.0',
  info: { title: 'Payments', version: '1' },
  paths: {
    '/v1/customers': {
      post: {
        operationId: 'PostCustomers',
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                required: ['email'],
                properties: {
                  email: { type: 'string' },
                  balance: { type: 'integer' },
                  metadata: {
                    anyOf: [
                      { type: 'object', additionalProperties: { type: 'string' } },
                      { type: 'string', enum: [''] },
                    ],
                  },
                  expand: { type: 'array', items: { type: 'string' } },
                  address: {
                    type: 'object',
                    properties: {
                      line1: { type: 'string' },
                      city: { type: 'string' },
                      lines: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
                    },
                  },
                  preferred_locales: { type: 'array', items: { type: 'string' } },
                  tax: { type: 'object', properties: { ip: { type: 'string' } } },
                  tags: { type: 'array', items: { type: 'string' } },
                },
              },
              encoding: {
                metadata: { style: 'deepObject', explode: true },
                expand: { style: 'deepObject', explode: true },
                address: { style: 'deepObject', explode: true },
                tags: { explode: false },
              },
            },
          },
        },
        responses: { '200': { description: 'OK' } },
      },
    },
  },
};

const buildCustomerTool = async (): Promise<CatalogTool> => {
  const loaded = await loadOpenApiDocument(JSON.stringify(customers));
  if (!loaded.ok) throw new Error(loaded.messages.join('\n'));
  const built = buildSystemTools(aSystem({ key: 'pay' }), 0, operationsFromOpenApi(loaded.document));
  expect(built.problems).toEqual([]);
  expect(built.warnings).toEqual([]);
  const [tool] = built.tools;
  if (tool === undefined) throw new Error('expected the form operation to be a tool');
  return tool;
};

let built: Promise<CatalogTool> | undefined;
/** Built once: the document's validation and the arguments validator are the slow part. */
const customerTool = (): Promise<CatalogTool> => {
  built ??= buildCustomerTool();
  return built;
};

const context = { executionId: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55', traceparent: '00-1-2-01' };

const validated = new WeakMap<CatalogTool, ReturnType<typeof withValidator<CatalogTool>>>();

/** The canonical arguments of a call, or the refusal, as tools/call would find them. */
const canonical = (tool: CatalogTool, text: string) => {
  const input = readArguments(text, []);
  if (input === null) throw new Error('not JSON');
  const withChecks = validated.get(tool) ?? withValidator(tool);
  validated.set(tool, withChecks);
  return canonicalizeArguments(withChecks, input);
};

describe('a form body from an OpenAPI document', () => {
  it(
    verifies('catalog.form-bodies', "offers the form's fields as the tool's input, with their encodings"),
    async () => {
      const tool = await customerTool();
      expect(tool.name).toBe('pay.post_customers');
      expect(tool.access).toBe('write');
      expect(Object.keys((tool.inputSchema.properties ?? {}) as JsonObject)).toEqual([
        'email',
        'balance',
        'metadata',
        'expand',
        'address',
        'preferred_locales',
        'tax',
        'tags',
      ]);
      expect(tool.inputSchema.required).toEqual(['email']);
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(httpTargetOf(tool).fields).toEqual([
        { field: 'email', in: 'form', name: 'email' },
        { field: 'balance', in: 'form', name: 'balance' },
        { field: 'metadata', in: 'form', name: 'metadata', encoding: { style: 'deepObject', explode: true } },
        { field: 'expand', in: 'form', name: 'expand', encoding: { style: 'deepObject', explode: true } },
        { field: 'address', in: 'form', name: 'address', encoding: { style: 'deepObject', explode: true } },
        { field: 'preferred_locales', in: 'form', name: 'preferred_locales' },
        { field: 'tax', in: 'form', name: 'tax' },
        { field: 'tags', in: 'form', name: 'tags', encoding: { style: 'form', explode: false } },
      ]);
    },
  );
});

describe('the body sent', () => {
  it(
    verifies(
      ['invoke.form-body', 'catalog.form-bodies'],
      'is the form encoding of the canonical arguments, nested as a[b][0]=…, whatever order the agent wrote',
    ),
    async () => {
      const tool = await customerTool();
      const written = [
        '{"email":" ana@example.com","balance":9007199254740993,"tags":["vip","eu"],',
        '"metadata":{"tier":"gold","order":"PO 1"},"expand":["sources","tax"],"tax":{"ip":"1.2.3.4"},',
        '"address":{"line1":"1 Main St","city":"Köln","lines":[{"n":1}]},"preferred_locales":["en","de"]}',
      ].join('');
      const reordered = [
        '{"preferred_locales":["en","de"],"address":{"lines":[{"n":1}],"city":"Köln","line1":"1 Main St"},',
        '"tax":{"ip":"1.2.3.4"},"expand":["sources","tax"],"metadata":{"order":"PO 1","tier":"gold"},',
        '"tags":["vip","eu"],"balance":9007199254740993,"email":"ana@example.com"}',
      ].join('');
      const bodies = [written, reordered].map((text) => {
        const found = canonical(tool, text);
        if (!found.ok) throw new Error(JSON.stringify(found.errors));
        return {
          hash: found.arguments.hash,
          request: buildRequest(httpTargetOf(tool), aSystem(), found.arguments.value, context),
        };
      });
      const [first, second] = bodies;
      expect(first?.request.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(first?.request.method).toBe('POST');
      expect(new URLSearchParams(first?.request.body ?? '').toString()).toBe(first?.request.body);
      expect([...new URLSearchParams(first?.request.body ?? '')]).toEqual([
        ['email', 'ana@example.com'],
        ['balance', '9007199254740993'],
        ['metadata[order]', 'PO 1'],
        ['metadata[tier]', 'gold'],
        ['expand[0]', 'sources'],
        ['expand[1]', 'tax'],
        ['address[city]', 'Köln'],
        ['address[line1]', '1 Main St'],
        ['address[lines][0][n]', '1'],
        ['preferred_locales', 'en'],
        ['preferred_locales', 'de'],
        // An object without a style is its JSON text (OpenAPI's default content type for an object).
        ['tax', '{"ip":"1.2.3.4"}'],
        ['tags', 'vip,eu'],
      ]);
      // The same arguments in another order: the same hash the approver's decision names, the same bytes.
      expect(second?.hash).toBe(first?.hash);
      expect(second?.request.body).toBe(first?.request.body);
    },
  );

  const styles: readonly (readonly [
    label: string,
    value: unknown,
    encoding: FormEncoding | undefined,
    wire: string,
  ])[] = [
    ['a string', 'a b&c=d', undefined, 'f=a+b%26c%3Dd'],
    ['a boolean and no style', true, undefined, 'f=true'],
    ['an array, no style: repeated', ['x', 1], undefined, 'f=x&f=1'],
    ['an object, no style: its JSON text', { b: 1, a: [2] }, undefined, 'f=%7B%22a%22%3A%5B2%5D%2C%22b%22%3A1%7D'],
    ['a JSON content type', 'x', { style: 'json', explode: false }, 'f=%22x%22'],
    ['form, exploded object: its members', { g: 2, r: 1 }, { style: 'form', explode: true }, 'g=2&r=1'],
    ['form, not exploded, array', ['x', 'y'], { style: 'form', explode: false }, 'f=x%2Cy'],
    ['form, not exploded, object', { r: 1, g: 2 }, { style: 'form', explode: false }, 'f=g%2C2%2Cr%2C1'],
    ['spaceDelimited', ['x', 'y'], { style: 'spaceDelimited', explode: false }, 'f=x+y'],
    ['pipeDelimited', ['x', 'y'], { style: 'pipeDelimited', explode: false }, 'f=x%7Cy'],
    ['pipeDelimited, exploded', ['x', 'y'], { style: 'pipeDelimited', explode: true }, 'f=x&f=y'],
    ['deepObject, a scalar', 'x', { style: 'deepObject', explode: true }, 'f=x'],
  ];
  it.each(styles)(verifies('invoke.form-body', 'writes %s by its rule'), (_label, value, encoding, wire) => {
    expect(formBodyText([{ name: 'f', value, encoding }])).toBe(wire);
  });
});

describe('values a form cannot carry', () => {
  const cases: readonly (readonly [label: string, args: JsonObject, path: string, message: RegExp])[] = [
    ['a null in a deepObject', { email: 'a', address: { line1: null } }, '/address/line1', /cannot carry null/],
    ['an empty list', { email: 'a', preferred_locales: [] }, '/preferred_locales', /empty list or object/],
    ['an empty deepObject member', { email: 'a', metadata: {} }, '/metadata', /empty list or object/],
    ['a bracket in a deepObject member name', { email: 'a', metadata: { 'a][b': 'x' } }, '/metadata/a][b', /"\["/],
    ['the delimiter inside a joined item', { email: 'a', tags: ['a,b'] }, '/tags/0', /cannot hold ","/],
  ];
  it.each(cases)(
    verifies('arguments.form-values', 'refuses %s with invalid_format at its path'),
    async (_label, args, path, message) => {
      const tool = await customerTool();
      const found = canonical(tool, JSON.stringify(args));
      expect(found.ok).toBe(false);
      if (found.ok) return;
      expect(found.errors).toContainEqual({ path, code: 'invalid_format', message: expect.stringMatching(message) });
    },
  );

  it(
    verifies(
      'arguments.form-values',
      "refuses an exploded object's member named like another form field, or like another exploded member",
    ),
    () => {
      const exploded = { style: 'form', explode: true } as const;
      const fields = [
        { name: 'color', value: { amount: 1, g: 2, color: 3 }, encoding: exploded },
        { name: 'size', value: { g: 4 }, encoding: exploded },
        { name: 'amount', value: 2, encoding: undefined },
      ];
      // Written, each clash is one name twice: the system could read either value.
      expect(formBodyText(fields)).toBe('amount=1&color=3&g=2&g=4&amount=2');
      const clash = (name: string) =>
        `This member would be sent as the form field "${name}", which the body has already.`;
      expect(formProblems(fields)).toEqual([
        { path: ['color', 'amount'], message: clash('amount') },
        { path: ['size', 'g'], message: clash('g') },
      ]);
    },
  );
});
