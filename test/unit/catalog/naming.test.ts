import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeOperationId, operationIdFromRoute, toolName } from '../../../shared/catalog/naming.js';
import { isJsonObject } from '../../../shared/catalog/tool.js';
import { verifies } from '../../support/requirements.js';

describe(verifies('catalog.tool-naming', 'normalizeOperationId'), () => {
  const cases: readonly (readonly [input: string, expected: string])[] = [
    // camelCase and PascalCase words split at a lowercase-or-digit → uppercase boundary
    ['createPurchaseOrder', 'create_purchase_order'],
    ['CreatePurchaseOrder', 'create_purchase_order'],
    ['getV2Items', 'get_v2_items'],
    // a run of capitals ends before the capital that starts the next word
    ['getHTTPServerStatus', 'get_http_server_status'],
    ['parseXMLToJSON', 'parse_xml_to_json'],
    ['HTTPServer', 'http_server'],
    ['getID', 'get_id'],
    // already normalized ids, dots and hyphens kept
    ['purchase_orders.create', 'purchase_orders.create'],
    ['vendors.get', 'vendors.get'],
    ['list-orders', 'list-orders'],
    ['a..b', 'a..b'],
    // other characters: each run becomes one "_"
    ['foo bar/baz', 'foo_bar_baz'],
    ['orders  //  list', 'orders_list'],
    ['café au lait', 'caf_au_lait'],
    ['x—y', 'x_y'],
    ['get:order#1', 'get_order_1'],
    ['UPPER', 'upper'],
    // "_", "." and "-" at either end dropped
    ['__foo__', 'foo'],
    ['-foo-', 'foo'],
    ['.foo.', 'foo'],
    ['  spaced out  ', 'spaced_out'],
    ['/orders/', 'orders'],
    ['_.-mixed-._', 'mixed'],
    // "_" around "." dropped (but "-" around "_" kept)
    ['a_.b', 'a.b'],
    ['a._b', 'a.b'],
    ['a_._b', 'a.b'],
    ['a . b', 'a.b'],
    ['Orders . Create', 'orders.create'],
    ['a_-_b', 'a_-_b'],
    // nothing usable
    ['!!!', ''],
    ['ÄÖÜ', ''],
    ['', ''],
    ['___', ''],
  ];
  it.each(cases)(verifies('catalog.tool-naming', '%j → %j'), (input, expected) => {
    expect(normalizeOperationId(input)).toBe(expected);
  });
});

describe(verifies('catalog.tool-naming', 'operationIdFromRoute'), () => {
  const cases: readonly (readonly [method: string, path: string, expected: string])[] = [
    ['GET', '/vendors', 'get_vendors'],
    ['get', '/vendors', 'get_vendors'],
    ['DELETE', '/vendors/{vendor_id}', 'delete_vendors_by_vendor_id'],
    ['DELETE', '/vendors/{vendorId}', 'delete_vendors_by_vendor_id'],
    ['POST', '/purchase_orders/{id}/cancel', 'post_purchase_orders_by_id_cancel'],
    ['GET', '/a/{x}/{y}', 'get_a_by_x_by_y'],
    ['POST', '/a//b/', 'post_a_b'],
    ['GET', '/', 'get'],
    ['PUT', '/v1.0/items', 'put_v1.0_items'],
  ];
  it.each(cases)(verifies('catalog.tool-naming', '%s %s → %j'), (method, path, expected) => {
    expect(operationIdFromRoute(method, path)).toBe(expected);
  });

  it(
    verifies(
      'catalog.tool-naming',
      'follows the documented example: GET /purchase-orders/{id}/lines → get_purchase_orders_by_id_lines',
    ),
    () => {
      // shared/catalog/naming.ts documents exactly this example in its header comment.
      expect(operationIdFromRoute('GET', '/purchase-orders/{id}/lines')).toBe('get_purchase_orders_by_id_lines');
    },
  );
});

