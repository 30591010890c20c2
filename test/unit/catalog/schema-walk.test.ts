// The one schema walker and the rules built on it: every subschema position is visited (and
// nothing that only looks like a schema), and secret, identifier and amount marks count under
// every composition form, in redaction, the catalog's marks, canonicalization, validation and the
// Cedar model alike.
//
// Long: every composition keyword is checked against every rule built on the walker.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validationSchema } from '../../../shared/arguments/validation.js';
import { applyMarks, toJsonSchema } from '../../../shared/catalog/schema-conversion.js';
import {
  listKeywords,
  mapKeywords,
  mapSubschemas,
  memberSchemas,
  singleKeywords,
  subschemas,
} from '../../../shared/catalog/schema-walk.js';
import { isJsonObject, type JsonObject } from '../../../shared/catalog/tool.js';
import { cedarTypeOf, recordOf } from '../../../shared/policy/cedar-schema.js';
import { holdsSecrets, redactSecrets } from '../../../shared/secrets.js';
import { verifies } from '../../support/requirements.js';
import { canonicalize } from '../arguments/fixtures.js';

const noRules = { names: new Set<string>() };

/** `if` / `then` / `else` (a literal `then` key reads as a thenable to the linter). */
const conditional = (
  condition: JsonObject,
  whenTrue: JsonObject | null,
  whenFalse: JsonObject | null = null,
  rest: JsonObject = {},
): JsonObject =>
  Object.fromEntries([
    ...Object.entries(rest),
    ['if', condition],
    ...(whenTrue === null ? [] : [['then', whenTrue]]),
    ...(whenFalse === null ? [] : [['else', whenFalse]]),
  ]);
const secret = 'S3cret-Value-7781';

// --- generated schemas: every keyword that holds subschemas, and look-alikes that do not ---

interface Tree {
  readonly children: readonly { readonly keyword: string; readonly tree: Tree }[];
  readonly decoys: readonly string[];
}

const schemaKeywords = [...singleKeywords, ...listKeywords, ...mapKeywords];
/** Keywords whose values are data, not schemas, even when they look like one. */
const dataKeywords = ['enum', 'const', 'default', 'examples', 'x-extension'];

const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ children: fc.constant([]), decoys: fc.subarray(dataKeywords) }),
    fc.record({
      children: fc.array(fc.record({ keyword: fc.constantFrom(...schemaKeywords), tree: tie('tree') }), {
        maxLength: 4,
      }),
      decoys: fc.subarray(dataKeywords),
    }),
  ),
}));

/** Builds the schema a tree describes, each node tagged with an id; answers the ids placed. */
const build = (shape: Tree, ids: string[]): JsonObject => {
  const schema: JsonObject = { 'x-node': `n${ids.length}` };
  ids.push(`n${ids.length}`);
  // Look-alikes: schema-shaped data, marked secret, that no walk may enter.
  const decoy = { 'x-node': 'decoy', type: 'string', format: 'password', properties: { a: { 'x-node': 'decoy' } } };
  for (const keyword of shape.decoys) {
    schema[keyword] = keyword === 'enum' || keyword === 'examples' ? [decoy] : decoy;
  }
  for (const { keyword, tree: child } of shape.children) {
    if ((singleKeywords as readonly string[]).includes(keyword)) {
      if (schema[keyword] === undefined) schema[keyword] = build(child, ids);
    } else if ((listKeywords as readonly string[]).includes(keyword)) {
      const list = Array.isArray(schema[keyword]) ? schema[keyword] : [true];
      schema[keyword] = [...list, build(child, ids)];
    } else {
      const map = isJsonObject(schema[keyword]) ? schema[keyword] : { plain: true };
      schema[keyword] = { ...map, [`k${Object.keys(map).length}`]: build(child, ids) };
    }
  }
  return schema;
};

const visitedIds = (schema: JsonObject): string[] => [
  String(schema['x-node']),
  ...subschemas(schema).flatMap((child) => visitedIds(child.schema)),
];

