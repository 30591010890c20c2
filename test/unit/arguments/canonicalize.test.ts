// canonicalizeArguments: the one standard form of a call's arguments (NFC and trimmed strings,
// canonical decimal amounts, one-script identifiers, RFC 8785 serialization and its SHA-256),
// or every problem with its JSON Pointer, code and message.
//
// Long: the canonical form has many rules, each with its table of spellings that must agree or be
// refused.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type Canonicalization,
  canonicalizeArguments,
  maxArgumentBytes,
} from '../../../shared/arguments/canonicalize.js';
import { readParsedArguments } from '../../../shared/arguments/strict-json.js';
import { applyMarks } from '../../../shared/catalog/schema-conversion.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import { type InputErrorCode, inputErrorCodes } from '../../../shared/errors.js';
import type { InputError } from '../../../shared/result.js';
import { verifies } from '../../support/requirements.js';
import { withValidator } from '../../support/validators.js';
import { canonicalize, purchaseOrder } from './fixtures.js';

/** erp.purchase_orders.create as the catalog builds it from examples/erp/openapi.yaml. */
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

const problem = (path: string, code: InputErrorCode, message: string = inputErrorCodes[code]): InputError => ({
  path,
  code,
  message,
});

/** Asserts success with this canonical value and serialization, and the hash of that serialization. */
const expectCanonical = (result: Canonicalization, value: JsonObject, json: string) => {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.errors)}`);
  expect(result.arguments.value).toEqual(value);
  expect(result.arguments.json).toBe(json);
  expect(result.arguments.hash).toBe(sha256(json));
  expect(result.arguments.hash).toMatch(/^[0-9a-f]{64}$/);
};

const refused = (...errors: InputError[]): Canonicalization => ({ ok: false, errors });

interface ValidCase {
  readonly title: string;
  readonly args: string;
  readonly value: JsonObject;
  readonly json: string;
}

interface InvalidCase {
  readonly title: string;
  readonly args: string;
  readonly errors: readonly InputError[];
}

const decimalMessage = 'Expected a decimal number such as 1500 or 1500.25.';
const currencyMessage = 'Expected one of: "EUR", "USD", "GBP", "SAR", "AED".';

describe(verifies('args.canonical-form', 'a purchase order in its canonical form'), () => {
  const valid: readonly ValidCase[] = [
    {
      title: 'the plain request',
      args: '{"vendor_id":"V-100","amount":"1500","currency":"EUR"}',
      value: { vendor_id: 'V-100', amount: '1500', currency: 'EUR' },
      json: '{"amount":"1500","currency":"EUR","vendor_id":"V-100"}',
    },
    {
      title: 'surrounding spaces, trailing zeros and an NFD description',
      args: '{"vendor_id":" V-100 ","amount":" 1500.00 ","currency":" EUR ","description":" Cafe\\u0301 chairs\\n"}',
      value: { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description: 'Caf\u00e9 chairs' },
      json: '{"amount":"1500","currency":"EUR","description":"Caf\u00e9 chairs","vendor_id":"V-100"}',
    },
    {
      title: 'an amount sent as a JSON number with a fraction',
      args: '{"currency":"USD","amount":1500.50,"vendor_id":"V-100"}',
      value: { vendor_id: 'V-100', amount: '1500.5', currency: 'USD' },
      json: '{"amount":"1500.5","currency":"USD","vendor_id":"V-100"}',
    },
    {
      title: 'an amount sent with an exponent',
      args: '{"vendor_id":"V-100","amount":1.5e3,"currency":"GBP"}',
      value: { vendor_id: 'V-100', amount: '1500', currency: 'GBP' },
      json: '{"amount":"1500","currency":"GBP","vendor_id":"V-100"}',
    },
    {
      title: 'a 20-digit amount kept exactly (no unsafe_integer for amounts)',
      args: '{"vendor_id":"V-100","amount":12345678901234567890,"currency":"EUR"}',
      value: { vendor_id: 'V-100', amount: '12345678901234567890', currency: 'EUR' },
      json: '{"amount":"12345678901234567890","currency":"EUR","vendor_id":"V-100"}',
    },
    {
      title: 'negative zero as 0',
      args: '{"vendor_id":"V-100","amount":"-0.0","currency":"EUR"}',
      value: { vendor_id: 'V-100', amount: '0', currency: 'EUR' },
      json: '{"amount":"0","currency":"EUR","vendor_id":"V-100"}',
    },
    {
      title: 'a Persian amount with the Arabic decimal separator and an Arabic-script vendor',
      args: '{"vendor_id":"فروشنده-12","amount":"۱۵۰۰٫۵۰","currency":"SAR","description":"صندلی اداری"}',
      value: { vendor_id: 'فروشنده-12', amount: '1500.5', currency: 'SAR', description: 'صندلی اداری' },
      json: '{"amount":"1500.5","currency":"SAR","description":"صندلی اداری","vendor_id":"فروشنده-12"}',
    },
    {
      title: 'order lines, their keys sorted, 1.0 read as the integer 1, fullwidth text kept',
      args:
        '{"vendor_id":"V-7","amount":"٢٥٠","currency":"AED","lines":[' +
        '{"sku":" SKU-1 ","quantity":2,"note":" Ｆragile ﬁle "},{"quantity":1.0,"sku":"ک-7"}]}',
      value: {
        vendor_id: 'V-7',
        amount: '250',
        currency: 'AED',
        lines: [
          { sku: 'SKU-1', quantity: 2, note: 'Ｆragile ﬁle' },
          { quantity: 1, sku: 'ک-7' },
        ],
      },
      json: '{"amount":"250","currency":"AED","lines":[{"note":"Ｆragile ﬁle","quantity":2,"sku":"SKU-1"},{"quantity":1,"sku":"ک-7"}],"vendor_id":"V-7"}',
    },
    {
      title: 'a description of 500 emoji (maxLength counts characters, not UTF-16 units)',
      args: `{"vendor_id":"V-1","amount":"1","currency":"EUR","description":"${'😀'.repeat(500)}"}`,
      value: { vendor_id: 'V-1', amount: '1', currency: 'EUR', description: '😀'.repeat(500) },
      json: `{"amount":"1","currency":"EUR","description":"${'😀'.repeat(500)}","vendor_id":"V-1"}`,
    },
    {
      title: 'a description of 500 é sent decomposed (1000 code points before NFC)',
      args: `{"vendor_id":"V-1","amount":"1","currency":"EUR","description":"${'e\\u0301'.repeat(500)}"}`,
      value: { vendor_id: 'V-1', amount: '1', currency: 'EUR', description: '\u00e9'.repeat(500) },
      json: `{"amount":"1","currency":"EUR","description":"${'\u00e9'.repeat(500)}","vendor_id":"V-1"}`,
    },
  ];
  for (const item of valid) {
    it(verifies('args.canonical-form', `${item.title}`), () => {
      expectCanonical(canonicalize(purchaseOrder, item.args), item.value, item.json);
    });
  }

  it(verifies('args.canonical-form', 'hashes the canonical serialization with SHA-256 (a known digest)'), () => {
    const result = canonicalize(
      purchaseOrder,
      '{"description":"Cafe\\u0301","currency":"EUR","amount":"1500.00","vendor_id":" V-100 "}',
    );
    expect(result).toEqual({
      ok: true,
      arguments: {
        value: { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description: 'Caf\u00e9' },
        json: '{"amount":"1500","currency":"EUR","description":"Caf\u00e9","vendor_id":"V-100"}',
        hash: '0db1cf8561a954bb47f054403973d259ffb85dba9894fa52f1da39662b30a35c',
      },
    });
  });

  it(verifies('args.canonical-form', 'gives one hash to the reference equivalents of an order'), () => {
    const spellings = [
      '{"vendor_id":"V-100","amount":"1500","currency":"EUR"}',
      '{"currency":"EUR","amount":"1500.00","vendor_id":"V-100"}',
      '{"vendor_id":" V-100\\t","amount":1500,"currency":"EUR "}',
      '{"vendor_id":"V-100","amount":"۱۵۰۰","currency":"EUR"}',
      '{"vendor_id":"V-100","amount":"١٥٠٠٫٠","currency":"EUR"}',
      '{"vendor_id":"V-100","amount":1.5E+3,"currency":"EUR"}',
      '{"vendor_id":"V-100","amount":"01500.000","currency":"EUR"}',
    ];
    const hashes = spellings.map((args) => {
      const result = canonicalize(purchaseOrder, args);
      return result.ok ? result.arguments.hash : JSON.stringify(result.errors);
    });
    expect(new Set(hashes)).toEqual(new Set([sha256('{"amount":"1500","currency":"EUR","vendor_id":"V-100"}')]));
  });

  it(verifies('args.canonical-form', 'gives different hashes to different orders'), () => {
    const hash = (args: string) => {
      const result = canonicalize(purchaseOrder, args);
      return result.ok ? result.arguments.hash : null;
    };
    const base = hash('{"vendor_id":"V-100","amount":"1500","currency":"EUR"}');
    expect(base).not.toBeNull();
    expect(hash('{"vendor_id":"V-100","amount":"1500.01","currency":"EUR"}')).not.toBe(base);
    expect(hash('{"vendor_id":"V-101","amount":"1500","currency":"EUR"}')).not.toBe(base);
    expect(hash('{"vendor_id":"V-100","amount":"15000","currency":"EUR"}')).not.toBe(base);
  });
});

describe(verifies('args.every-problem', 'a purchase order refused with every problem'), () => {
  const invalid: readonly InvalidCase[] = [
    {
      title: 'nothing given: each required field missing, at its own path',
      args: '{}',
      errors: [
        problem('/amount', 'missing_field'),
        problem('/currency', 'missing_field'),
        problem('/vendor_id', 'missing_field'),
      ],
    },
    {
      title: 'fields not in the schema, pointers escaped',
      args: '{"vendor_id":"V-1","amount":"1","currency":"EUR","extra":true,"a/b~c":1}',
      errors: [problem('/a~1b~0c', 'unknown_field'), problem('/extra', 'unknown_field')],
    },
    {
      title: 'wrong types, no coercion',
      args: '{"vendor_id":100,"amount":true,"currency":["EUR"],"description":null}',
      errors: [
        problem('/amount', 'wrong_type', 'Expected string.'),
        problem('/currency', 'not_allowed_value', currencyMessage),
        problem('/currency', 'wrong_type', 'Expected string.'),
        problem('/description', 'wrong_type', 'Expected string.'),
        problem('/vendor_id', 'wrong_type', 'Expected string.'),
      ],
    },
    {
      title: 'a number for a string field is not turned into a string',
      args: '{"vendor_id":100,"amount":"1","currency":"EUR"}',
      errors: [problem('/vendor_id', 'wrong_type', 'Expected string.')],
    },
    {
      title: 'a currency outside the enum (compared after trimming, case kept)',
      args: '{"vendor_id":"V-1","amount":"1","currency":" eur "}',
      errors: [problem('/currency', 'not_allowed_value', currencyMessage)],
    },
    {
      title: 'values too long (41 characters of vendor id, 501 of description)',
      args: `{"vendor_id":"${'V'.repeat(41)}","amount":"1","currency":"EUR","description":"${'ش'.repeat(501)}"}`,
      errors: [
        problem('/description', 'too_long', 'This value is too long. (limit: 500)'),
        problem('/vendor_id', 'too_long', 'This value is too long. (limit: 40)'),
      ],
    },
    {
      title: 'amounts that are not decimals',
      args: '{"vendor_id":"V-1","amount":"1,500.00","currency":"EUR"}',
      errors: [problem('/amount', 'invalid_decimal', decimalMessage)],
    },
    {
      title: 'an Arabic-Indic amount with a thousands comma',
      args: '{"vendor_id":"V-1","amount":"١,٥٠٠","currency":"EUR"}',
      errors: [problem('/amount', 'invalid_decimal', decimalMessage)],
    },
    {
      title: 'an amount written with an exponent inside a string',
      args: '{"vendor_id":"V-1","amount":"1.5e3","currency":"EUR"}',
      errors: [problem('/amount', 'invalid_decimal', decimalMessage)],
    },
    {
      title: 'a mixed-script vendor id',
      args: '{"vendor_id":"V-فروشنده","amount":"1","currency":"EUR"}',
      errors: [problem('/vendor_id', 'mixed_script')],
    },
    {
      title: 'a vendor id with a Cyrillic а',
      args: '{"vendor_id":"Vаlue-1","amount":"1","currency":"EUR"}',
      errors: [problem('/vendor_id', 'unsupported_script')],
    },
    {
      title: 'a vendor id with a right-to-left override',
      args: '{"vendor_id":"V-\\u202e001","amount":"1","currency":"EUR"}',
      errors: [problem('/vendor_id', 'disallowed_character')],
    },
    {
      title: 'a vendor id with a zero-width joiner and an @',
      args: '{"vendor_id":"V\\u200d@1","amount":"1","currency":"EUR"}',
      errors: [problem('/vendor_id', 'disallowed_character')],
    },
    {
      title: 'problems in order lines, each at its own index',
      args:
        '{"vendor_id":"V-1","amount":"1","currency":"EUR","lines":[' +
        '{"sku":"S 1","quantity":0,"color":"red"},{"quantity":"2"},{"sku":"x","quantity":1.5}]}',
      errors: [
        problem('/lines/0/color', 'unknown_field'),
        problem('/lines/0/quantity', 'out_of_range', 'This number is outside the allowed range. (limit: 1)'),
        problem('/lines/0/sku', 'disallowed_character'),
        problem('/lines/1/quantity', 'wrong_type', 'Expected integer.'),
        problem('/lines/1/sku', 'missing_field'),
        problem('/lines/2/quantity', 'wrong_type', 'Expected integer.'),
      ],
    },
    {
      title: 'lines that are not an array',
      args: '{"vendor_id":"V-1","amount":"1","currency":"EUR","lines":{}}',
      errors: [problem('/lines', 'wrong_type', 'Expected array.')],
    },
    {
      title: 'more than 500 lines',
      args: `{"vendor_id":"V-1","amount":"1","currency":"EUR","lines":[${Array(501).fill('{"sku":"S","quantity":1}').join(',')}]}`,
      errors: [problem('/lines', 'too_long', 'This value is too long. (limit: 500)')],
    },
    {
      title: 'reader hazards, schema problems and text-rule problems together, sorted by path then code',
      args:
        '{"vendor_id":"V-ف","vendor_id":"Vа","amount":"1,500","currency":"JPY","description":5,' +
        '"extra":1,"__proto__":{},"lines":[{"quantity":0}]}',
      errors: [
        problem('/__proto__', 'forbidden_key'),
        problem('/amount', 'invalid_decimal', decimalMessage),
        problem('/currency', 'not_allowed_value', currencyMessage),
        problem('/description', 'wrong_type', 'Expected string.'),
        problem('/extra', 'unknown_field'),
        problem('/lines/0/quantity', 'out_of_range', 'This number is outside the allowed range. (limit: 1)'),
        problem('/lines/0/sku', 'missing_field'),
        problem('/vendor_id', 'duplicate_key'),
        problem('/vendor_id', 'unsupported_script'),
      ],
    },
    {
      title: 'a duplicated field, even with the same value',
      args: '{"vendor_id":"V-1","vendor_id":"V-1","amount":"1","currency":"EUR"}',
      errors: [problem('/vendor_id', 'duplicate_key')],
    },
    {
      title: 'a __proto__ field: refused as forbidden, not also as unknown',
      args: '{"vendor_id":"V-1","amount":"1","currency":"EUR","__proto__":{"isAdmin":true}}',
      errors: [problem('/__proto__', 'forbidden_key')],
    },
    {
      title: 'a lone surrogate in an identifier and a huge integer in a text field',
      args: '{"vendor_id":"V\\ud800","amount":"1","currency":"EUR","description":12345678901234567890}',
      errors: [
        problem('/description', 'wrong_type', 'Expected string.'),
        problem('/vendor_id', 'disallowed_character'),
        problem('/vendor_id', 'lone_surrogate'),
      ],
    },
    {
      title: 'a lone surrogate in free text',
      args: '{"vendor_id":"V-1","amount":"1","currency":"EUR","description":"chairs \\udc00"}',
      errors: [problem('/description', 'lone_surrogate')],
    },
    {
      title: 'an amount too large to be a finite number',
      args: '{"vendor_id":"V-1","amount":1e400,"currency":"EUR"}',
      errors: [problem('/amount', 'non_finite_number')],
    },
  ];
  for (const item of invalid) {
    it(verifies('args.every-problem', `${item.title}`), () => {
      expect(canonicalize(purchaseOrder, item.args)).toEqual({ ok: false, errors: item.errors });
    });
  }

  it(verifies('args.unknown-fields', 'refuses a field not in the schema with unknown_field at its path'), () => {
    expect(canonicalize(purchaseOrder, '{"vendor_id":"V-1","amount":"1","currency":"EUR","approved":true}')).toEqual(
      refused(problem('/approved', 'unknown_field', 'This field is not in the tool input schema.')),
    );
    expect(
      canonicalize(
        purchaseOrder,
        '{"vendor_id":"V-1","amount":"1","currency":"EUR","lines":[{"sku":"S","quantity":1,"price":"0"}]}',
      ),
    ).toEqual(refused(problem('/lines/0/price', 'unknown_field')));
  });

  it(verifies('args.unknown-fields', 'compares field names after NFC'), () => {
    const schema: JsonObject = {
      type: 'object',
      properties: { 'caf\u00e9': { type: 'string' } },
      additionalProperties: false,
    };
    expectCanonical(canonicalize(schema, '{"cafe\\u0301":" x "}'), { 'caf\u00e9': 'x' }, '{"caf\u00e9":"x"}');
  });

  for (const args of ['[]', '"text"', 'null', '1500', 'true']) {
    it(verifies('args.every-problem', `arguments ${args} are not an object`), () => {
      expect(canonicalize(purchaseOrder, args)).toEqual(
        refused(problem('', 'not_an_object', 'The arguments must be a JSON object.')),
      );
    });
  }

  it(verifies('args.every-problem', 'reads absent arguments as an empty object'), () => {
    expect(
      canonicalizeArguments(withValidator({ inputSchema: purchaseOrder }), {
        value: undefined,
        numbers: new Map(),
        issues: [],
      }),
    ).toEqual(
      refused(
        problem('/amount', 'missing_field'),
        problem('/currency', 'missing_field'),
        problem('/vendor_id', 'missing_field'),
      ),
    );
    expectCanonical(
      canonicalizeArguments(withValidator({ inputSchema: { type: 'object' } }), {
        value: undefined,
        numbers: new Map(),
        issues: [],
      }),
      {},
      '{}',
    );
    expect(sha256('{}')).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});

describe(verifies('args.schema-validation', 'nested objects and arrays'), () => {
  const order: JsonObject = {
    type: 'object',
    required: ['shipping'],
    additionalProperties: false,
    properties: {
      shipping: {
        type: 'object',
        required: ['address'],
        additionalProperties: false,
        properties: {
          address: { type: 'string', minLength: 5, maxLength: 200 },
          contact: {
            type: 'object',
            additionalProperties: false,
            properties: { phone: { type: 'string', pattern: '^\\+?[0-9 ]+$' }, 'x/y~z': { type: 'string' } },
          },
        },
      },
      tags: { type: 'array', minItems: 1, maxItems: 3, items: { type: 'string', 'x-identifier': true } },
      amounts: { type: 'array', items: { type: ['string', 'number'], 'x-amount': true, minimum: 0 } },
      pair: {
        type: 'array',
        prefixItems: [
          { type: 'string', 'x-identifier': true },
          { type: ['string', 'number'], 'x-amount': true },
        ],
        items: false,
      },
      count: { type: 'integer' },
    },
  };

  it(verifies('args.canonical-form', 'canonicalizes nested values by their own schemas (prefixItems included)'), () => {
    expectCanonical(
      canonicalize(
        order,
        '{"shipping":{"address":"  12 Rue de la Paix  ","contact":{"phone":"+33 1 23","x/y~z":" v "}},' +
          '"tags":["A-1","ب-2"],"amounts":["١٠٫٥٠",7,12345678901234567890],"pair":["K-1","0.50"]}',
      ),
      {
        shipping: { address: '12 Rue de la Paix', contact: { phone: '+33 1 23', 'x/y~z': 'v' } },
        tags: ['A-1', 'ب-2'],
        amounts: ['10.5', '7', '12345678901234567890'],
        pair: ['K-1', '0.5'],
      },
      '{"amounts":["10.5","7","12345678901234567890"],"pair":["K-1","0.5"],' +
        '"shipping":{"address":"12 Rue de la Paix","contact":{"phone":"+33 1 23","x/y~z":"v"}},"tags":["A-1","ب-2"]}',
    );
  });

  it(verifies('args.schema-validation', 'reports every nested problem with its pointer'), () => {
    expect(
      canonicalize(
        order,
        '{"shipping":{"address":"abc","contact":{"phone":"call me","fax":"1"},"x":1},"tags":[],' +
          '"amounts":["-1","x",-0.5],"pair":["K 1","1,5",3],"count":12345678901234567890}',
      ),
    ).toEqual(
      refused(
        problem('/amounts/0', 'out_of_range'),
        problem('/amounts/1', 'invalid_decimal', decimalMessage),
        problem('/amounts/2', 'out_of_range'),
        problem('/pair', 'schema_violation'),
        problem('/pair/0', 'disallowed_character'),
        problem('/pair/1', 'invalid_decimal', decimalMessage),
        problem('/shipping/address', 'too_short', 'This value is too short. (limit: 5)'),
        problem('/shipping/contact/fax', 'unknown_field'),
        problem(
          '/shipping/contact/phone',
          'pattern_mismatch',
          'This value does not match the required pattern. (^\\+?[0-9 ]+$)',
        ),
        problem('/shipping/x', 'unknown_field'),
        problem('/tags', 'too_short', 'This value is too short. (limit: 1)'),
      ),
    );
  });

  it(verifies('args.schema-validation', 'reports a missing object and a too-long array'), () => {
    expect(canonicalize(order, '{"tags":["a","b","c","d"]}')).toEqual(
      refused(
        problem('/shipping', 'missing_field'),
        problem('/tags', 'too_long', 'This value is too long. (limit: 3)'),
      ),
    );
  });

  it(verifies('args.every-problem', 'escapes ~ and / in the pointers of missing and unknown fields (RFC 6901)'), () => {
    const schema: JsonObject = {
      type: 'object',
      properties: {
        'a/b': {
          type: 'object',
          required: ['x~y', 'p/q'],
          additionalProperties: false,
          properties: { 'x~y': { type: 'string' }, 'p/q': { type: 'string' } },
        },
      },
      required: ['~'],
    };
    expect(canonicalize(schema, '{"a/b":{"m/n~o":1}}')).toEqual(
      refused(
        problem('/a~1b/m~1n~0o', 'unknown_field'),
        problem('/a~1b/p~1q', 'missing_field'),
        problem('/a~1b/x~0y', 'missing_field'),
        problem('/~0', 'missing_field'),
      ),
    );
  });

  it(
    verifies('args.schema-validation', 'validates canonical values: patterns and lengths see NFC, trimmed text'),
    () => {
      const schema: JsonObject = {
        type: 'object',
        properties: {
          code: { type: 'string', pattern: '^[A-Z]{3}$' },
          name: { type: 'string', maxLength: 4 },
        },
      };
      expectCanonical(
        canonicalize(schema, '{"code":"  ABC  ","name":"Cafe\\u0301"}'),
        { code: 'ABC', name: 'Caf\u00e9' },
        '{"code":"ABC","name":"Caf\u00e9"}',
      );
      expect(canonicalize(schema, '{"code":"ＡＢＣ","name":"Cafes"}')).toEqual(
        refused(
          problem('/code', 'pattern_mismatch', 'This value does not match the required pattern. (^[A-Z]{3}$)'),
          problem('/name', 'too_long', 'This value is too long. (limit: 4)'),
        ),
      );
    },
  );

  it(
    verifies('args.schema-validation', 'checks integer limits, minProperties, const and multipleOf of plain numbers'),
    () => {
      const schema: JsonObject = {
        type: 'object',
        minProperties: 1,
        properties: {
          n: { type: 'integer', minimum: 1, maximum: 10 },
          step: { type: 'number', multipleOf: 5 },
          kind: { const: 'po' },
        },
      };
      expect(canonicalize(schema, '{}')).toEqual(refused(problem('', 'too_short', 'This value is too short.')));
      expect(canonicalize(schema, '{"n":11,"step":7,"kind":"PO"}')).toEqual(
        refused(
          problem('/kind', 'not_allowed_value'),
          problem('/n', 'out_of_range', 'This number is outside the allowed range. (limit: 10)'),
          problem('/step', 'out_of_range'),
        ),
      );
      expectCanonical(
        canonicalize(schema, '{"n":10,"step":15,"kind":" po "}'),
        { n: 10, step: 15, kind: 'po' },
        '{"kind":"po","n":10,"step":15}',
      );
    },
  );

  it(
    verifies(
      'args.schema-validation',
      'does not coerce types: "5" is not an integer, 1 is not a boolean, "1500" is not a number',
    ),
    () => {
      const schema: JsonObject = {
        type: 'object',
        properties: { n: { type: 'integer' }, b: { type: 'boolean' }, x: { type: 'number' }, s: { type: 'string' } },
      };
      expect(canonicalize(schema, '{"n":"5","b":1,"x":"1500","s":5}')).toEqual(
        refused(
          problem('/b', 'wrong_type', 'Expected boolean.'),
          problem('/n', 'wrong_type', 'Expected integer.'),
          problem('/s', 'wrong_type', 'Expected string.'),
          problem('/x', 'wrong_type', 'Expected number.'),
        ),
      );
    },
  );

  // ajv names the extra property `unevaluatedProperty` for unevaluatedProperties, not
  // `additionalProperty`. Fails today: the path is '' (the parent) instead of '/b'.
  it(verifies('args.unknown-fields', 'reports an extra field refused by unevaluatedProperties at its own path'), () => {
    const schema: JsonObject = {
      type: 'object',
      properties: { a: { type: 'string' } },
      unevaluatedProperties: false,
    };
    expect(canonicalize(schema, '{"a":"x","b":1}')).toEqual(refused(problem('/b', 'unknown_field')));
  });
});

describe(verifies('args.schema-validation', 'formats'), () => {
  const schema: JsonObject = {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      at: { type: 'string', format: 'date-time' },
      day: { type: 'string', format: 'date' },
      email: { type: 'string', format: 'email' },
    },
    additionalProperties: false,
  };

  it(verifies('args.schema-validation', 'accepts valid formats, checked after trimming'), () => {
    expectCanonical(
      canonicalize(
        schema,
        '{"id":" 0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55 ","at":"2024-05-01T10:00:00+03:30",' +
          '"day":"2024-02-29","email":"buyer@example.com"}',
      ),
      {
        id: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55',
        at: '2024-05-01T10:00:00+03:30',
        day: '2024-02-29',
        email: 'buyer@example.com',
      },
      '{"at":"2024-05-01T10:00:00+03:30","day":"2024-02-29","email":"buyer@example.com","id":"0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55"}',
    );
  });

  const invalid: readonly (readonly [field: string, value: string, format: string])[] = [
    ['id', 'nope', 'uuid'],
    ['id', '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d5', 'uuid'],
    ['at', 'yesterday', 'date-time'],
    ['at', '2024-05-01T10:00:00', 'date-time'],
    ['at', '2024-13-01T00:00:00Z', 'date-time'],
    // digits are only read as 0-9 in amounts: a Persian date is not a date-time
    ['at', '۲۰۲۴-05-01T10:00:00Z', 'date-time'],
    ['day', '2023-02-29', 'date'],
    ['email', 'a@b', 'email'],
  ];
  for (const [field, value, format] of invalid) {
    it(verifies('args.schema-validation', `${field} ${JSON.stringify(value)} is not a ${format}`), () => {
      expect(canonicalize(schema, JSON.stringify({ [field]: value }))).toEqual(
        refused(problem(`/${field}`, 'invalid_format', `Expected the format ${format}.`)),
      );
    });
  }
});

describe(verifies('args.amount-canonical', 'numeric limits of amounts compared as decimals'), () => {
  const schema: JsonObject = {
    type: 'object',
    properties: {
      total: { type: ['string', 'number'], 'x-amount': true, minimum: 0, maximum: 1000000 },
      fee: { type: ['string', 'number'], 'x-amount': true, exclusiveMinimum: 0, exclusiveMaximum: 100.5 },
    },
    additionalProperties: false,
  };
  const accepted: readonly (readonly [args: string, value: JsonObject])[] = [
    ['{"total":"1000000.00"}', { total: '1000000' }],
    ['{"total":1e6}', { total: '1000000' }],
    ['{"total":"۱۰۰۰۰۰۰"}', { total: '1000000' }],
    ['{"total":"-0.0"}', { total: '0' }],
    ['{"total":0}', { total: '0' }],
    ['{"fee":"0.0000001"}', { fee: '0.0000001' }],
    // as a double this is 100.5 and would be refused: decimals compare it exactly
    ['{"fee":"100.49999999999999999999"}', { fee: '100.49999999999999999999' }],
    ['{"fee":100.49999999999999999999}', { fee: '100.49999999999999999999' }],
  ];
  for (const [args, value] of accepted) {
    it(verifies('args.amount-canonical', `accepts ${args}`), () => {
      const result = canonicalize(schema, args);
      if (!result.ok) throw new Error(JSON.stringify(result.errors));
      expect(result.arguments.value).toEqual(value);
    });
  }
  const outOfRange: readonly (readonly [args: string, path: string])[] = [
    ['{"total":"1000000.01"}', '/total'],
    // as a double this is 1000000 and would pass: decimals see the excess
    ['{"total":"1000000.00000000000000000001"}', '/total'],
    ['{"total":1000000.00000000000000000001}', '/total'],
    ['{"total":"-0.01"}', '/total'],
    ['{"total":10000000000000000000000}', '/total'],
    ['{"total":"۱۰۰۰۰۰۱"}', '/total'],
    ['{"fee":"0"}', '/fee'],
    ['{"fee":"-0"}', '/fee'],
    ['{"fee":100.5}', '/fee'],
    ['{"fee":"100.50"}', '/fee'],
  ];
  for (const [args, path] of outOfRange) {
    it(verifies('args.amount-canonical', `refuses ${args} as out of range`), () => {
      expect(canonicalize(schema, args)).toEqual(
        refused(problem(path, 'out_of_range', 'This number is outside the allowed range.')),
      );
    });
  }

  it(verifies('args.every-problem', 'reports an out-of-range fee and an invalid total together'), () => {
    expect(canonicalize(schema, '{"total":"1,000","fee":0}')).toEqual(
      refused(problem('/fee', 'out_of_range'), problem('/total', 'invalid_decimal', decimalMessage)),
    );
  });

  it(
    verifies(
      ['args.amount-canonical', 'args.exact-integers'],
      'keeps 20-digit amounts in arrays exact, and integers beyond 2^53 too',
    ),
    () => {
      const arrays: JsonObject = {
        type: 'object',
        properties: {
          amounts: { type: 'array', items: { type: ['string', 'number'], 'x-amount': true } },
          count: { type: 'integer' },
        },
      };
      expectCanonical(
        canonicalize(arrays, '{"amounts":[12345678901234567890,1.10]}'),
        { amounts: ['12345678901234567890', '1.1'] },
        '{"amounts":["12345678901234567890","1.1"]}',
      );
      expectCanonical(
        canonicalize(arrays, '{"amounts":[12345678901234567890],"count":12345678901234567890}'),
        { amounts: ['12345678901234567890'], count: 12345678901234567890n },
        '{"amounts":["12345678901234567890"],"count":12345678901234567890}',
      );
    },
  );

  it(
    verifies(
      'args.exact-integers',
      'checks the limits of an integer beyond 2^53 on its digits, and refuses one that is not whole',
    ),
    () => {
      const ids: JsonObject = {
        type: 'object',
        properties: {
          // Limits a double holds exactly (a schema's own numbers are read as doubles).
          id: { type: 'integer', format: 'int64', minimum: -9007199254740992, maximum: 9007199254740992 },
          ids: { type: 'array', items: { type: 'integer', enum: [9007199254740992, -9007199254740992] } },
          size: { type: 'number' },
          label: { type: 'string' },
        },
      };
      expectCanonical(
        canonicalize(ids, '{"id":9007199254740992,"ids":[-9007199254740992],"size":-9223372036854775809}'),
        { id: 9007199254740992n, ids: [-9007199254740992n], size: -9223372036854775809n },
        '{"id":9007199254740992,"ids":[-9007199254740992],"size":-9223372036854775809}',
      );
      // One past the limit: as doubles 2^53 + 1 and 2^53 are the same number, on the digits they are not.
      expect(canonicalize(ids, '{"id":9007199254740993,"ids":[9007199254740993],"label":9007199254740993}')).toEqual(
        refused(
          problem('/id', 'out_of_range'),
          problem('/ids/0', 'not_allowed_value'),
          problem('/label', 'wrong_type', 'Expected string.'),
        ),
      );
      expect(canonicalize(ids, '{"size":9007199254740993.5}')).toEqual(refused(problem('/size', 'unsafe_integer')));
      expect(canonicalize(ids, '{"id":1e20}')).toEqual(refused(problem('/id', 'out_of_range')));
    },
  );

  // validationSchema drops enum, const and multipleOf from amount schemas, and canonicalization
  // does not check them either. Fails today: all three are accepted.
  it(verifies('args.schema-validation', 'checks enum, const and multipleOf on amounts (compared as decimals)'), () => {
    const constrained: JsonObject = {
      type: 'object',
      properties: {
        cents: { type: ['string', 'number'], 'x-amount': true, multipleOf: 0.01 },
        tier: { type: ['string', 'number'], 'x-amount': true, enum: [100, 200] },
        fixed: { type: ['string', 'number'], 'x-amount': true, const: 5 },
      },
    };
    const result = canonicalize(constrained, '{"cents":"1.005","tier":"300","fixed":"6"}');
    expect(result.ok ? [] : result.errors.map((error) => [error.path, error.code])).toEqual([
      ['/cents', 'out_of_range'],
      ['/fixed', 'not_allowed_value'],
      ['/tier', 'not_allowed_value'],
    ]);
    // and the allowed values pass
    expect(canonicalize(constrained, '{"cents":"1.50","tier":"100.00","fixed":5}').ok).toBe(true);
  });

  // The amount's type becomes string for the validator, so an integer amount takes a fraction.
  // Fails today: 1500.5 is accepted for a field of type integer.
  it(verifies('args.schema-validation', 'keeps an integer amount whole'), () => {
    const schema: JsonObject = { type: 'object', properties: { cents: { type: 'integer', 'x-amount': true } } };
    const result = canonicalize(schema, '{"cents":"1500.5"}');
    expect(result.ok ? [] : result.errors.map((error) => error.path)).toEqual(['/cents']);
    expect(canonicalize(schema, '{"cents":"1500.0"}').ok).toBe(true);
  });

  // With amount_fields, applyMarks marks the property and its allOf branch; the branch's minimum
  // is dropped for the validator and canonicalization reads only the property's own bounds.
  // Fails today: 5 is accepted although the schema says minimum 10.
  it(verifies('args.amount-canonical', 'checks the bounds of an amount given in an allOf branch'), () => {
    const schema = applyMarks(
      { type: 'object', properties: { total: { allOf: [{ type: 'number', minimum: 10 }] } } },
      { sensitive: new Set(), identifier: new Set(), amount: new Set(['total']) },
    );
    expect(schema).toEqual({
      type: 'object',
      properties: { total: { allOf: [{ type: 'number', minimum: 10, 'x-amount': true }], 'x-amount': true } },
    });
    const result = canonicalize(schema, '{"total":"5"}');
    expect(result.ok ? [] : result.errors.map((error) => [error.path, error.code])).toEqual([
      ['/total', 'out_of_range'],
    ]);
    expect(canonicalize(schema, '{"total":"10.00"}').ok).toBe(true);
  });

  // An amount refused as invalid_decimal keeps its JSON number, which the validator (told the
  // amount is a string) then also calls wrong_type: "Expected string." for a field that takes
  // numbers. Fails today with that third, spurious error.
  it(
    verifies('args.every-problem', 'reports an amount with an exponent beyond 1000 without a spurious wrong_type'),
    () => {
      expect(canonicalize(purchaseOrder, '{"vendor_id":"V-1","amount":1e1001,"currency":"EUR"}')).toEqual(
        refused(problem('/amount', 'invalid_decimal', decimalMessage), problem('/amount', 'non_finite_number')),
      );
    },
  );
});

describe(verifies('args.canonical-form', 'the RFC 8785 serialization'), () => {
  const open: JsonObject = { type: 'object' };

  it(verifies('args.canonical-form', 'sorts keys by UTF-16 code units at every level'), () => {
    expectCanonical(
      canonicalize(
        open,
        '{"b":1,"a":{"d":[3,{"z":0,"y":"\\u00e9"}],"c":null},"😀":true,"ﬁ":false,"A":0,"é":0,"10":0,"9":0}',
      ),
      { b: 1, a: { d: [3, { z: 0, y: 'é' }], c: null }, '😀': true, ﬁ: false, A: 0, é: 0, '10': 0, '9': 0 },
      // 😀 (U+D83D U+DE00 in UTF-16) sorts before ﬁ (U+FB01), unlike code point order
      '{"10":0,"9":0,"A":0,"a":{"c":null,"d":[3,{"y":"é","z":0}]},"b":1,"é":0,"😀":true,"ﬁ":false}',
    );
  });

  it(verifies('args.canonical-form', 'writes numbers that are not amounts in their ECMAScript form'), () => {
    expectCanonical(
      canonicalize(open, '{"n":[1.10,1e-7,-0,100,0.000001,1E2,-1.5e-3,123456.789e3]}'),
      { n: [1.1, 1e-7, 0, 100, 0.000001, 100, -0.0015, 123456789] },
      '{"n":[1.1,1e-7,0,100,0.000001,100,-0.0015,123456789]}',
    );
  });

  it(verifies('args.canonical-form', 'escapes only what JSON requires in strings'), () => {
    expectCanonical(
      canonicalize(open, '{"s":"line\\nbreak \\"q\\" \\\\ tab\\t \\u0001 \\u007f \\u00e9 \\ud83d\\ude00 \\/"}'),
      { s: 'line\nbreak "q" \\ tab\t \u0001 \u007f é 😀 /' },
      '{"s":"line\\nbreak \\"q\\" \\\\ tab\\t \\u0001 \u007f é 😀 /"}',
    );
  });

  it(verifies('args.canonical-form', 'gives the same json and hash whatever the key order of the input'), () => {
    const first = canonicalize(purchaseOrder, '{"vendor_id":"V-1","amount":"2","currency":"EUR","description":"d"}');
    const second = canonicalize(purchaseOrder, '{"description":"d","currency":"EUR","amount":"2","vendor_id":"V-1"}');
    expect(first).toEqual(second);
    expectCanonical(
      first,
      { vendor_id: 'V-1', amount: '2', currency: 'EUR', description: 'd' },
      '{"amount":"2","currency":"EUR","description":"d","vendor_id":"V-1"}',
    );
  });
});

describe(verifies('args.limits', 'the 64 KB limit on canonical arguments, in UTF-8 bytes'), () => {
  const schema: JsonObject = {
    type: 'object',
    properties: { description: { type: 'string' }, extra: { type: 'string' } },
    additionalProperties: false,
  };
  /** {"description":"…"} is 18 bytes around the text. */
  const room = maxArgumentBytes - 18;
  const tooLarge = problem('', 'arguments_too_large', 'The arguments exceed 64 KB once canonicalized.');
  const description = (text: string) => JSON.stringify({ description: text });

  it(verifies('args.limits', 'sets the limit at 65 536 bytes'), () => {
    expect(maxArgumentBytes).toBe(65_536);
  });

  const fits: readonly (readonly [title: string, text: string])[] = [
    ['ASCII', 'a'.repeat(room)],
    ['é (2 bytes, half as many characters as bytes)', 'é'.repeat(room / 2)],
    ['Arabic letters (2 bytes each)', 'ش'.repeat(room / 2)],
    ['€ (3 bytes each)', `${'€'.repeat(Math.floor(room / 3))}${'a'.repeat(room % 3)}`],
    ['emoji (4 bytes, 2 UTF-16 units each)', `${'😀'.repeat(Math.floor(room / 4))}${'a'.repeat(room % 4)}`],
    ['escaped newlines (2 bytes each once serialized)', `a${'\n'.repeat(room / 2 - 1)}a`],
  ];
  for (const [title, text] of fits) {
    it(verifies('args.limits', `accepts exactly 65 536 bytes of ${title}, refuses one byte more`), () => {
      const result = canonicalize(schema, description(text));
      if (!result.ok) throw new Error(JSON.stringify(result.errors));
      expect(Buffer.byteLength(result.arguments.json, 'utf8')).toBe(65_536);
      expect(result.arguments.value).toEqual({ description: text });
      expect(canonicalize(schema, description(`${text}b`))).toEqual(refused(tooLarge));
    });
  }

  it(verifies('args.limits', 'counts bytes, not characters: 32 760 é are 32 778 characters but 65 538 bytes'), () => {
    const text = 'é'.repeat(32_760);
    expect(description(text).length).toBe(32_778);
    expect(canonicalize(schema, description(text))).toEqual(refused(tooLarge));
  });

  it(verifies('args.limits', 'measures the canonical form: NFD input and trimmed spaces do not count'), () => {
    const decomposed = 'e\u0301'.repeat(room / 2);
    expect(Buffer.byteLength(description(decomposed), 'utf8')).toBeGreaterThan(65_536);
    const result = canonicalize(schema, description(decomposed));
    expect(result.ok && Buffer.byteLength(result.arguments.json, 'utf8')).toBe(65_536);
    const padded = canonicalize(schema, description(`${' '.repeat(20_000)}${'a'.repeat(room)}${'\t'.repeat(20_000)}`));
    expect(padded.ok && padded.arguments.value).toEqual({ description: 'a'.repeat(room) });
    const amount = canonicalize(
      { type: 'object', properties: { total: { type: 'string', 'x-amount': true } } },
      `{"total":"${'0'.repeat(70_000)}1500.${'0'.repeat(70_000)}"}`,
    );
    expect(amount.ok && amount.arguments.json).toBe('{"total":"1500"}');
  });

  it(verifies('args.every-problem', 'reports the size beside the other problems'), () => {
    expect(canonicalize(schema, JSON.stringify({ description: 'é'.repeat(room), extra: 5 }))).toEqual(
      refused(tooLarge, problem('/extra', 'wrong_type', 'Expected string.')),
    );
  });
});

describe(verifies('args.limits', 'nesting through canonicalization'), () => {
  const nest = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

  it(verifies('args.limits', 'accepts 32 levels and refuses 33 with nesting_too_deep at the too-deep value'), () => {
    expectCanonical(
      canonicalize({ type: 'object' }, `{"a":${nest(31)}}`),
      { a: JSON.parse(nest(31)) },
      `{"a":${nest(31)}}`,
    );
    expect(canonicalize({ type: 'object' }, `{"a":${nest(32)}}`)).toEqual(
      refused(
        problem(`/a${'/0'.repeat(31)}`, 'nesting_too_deep', 'The arguments are nested more than 32 levels deep.'),
      ),
    );
    expect(canonicalize({ type: 'object' }, `{"a":${nest(1_000_000)}}`)).toEqual(
      refused(problem(`/a${'/0'.repeat(31)}`, 'nesting_too_deep')),
    );
  });

  // The reader leaves a too-deep array item out of its array, so later items move up one index
  // and their problems are reported at the refused item's pointer. Fails today: the identifier
  // problem of the second item is reported at …/0 instead of …/1.
  it(verifies('args.every-problem', 'points at the right item after a too-deep sibling in an array'), () => {
    let items: JsonObject = { type: 'string', 'x-identifier': true };
    for (let level = 0; level < 31; level += 1) items = { type: 'array', items };
    const schema: JsonObject = { type: 'object', properties: { a: items } };
    const deep = `/a${'/0'.repeat(30)}`;
    expect(canonicalize(schema, `{"a":${'['.repeat(31)}[],"x y"${']'.repeat(31)}}`)).toEqual(
      refused(problem(`${deep}/0`, 'nesting_too_deep'), problem(`${deep}/1`, 'disallowed_character')),
    );
  });
});

describe(verifies('args.json-hazards', 'arguments that arrive already parsed'), () => {
  it(verifies('args.json-hazards', 'canonicalizes parsed arguments like read ones'), () => {
    const parsed: unknown = JSON.parse('{"vendor_id":" V-100 ","amount":"۱۵۰۰٫۰","currency":"EUR"}');
    expectCanonical(
      canonicalizeArguments(withValidator({ inputSchema: purchaseOrder }), readParsedArguments(parsed)),
      { vendor_id: 'V-100', amount: '1500', currency: 'EUR' },
      '{"amount":"1500","currency":"EUR","vendor_id":"V-100"}',
    );
  });

  // JSON.parse already rounded 12345678901234567890 to 12345678901234567168, so the "source text"
  // readParsedArguments passes on is the rounded one; the amount exemption from unsafe_integer
  // then lets a silently changed amount through. Fails today: accepted as "12345678901234567000".
  it(
    verifies('args.json-hazards', 'refuses a parsed amount beyond 2^53 instead of accepting its rounded value'),
    () => {
      const parsed: unknown = JSON.parse('{"vendor_id":"V-100","amount":12345678901234567890,"currency":"EUR"}');
      expect(canonicalizeArguments(withValidator({ inputSchema: purchaseOrder }), readParsedArguments(parsed))).toEqual(
        refused(problem('/amount', 'unsafe_integer')),
      );
    },
  );
});