describe(verifies('catalog.tool-naming', 'toolName'), () => {
  it(verifies('catalog.tool-naming', 'prefixes the normalized id with the system key'), () => {
    expect(toolName('erp', 'createPurchaseOrder', 'POST', '/purchase-orders')).toEqual({
      ok: true,
      name: 'erp.create_purchase_order',
    });
    expect(toolName('erp', 'purchase_orders.create', 'POST', '/purchase-orders')).toEqual({
      ok: true,
      name: 'erp.purchase_orders.create',
    });
  });

  it(verifies('catalog.tool-naming', 'names an operation without an id from its method and route'), () => {
    expect(toolName('erp', undefined, 'GET', '/vendors/{vendor_id}')).toEqual({
      ok: true,
      name: 'erp.get_vendors_by_vendor_id',
    });
    expect(toolName('crm', undefined, 'POST', '/')).toEqual({ ok: true, name: 'crm.post' });
  });

  it(verifies('catalog.tool-naming', 'prefers the operation id over the route when both are there'), () => {
    expect(toolName('erp', 'vendors.get', 'GET', '/vendors/{vendor_id}')).toEqual({
      ok: true,
      name: 'erp.vendors.get',
    });
  });

  it(verifies('catalog.tool-naming', 'refuses an id made only of characters that are not kept'), () => {
    expect(toolName('erp', '!!!', 'GET', '/x')).toEqual({
      ok: false,
      reason: 'the operation id "!!!" has no usable character',
    });
    expect(toolName('erp', '', 'GET', '/x')).toEqual({
      ok: false,
      reason: 'the operation id "" has no usable character',
    });
    expect(toolName('erp', '__..__', 'GET', '/x')).toEqual({
      ok: false,
      reason: 'the operation id "__..__" has no usable character',
    });
  });

  it(verifies('catalog.tool-name-length', 'keeps a name of exactly 64 characters and shortens one of 65 to 64'), () => {
    const longest = 'a'.repeat(60); // "erp." + 60 = 64
    expect(toolName('erp', longest, 'GET', '/x')).toEqual({ ok: true, name: `erp.${longest}` });
    const tooLong = 'a'.repeat(61);
    const result = toolName('erp', tooLong, 'GET', '/x');
    expect(result).toEqual({
      ok: true,
      name: expect.stringMatching(/^erp\.a{51}_[0-9a-f]{8}$/),
      fullName: `erp.${tooLong}`,
    });
    // The same on every load: the hash is of the whole name.
    expect(toolName('erp', tooLong, 'GET', '/x')).toEqual(result);
  });

  it(verifies('catalog.tool-name-length', 'measures the length after normalization'), () => {
    // 22 words "aB" → "a_b": 22 × 3 = 66 characters once split; before splitting it is 44.
    const result = toolName('erp', 'aB'.repeat(22), 'GET', '/x');
    expect(result.ok && result.fullName).toBe(`erp.${'a_b'.repeat(22)}`);
  });

  it(verifies('catalog.tool-name-length', 'drops "_", "." and "-" before the hash, so the name reads cleanly'), () => {
    // The 55th character falls on the "_" after "erp.", 50 letters.
    const result = toolName('erp', `${'b'.repeat(50)}_${'c'.repeat(20)}`, 'GET', '/x');
    expect(result.ok && result.name).toMatch(/^erp\.b{50}_[0-9a-f]{8}$/);
  });
});