describe('the schema walker', () => {
  it(
    verifies(
      'schema.one-walker',
      'visits every subschema position exactly once, and no data that only looks like a schema',
    ),
    () => {
      fc.assert(
        fc.property(tree, (shape) => {
          const ids: string[] = [];
          const schema = build(shape, ids);
          expect(visitedIds(schema).sort()).toEqual([...ids].sort());
          // mapSubschemas reaches the same positions, and copies everything else as it is.
          const seen: string[] = [];
          const tag = (node: JsonObject): JsonObject => {
            seen.push(String(node['x-node']));
            return { ...mapSubschemas(node, tag), 'x-seen': true };
          };
          const tagged = tag(schema);
          expect(seen.sort()).toEqual([...ids].sort());
          expect(JSON.stringify(tagged).match(/"x-seen":true/g)?.length ?? 0).toBe(ids.length);
          const untagged = JSON.parse(JSON.stringify(tagged).replaceAll(',"x-seen":true', ''));
          expect(untagged).toEqual(schema);
        }),
        { numRuns: 300 },
      );
    },
  );

  it(verifies('schema.one-walker', 'finds the schemas of a member through every branch that applies'), () => {
    const schema: JsonObject = {
      allOf: [{ properties: { a: { 'x-node': 1 } } }],
      anyOf: [{ properties: { a: { 'x-node': 2 } } }, { type: 'null' }],
      ...conditional(
        { properties: { a: { 'x-node': 3 } } },
        { patternProperties: { '^a$': { 'x-node': 4 } } },
        { additionalProperties: { 'x-node': 5 } },
      ),
      not: { properties: { a: { 'x-node': 'not' } } },
      properties: { b: { 'x-node': 'b' } },
      prefixItems: [{ 'x-node': 'first' }],
      items: { 'x-node': 'rest' },
      contains: { 'x-node': 'some' },
    };
    const ids = (key: string | number) => memberSchemas([schema], key).map((member) => String(member['x-node']));
    expect(ids('a').sort()).toEqual(['1', '2', '3', '4', '5']);
    expect(ids('b').sort()).toEqual(['5', 'b']);
    expect(ids(0).sort()).toEqual(['first', 'some']);
    expect(ids(3).sort()).toEqual(['rest', 'some']);
  });
});

// --- secrets under every composition form ---

type Step = (inner: JsonObject, value: unknown) => [JsonObject, unknown];

const steps: Record<string, Step> = {
  allOf: (inner, value) => [{ allOf: [{ description: 'other' }, inner] }, value],
  anyOf: (inner, value) => [{ anyOf: [inner, { type: 'null' }] }, value],
  oneOf: (inner, value) => [{ oneOf: [{ type: 'integer' }, inner] }, value],
  ifThen: (inner, value) => [conditional({ minLength: 1 }, inner), value],
  ifElse: (inner, value) => [conditional({ maxLength: 0 }, null, inner), value],
  items: (inner, value) => [{ type: 'array', items: inner }, [value, value]],
  prefixItems: (inner, value) => [{ type: 'array', prefixItems: [{ type: 'integer' }, inner] }, [7, value]],
  properties: (inner, value) => [
    { type: 'object', properties: { plain: { type: 'string' }, field: inner } },
    { plain: 'visible', field: value },
  ],
  additionalProperties: (inner, value) => [
    { type: 'object', properties: { plain: { type: 'string' } }, additionalProperties: inner },
    { plain: 'visible', extra: value },
  ],
  patternProperties: (inner, value) => [
    { type: 'object', properties: { plain: { type: 'string' } }, patternProperties: { '^ref_': inner } },
    { plain: 'visible', ref_1: value },
  ],
};

const leaves: readonly JsonObject[] = [
  { type: 'string', format: 'password' },
  { type: 'string', 'x-sensitive': true },
  { type: 'string', format: 'password', writeOnly: true },
];

/** FastAPI's Optional[SecretStr]. */
const optionalSecretStr: JsonObject = {
  anyOf: [{ type: 'string', format: 'password', writeOnly: true }, { type: 'null' }],
  title: 'Portal Login',
};

