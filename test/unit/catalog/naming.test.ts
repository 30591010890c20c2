import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeOperationId, operationIdFromRoute, toolName } from '../../../shared/catalog/naming.js';
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

  it(verifies('catalog.tool-naming', 'accepts a name of exactly 128 characters and refuses one of 129'), () => {
    const longest = 'a'.repeat(124); // "erp." + 124 = 128
    expect(toolName('erp', longest, 'GET', '/x')).toEqual({ ok: true, name: `erp.${longest}` });
    const tooLong = 'a'.repeat(125);
    expect(toolName('erp', tooLong, 'GET', '/x')).toEqual({
      ok: false,
      reason: `the tool name erp.${tooLong} is longer than 128 characters`,
    });
  });

  it(verifies('catalog.tool-naming', 'measures the length after normalization'), () => {
    // 62 words "aB" → "a_b": 62 × 3 = 186 characters once split; before splitting it is 124.
    const id = 'aB'.repeat(62);
    const result = toolName('erp', id, 'GET', '/x');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toMatch(/^the tool name erp\.a_ba_b.* is longer than 128 characters$/);
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
      'a name, when given, is "<key>." then lowercase allowed characters, at most 128 long',
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
          expect(result.name.length).toBeLessThanOrEqual(128);
          expect(rest).toBe(normalizeOperationId(id));
        }),
        { numRuns: 2000 },
      );
    },
  );

  it(verifies('catalog.tool-naming', 'a refusal happens exactly when nothing is left or the name is too long'), () => {
    fc.assert(
      fc.property(text, (id) => {
        const normalized = normalizeOperationId(id);
        const result = toolName('erp', id, 'GET', '/x');
        expect(result.ok).toBe(normalized.length > 0 && normalized.length + 'erp.'.length <= 128);
      }),
      { numRuns: 2000 },
    );
  });

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