describe(verifies('catalog.tool-naming', 'properties of the rule'), () => {
  const junk = fc.constantFrom(...'aAzZ09_.-/ {}é—ÄİK\u212a\u0000\t'.split(''));
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 160 }),
    fc.string({ unit: junk, maxLength: 160 }),
    fc.string({ unit: 'grapheme-ascii', maxLength: 200 }),
  );
  const allowed = /^[a-z0-9][a-z0-9_.-]*$/;

  it(
    verifies(
      'catalog.tool-naming',
      'a name, when given, is "<key>." then lowercase allowed characters, at most 64 long',
    ),
    () => {
      fc.assert(
        fc.property(text, (id) => {
          const result = toolName('erp', id, 'GET', '/x');
          if (!result.ok) return;
          expect(result.name.startsWith('erp.')).toBe(true);
          const rest = result.name.slice('erp.'.length);
          expect(rest).toMatch(allowed);
          expect(rest).not.toMatch(/[_.-]$/);
          expect(rest).not.toMatch(/_\.|\._/);
          expect(result.name.length).toBeLessThanOrEqual(64);
          // The whole normalized id, or its start and a hash when the name was too long.
          if (result.fullName === undefined) expect(rest).toBe(normalizeOperationId(id));
          else expect(result.fullName).toBe(`erp.${normalizeOperationId(id)}`);
        }),
        { numRuns: 2000 },
      );
    },
  );

  it(
    verifies(
      ['catalog.tool-naming', 'catalog.tool-name-length'],
      'a refusal happens exactly when nothing is left, and a name is shortened exactly when too long',
    ),
    () => {
      fc.assert(
        fc.property(text, (id) => {
          const normalized = normalizeOperationId(id);
          const result = toolName('erp', id, 'GET', '/x');
          expect(result.ok).toBe(normalized.length > 0);
          if (result.ok) expect(result.fullName !== undefined).toBe(normalized.length + 'erp.'.length > 64);
        }),
        { numRuns: 2000 },
      );
    },
  );

  it(verifies('catalog.tool-naming', 'normalizing twice gives the same as once'), () => {
    fc.assert(
      fc.property(text, (id) => {
        const once = normalizeOperationId(id);
        expect(normalizeOperationId(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });

  it(verifies('catalog.tool-naming', 'a route-derived id is itself a normalized id'), () => {
    const segment = fc.oneof(
      fc.string({ unit: junk, maxLength: 12 }),
      fc.string({ unit: junk, maxLength: 10 }).map((name) => `{${name}}`),
    );
    fc.assert(
      fc.property(fc.constantFrom('GET', 'POST', 'delete'), fc.array(segment, { maxLength: 6 }), (method, segments) => {
        const id = operationIdFromRoute(method, `/${segments.join('/')}`);
        expect(normalizeOperationId(id)).toBe(id);
        expect(id).toMatch(allowed);
        expect(id.startsWith(method.toLowerCase())).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("GitHub's description (the fixture of test/adapters/large-configuration.test.ts)", () => {
  it(
    verifies(
      'catalog.tool-name-length',
      'every operation gets a distinct name of at most 64 characters; 65 are shortened',
    ),
    async () => {
      // Only the names are read here (no schema, no policy): the full load is the adapter test's.
      const file = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
      const document: unknown = JSON.parse(await readFile(file, 'utf8'));
      const paths = isJsonObject(document) && isJsonObject(document.paths) ? document.paths : {};
      const names: string[] = [];
      const shortened: string[] = [];
      for (const [path, item] of Object.entries(paths)) {
        for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']) {
          const operation = isJsonObject(item) ? item[method] : undefined;
          if (!isJsonObject(operation)) continue;
          const id = typeof operation.operationId === 'string' ? operation.operationId : undefined;
          const named = toolName('github', id, method.toUpperCase(), path);
          if (!named.ok) throw new Error(named.reason);
          names.push(named.name);
          if (named.fullName !== undefined) shortened.push(named.fullName);
        }
      }
      expect(names).toHaveLength(1223);
      expect(new Set(names).size).toBe(names.length);
      expect(Math.max(...names.map((name) => name.length))).toBeLessThanOrEqual(64);
      expect(shortened).toHaveLength(65);
      expect(names).toContain('github.code-security_get-repositories-for-enterprise-co_598fc294');
    },
  );
});