describe('secrets under composition', () => {
  it.each([
    ['allOf', { allOf: [{ type: 'string' }, { format: 'password' }] }],
    ['anyOf', { anyOf: [{ type: 'string', format: 'password' }, { type: 'integer' }] }],
    ['oneOf', { oneOf: [{ type: 'integer' }, { type: 'string', 'x-sensitive': true }] }],
    ['FastAPI Optional[SecretStr]', optionalSecretStr],
    ['if / then', conditional({ type: 'string' }, { format: 'password' })],
    ['nested allOf → anyOf → oneOf', { allOf: [{ anyOf: [{ oneOf: [{ format: 'password' }] }, { type: 'null' }] }] }],
  ])(verifies('secrets.composition', 'redacts a field marked secret under %s'), (_form, field) => {
    const schema = { type: 'object', properties: { portal: field, vendor: { type: 'string' } } };
    expect(redactSecrets({ portal: secret, vendor: 'V-1' }, schema, noRules)).toEqual({
      portal: '[REDACTED]',
      vendor: 'V-1',
    });
    expect(redactSecrets({ portal: null, vendor: 'V-1' }, schema, noRules)).toEqual({ portal: null, vendor: 'V-1' });
    expect(holdsSecrets({ portal: secret, vendor: 'V-1' }, schema, noRules)).toBe(true);
  });

  it(
    verifies('secrets.composition', 'redacts secrets in prefixItems and items, and in arrays under allOf / anyOf'),
    () => {
      const schema = {
        type: 'object',
        properties: {
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string', format: 'password' }] },
          keys: { type: 'array', items: { type: 'string', 'x-sensitive': true } },
          tuple: { anyOf: [{ type: 'array', prefixItems: [{ type: 'string' }, optionalSecretStr] }, { type: 'null' }] },
          list: { allOf: [{ type: 'array' }, { items: { oneOf: [{ type: 'string', format: 'password' }] } }] },
        },
      };
      expect(
        redactSecrets(
          { pair: ['user', secret], keys: [secret, secret], tuple: ['user', secret], list: [secret] },
          schema,
          noRules,
        ),
      ).toEqual({
        pair: ['user', '[REDACTED]'],
        keys: ['[REDACTED]', '[REDACTED]'],
        tuple: ['user', '[REDACTED]'],
        list: ['[REDACTED]'],
      });
    },
  );

  it(
    verifies('secrets.composition', 'redacts a secret at the end of any path of composition forms, and nothing else'),
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.constantFrom(...Object.keys(steps)), { minLength: 1, maxLength: 6 }),
          fc.constantFrom(...leaves),
          (path, leaf) => {
            let schema: JsonObject = leaf;
            let value: unknown = secret;
            for (const step of path.toReversed()) [schema, value] = (steps[step] as Step)(schema, value);
            const redacted = JSON.stringify(redactSecrets(value, schema, noRules));
            expect(redacted).not.toContain(secret);
            expect(redacted.match(/visible/g)?.length ?? 0).toBe(JSON.stringify(value).match(/visible/g)?.length ?? 0);
            expect(holdsSecrets(value, schema, noRules)).toBe(true);
            // The catalog's marks put x-sensitive on the very schema that holds the secret.
            expect(
              JSON.stringify(
                redactSecrets(
                  value,
                  applyMarks(schema, { sensitive: new Set(), identifier: new Set(), amount: new Set() }),
                  noRules,
                ),
              ),
            ).not.toContain(secret);
          },
        ),
        { numRuns: 300 },
      );
    },
  );

  it(verifies('secrets.composition', 'redacts answers by a response schema that composes its secrets'), () => {
    const response = toJsonSchema(
      {
        type: 'object',
        properties: {
          id: { type: 'string' },
          session: { anyOf: [{ $comment: 'token', type: 'string', format: 'password' }, { type: 'null' }] },
          logins: {
            type: 'array',
            items: { allOf: [{ type: 'object' }, { properties: { key: { 'x-sensitive': true } } }] },
          },
        },
      },
      { dialect: 'json-schema-2020-12', dropReadOnly: false },
    );
    expect(
      redactSecrets({ id: 'A-1', session: secret, logins: [{ key: secret, label: 'main' }] }, response, noRules),
    ).toEqual({ id: 'A-1', session: '[REDACTED]', logins: [{ key: '[REDACTED]', label: 'main' }] });
  });
});

describe('secrets in the JSON a string carries (contentSchema)', () => {
  const carried = (inner: JsonObject, extra: JsonObject = {}): JsonObject => ({
    type: 'object',
    properties: {
      id: { type: 'string' },
      login: { type: 'string', contentMediaType: 'application/json', contentSchema: inner, ...extra },
    },
  });
  const marked = {
    type: 'object',
    properties: { user: { type: 'string' }, code: { type: 'string', format: 'password' } },
  };
  const text = JSON.stringify({ user: 'u-1', code: secret });

  it.each([
    ['a mark in its contentSchema', carried(marked), text],
    ['a mark under anyOf in its contentSchema', carried({ anyOf: [marked, { type: 'null' }] }), text],
    [
      'a contentSchema on a branch of the field',
      {
        type: 'object',
        properties: { login: { anyOf: [{ type: 'null' }, { type: 'string', contentSchema: marked }] } },
      },
      text,
    ],
    ['a member secret by its name', carried({ type: 'object' }), JSON.stringify({ user: 'u-1', api_key: secret })],
    [
      'only a JSON media type, a member secret by its name',
      { type: 'object', properties: { login: { type: 'string', contentMediaType: 'application/vnd.login+json' } } },
      JSON.stringify({ token: secret }),
    ],
    ['base64 content', carried(marked, { contentEncoding: 'base64' }), Buffer.from(text).toString('base64')],
    ['content that cannot be read, under a contentSchema that marks a secret', carried(marked), `{"code":"${secret}"`],
  ])(verifies('secrets.content-schema', 'hides the string whole for %s'), (_form, schema, login) => {
    const value = { id: 'A-1', login };
    expect(redactSecrets(value, schema, noRules)).toEqual({ id: 'A-1', login: '[REDACTED]' });
    expect(holdsSecrets(value, schema, noRules)).toBe(true);
  });

  it(
    verifies('secrets.content-schema', 'keeps a string whose content holds no secret, and one not said to carry JSON'),
    () => {
      const plain = JSON.stringify({ user: 'u-1', code: null });
      expect(redactSecrets({ login: plain }, carried(marked), noRules)).toEqual({ login: plain });
      expect(redactSecrets({ login: 'not json' }, carried({ type: 'object' }), noRules)).toEqual({ login: 'not json' });
      const untyped = { type: 'object', properties: { login: { type: 'string' } } };
      expect(redactSecrets({ login: text }, untyped, noRules)).toEqual({ login: text });
    },
  );

  it(verifies('secrets.content-schema', "redacts an answer's string by its response schema's contentSchema"), () => {
    const response = toJsonSchema(carried({ type: 'object', properties: { code: { 'x-sensitive': true } } }), {
      dialect: 'openapi-3.0',
      dropReadOnly: false,
    });
    expect(redactSecrets([{ id: 'A-1', login: text }], { type: 'array', items: response }, noRules)).toEqual([
      { id: 'A-1', login: '[REDACTED]' },
    ]);
  });
});

// --- the other rules that read a tool's schema ---

const marksOf = (schema: JsonObject, sensitive: string[] = []) =>
  applyMarks(schema, { sensitive: new Set(sensitive), identifier: new Set(['vendor_ref']), amount: new Set() });

describe('marks under composition, for every rule', () => {
  it(
    verifies(
      'schema.one-walker',
      'the catalog marks secrets, identifiers and amounts on every branch, by format and by listed name',
    ),
    () => {
      const marked = marksOf(
        {
          type: 'object',
          properties: {
            portal: optionalSecretStr,
            vendor_ref: { anyOf: [{ type: 'string' }, { type: 'null' }] },
            total: { oneOf: [{ type: 'string', format: 'decimal' }, { type: 'null' }] },
            hint: { type: 'array', prefixItems: [{ type: 'string' }] },
          },
          additionalProperties: conditional({ type: 'string' }, { format: 'password' }),
        },
        ['hint'],
      );
      expect(marked).toMatchObject({
        properties: {
          portal: { anyOf: [{ 'x-sensitive': true }, { type: 'null' }] },
          vendor_ref: { 'x-identifier': true, anyOf: [{ 'x-identifier': true }, { 'x-identifier': true }] },
          total: { oneOf: [{ 'x-amount': true }, { type: 'null' }] },
          hint: { 'x-sensitive': true, prefixItems: [{ 'x-sensitive': true }] },
        },
        additionalProperties: conditional({ type: 'string' }, { 'x-sensitive': true }),
      });
    },
  );

  it(
    verifies('schema.one-walker', 'canonicalization checks identifiers and reads amounts marked under any branch'),
    () => {
      const schema = marksOf({
        type: 'object',
        properties: {
          refs: { type: 'object', additionalProperties: { type: 'string', format: 'identifier' } },
          code: conditional({ minLength: 1 }, { format: 'identifier' }, null, { type: 'string' }),
          total: { anyOf: [{ type: ['string', 'number'], format: 'decimal' }, { type: 'null' }] },
        },
      });
      const mixed = 'Vابc';
      const refused = canonicalize(schema, JSON.stringify({ refs: { a: mixed }, code: mixed }));
      expect(refused.ok ? [] : refused.errors.map((found) => [found.path, found.code])).toEqual([
        ['/code', 'mixed_script'],
        ['/refs/a', 'mixed_script'],
      ]);
      const read = canonicalize(schema, '{"total": 1500.25}');
      expect(read.ok && read.arguments.value).toEqual({ total: '1500.25' });
      expect(canonicalize(schema, '{"total": null}').ok).toBe(true);
    },
  );

  it(
    verifies(
      'schema.one-walker',
      'the validator sees amounts as strings, keeps an optional amount optional, and leaves data alone',
    ),
    () => {
      expect(validationSchema({ type: ['number', 'null'], 'x-amount': true, minimum: 0 })).toEqual({
        type: ['string', 'null'],
        'x-amount': true,
      });
      const data = { type: 'number', 'x-amount': true, minimum: 1 };
      expect(validationSchema({ enum: [data], default: data, anyOf: [data] })).toEqual({
        enum: [data],
        default: data,
        anyOf: [{ type: 'string', 'x-amount': true }],
      });
    },
  );

  it(verifies('schema.one-walker', 'the Cedar model reads Optional[X] and amounts marked on a branch'), () => {
    expect(cedarTypeOf({ anyOf: [{ type: 'string' }, { type: 'null' }] })).toEqual({ kind: 'string' });
    expect(cedarTypeOf({ oneOf: [{ type: 'integer' }, { type: 'null' }] })).toEqual({ kind: 'long' });
    expect(cedarTypeOf({ allOf: [{ type: 'boolean' }, { description: 'a flag' }] })).toEqual({ kind: 'bool' });
    expect(cedarTypeOf({ anyOf: [{ type: 'string', 'x-amount': true }, { type: 'null' }] })).toEqual({
      kind: 'decimal',
    });
    expect(cedarTypeOf({ anyOf: [{ type: 'string' }, { type: 'integer' }] })).toBeNull();
    expect(cedarTypeOf({ allOf: [{ type: 'string' }, { type: 'integer' }] })).toBeNull();
    expect(cedarTypeOf({ anyOf: [{ type: 'string' }, {}] })).toBeNull();
    // A Cedar set holds no null: a list whose items may be null stays out of the context.
    expect(cedarTypeOf({ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] } })).toBeNull();
    expect(cedarTypeOf({ type: 'array', items: { type: ['string', 'null'] } })).toBeNull();
    const shape = recordOf({
      type: 'object',
      required: ['note', 'total'],
      properties: {
        note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        total: { type: 'string', 'x-amount': true },
      },
    });
    expect(shape.attributes.get('note')).toEqual({ type: { kind: 'string' }, required: false });
    expect(shape.attributes.get('total')).toEqual({ type: { kind: 'decimal' }, required: true });
  });
});
