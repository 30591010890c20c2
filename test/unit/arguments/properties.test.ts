// Properties of canonicalization over generated input: idempotent, blind to the spellings the
// reference calls equivalent, refusing by size exactly above 64 KB, and never throwing.
//
// Long: each property needs its own generator of hostile input.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Canonicalization,
  canonicalizeArguments,
  maxArgumentBytes,
  maxInputErrors,
} from '../../../shared/arguments/canonicalize.js';
import { readArguments, type StrictArguments } from '../../../shared/arguments/strict-json.js';
import { canonicalText } from '../../../shared/arguments/text-rules.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import { inputErrorCodes } from '../../../shared/errors.js';
import { setOwn } from '../../../shared/objects.js';
import { parseExactJson } from '../../../shared/wire/exact-json.js';
import { verifies } from '../../support/requirements.js';
import { withValidator } from '../../support/validators.js';
import { canonicalize, purchaseOrder } from './fixtures.js';

/** erp.purchase_orders.create as the catalog builds it from examples/erp/openapi.yaml. */
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

const accepted = (result: Canonicalization) => {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.errors)}`);
  return result.arguments;
};

// --- generators of valid purchase orders, each with its plain and its equivalent spellings ---

const latin = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzéüßÅøŁžŒ'];
const arabic = [...'ابتثجحخدذرزسشصضطظعغفقكلمنهويپچژکگی'];
const symbols = [...'0123456789-_./'];
const digit = fc.constantFrom(...'0123456789');

const vendorId = fc
  .constantFrom(latin, arabic)
  .chain((letters) => fc.string({ unit: fc.constantFrom(...letters, ...symbols), minLength: 1, maxLength: 40 }));

const space = fc.constantFrom(' ', '\t', '\n', '\r\n', '\u00a0', '\u3000', '  ');
const padding = fc.string({ unit: space, maxLength: 3 });

interface Amount {
  readonly negative: boolean;
  readonly integer: string;
  readonly fraction: string;
}

const amount: fc.Arbitrary<Amount> = fc.record({
  negative: fc.boolean(),
  integer: fc.string({ unit: digit, minLength: 1, maxLength: 25 }),
  fraction: fc.string({ unit: digit, maxLength: 12 }),
});

/** The canonical decimal, worked out here without the code under test. */
const canonicalAmount = ({ negative, integer, fraction }: Amount): string => {
  const whole = integer.replace(/^0+(?=\d)/, '');
  const part = fraction.replace(/0+$/, '');
  const text = part === '' ? whole : `${whole}.${part}`;
  return negative && /[1-9]/.test(text) ? `-${text}` : text;
};

const zeros = { ascii: 0x30, arabicIndic: 0x660, persian: 0x6f0 } as const;
type DigitScript = keyof typeof zeros;
const inScript = (digits: string, script: DigitScript): string =>
  digits.replace(/\d/g, (d) => String.fromCharCode(zeros[script] + Number(d)));

const description = fc.string({ unit: 'grapheme', maxLength: 40 });

interface Line {
  readonly sku: string;
  readonly quantity: number;
  readonly note: string | null;
}

const line: fc.Arbitrary<Line> = fc.record({
  sku: vendorId,
  quantity: fc.integer({ min: 1, max: 1_000_000 }),
  note: fc.option(description, { nil: null }),
});

interface Order {
  readonly vendorId: string;
  readonly amount: Amount;
  readonly currency: string;
  readonly description: string | null;
  readonly lines: readonly Line[] | null;
}

const order: fc.Arbitrary<Order> = fc.record({
  vendorId,
  amount,
  currency: fc.constantFrom('EUR', 'USD', 'GBP', 'SAR', 'AED'),
  description: fc.option(description, { nil: null }),
  lines: fc.option(fc.array(line, { maxLength: 3 }), { nil: null }),
});

/** How one order is spelled: digit script, zeros, white space, Unicode form, number or string. */
interface Spelling {
  readonly script: DigitScript;
  readonly arabicSeparator: boolean;
  readonly leadingZeros: number;
  readonly trailingZeros: number;
  readonly asNumber: boolean;
  readonly form: 'NFC' | 'NFD';
  readonly before: string;
  readonly after: string;
}

const plain: Spelling = {
  script: 'ascii',
  arabicSeparator: false,
  leadingZeros: 0,
  trailingZeros: 0,
  asNumber: false,
  form: 'NFC',
  before: '',
  after: '',
};

const spelling: fc.Arbitrary<Spelling> = fc.record({
  script: fc.constantFrom<DigitScript>('ascii', 'arabicIndic', 'persian'),
  arabicSeparator: fc.boolean(),
  leadingZeros: fc.integer({ min: 0, max: 3 }),
  trailingZeros: fc.integer({ min: 0, max: 3 }),
  asNumber: fc.boolean(),
  form: fc.constantFrom<'NFC' | 'NFD'>('NFC', 'NFD'),
  before: padding,
  after: padding,
});

/** The JSON text of the amount in this spelling (a JSON number only where the grammar allows). */
const amountText = (value: Amount, how: Spelling): string => {
  const integer = '0'.repeat(how.leadingZeros) + value.integer;
  const fraction = value.fraction + '0'.repeat(how.trailingZeros);
  const sign = value.negative ? '-' : '';
  if (how.asNumber) {
    const jsonInteger = value.integer.replace(/^0+(?=\d)/, '');
    return `${sign}${jsonInteger}${fraction === '' ? '' : `.${fraction}`}`;
  }
  const point = how.arabicSeparator && how.script !== 'ascii' ? '\u066b' : '.';
  const digits = `${inScript(integer, how.script)}${fraction === '' ? '' : `${point}${inScript(fraction, how.script)}`}`;
  return JSON.stringify(`${how.before}${sign}${digits}${how.after}`);
};

const text = (value: string, how: Spelling): string =>
  JSON.stringify(`${how.before}${value.normalize(how.form)}${how.after}`);

/** The arguments' JSON text of an order in a spelling. */
const orderText = (value: Order, how: Spelling): string => {
  const members = [
    `"vendor_id":${text(value.vendorId, how)}`,
    `"amount":${amountText(value.amount, how)}`,
    `"currency":${text(value.currency, how)}`,
  ];
  if (value.description !== null) members.push(`"description":${text(value.description, how)}`);
  if (value.lines !== null) {
    const lines = value.lines.map((item) => {
      const fields = [`"sku":${text(item.sku, how)}`, `"quantity":${item.quantity}`];
      if (item.note !== null) fields.push(`"note":${text(item.note, how)}`);
      return `{${fields.join(',')}}`;
    });
    members.push(`"lines":[${lines.join(',')}]`);
  }
  return `{${members.join(',')}}`;
};

/** The canonical JSON of an order, worked out here (keys in RFC 8785 order). */
const expectedJson = (value: Order): string => {
  const canonical: Record<string, unknown> = {
    amount: canonicalAmount(value.amount),
    currency: value.currency,
  };
  if (value.description !== null) canonical.description = canonicalText(value.description);
  if (value.lines !== null) {
    canonical.lines = value.lines.map((item) =>
      item.note === null
        ? { quantity: item.quantity, sku: canonicalText(item.sku) }
        : { note: canonicalText(item.note), quantity: item.quantity, sku: canonicalText(item.sku) },
    );
  }
  canonical.vendor_id = canonicalText(value.vendorId);
  return JSON.stringify(canonical);
};

describe(verifies('args.canonical-form', 'properties of the canonical form'), () => {
  it(
    verifies('args.canonical-form', 'is idempotent: the canonical value canonicalizes to the same json and hash'),
    () => {
      fc.assert(
        fc.property(order, spelling, (value, how) => {
          const first = accepted(canonicalize(purchaseOrder, orderText(value, how)));
          expect(first.json).toBe(expectedJson(value));
          expect(first.hash).toBe(sha256(first.json));
          const again = accepted(canonicalize(purchaseOrder, JSON.stringify(first.value)));
          expect(again).toEqual(first);
          // the stored serialization itself reads back to the same form
          expect(accepted(canonicalize(purchaseOrder, first.json))).toEqual(first);
        }),
        { numRuns: 300 },
      );
    },
  );

  it(
    verifies(
      ['args.canonical-form', 'args.amount-digits', 'args.text-normalization'],
      'gives one hash to inputs differing only by NFC/NFD, digit script, zeros and surrounding spaces',
    ),
    () => {
      fc.assert(
        fc.property(order, spelling, (value, how) => {
          const base = accepted(canonicalize(purchaseOrder, orderText(value, plain)));
          const variant = accepted(canonicalize(purchaseOrder, orderText(value, how)));
          expect(variant.hash).toBe(base.hash);
          expect(variant.json).toBe(base.json);
          expect(variant.value.amount).toBe(canonicalAmount(value.amount));
        }),
        { numRuns: 300 },
      );
    },
  );

  it(
    verifies(
      'args.amount-canonical',
      'reads an amount as the same decimal in every digit script, as a string or a JSON number',
    ),
    () => {
      fc.assert(
        fc.property(amount, spelling, (value, how) => {
          const schema: JsonObject = { type: 'object', properties: { amount: { 'x-amount': true } } };
          const result = accepted(canonicalize(schema, `{"amount":${amountText(value, how)}}`));
          expect(result.json).toBe(`{"amount":"${canonicalAmount(value)}"}`);
        }),
        { numRuns: 300 },
      );
    },
  );
});

describe(verifies('args.limits', 'the size rule over generated input'), () => {
  const open: JsonObject = {
    type: 'object',
    properties: { description: { type: 'string' }, note: { type: 'string' } },
    additionalProperties: false,
  };
  const piece = fc.constantFrom('a', 'é', 'ش', '۱', '€', '😀', '\n', '"', '\\', '\u0001', ' x ');
  const target = fc.oneof(
    fc.integer({ min: 0, max: 72_000 }),
    fc.integer({ min: maxArgumentBytes - 40, max: maxArgumentBytes + 40 }),
  );
  /** A text of about `size` bytes once serialized: a random head, then one piece repeated. */
  const sized = fc
    .record({ head: fc.string({ unit: 'grapheme', maxLength: 20 }), piece, size: target })
    .map(({ head, piece: unit, size }) => {
      const unitBytes = bytes(JSON.stringify(unit)) - 2;
      return `${head}${unit.repeat(Math.max(0, Math.floor((size - bytes(head)) / unitBytes)))}`;
    });

  it(verifies('args.limits', 'accepts valid input exactly when its canonical form is at most 65 536 bytes'), () => {
    fc.assert(
      fc.property(sized, fc.option(fc.string({ unit: 'grapheme', maxLength: 30 }), { nil: null }), (big, note) => {
        const input = note === null ? { description: big } : { description: big, note };
        const canonical: Record<string, string> = { description: canonicalText(big) };
        if (note !== null) canonical.note = canonicalText(note);
        const json = JSON.stringify(canonical);
        const result = canonicalize(open, JSON.stringify(input));
        if (bytes(json) <= maxArgumentBytes) {
          expect(accepted(result).json).toBe(json);
        } else {
          expect(result).toEqual({
            ok: false,
            errors: [{ path: '', code: 'arguments_too_large', message: inputErrorCodes.arguments_too_large }],
          });
        }
      }),
      { numRuns: 250 },
    );
  });

  it(
    verifies('args.limits', 'accepts a valid purchase order with long line notes exactly when it fits in 64 KB'),
    () => {
      const note = fc
        .record({ unit: piece, count: fc.integer({ min: 0, max: 20_000 }) })
        .map(({ unit, count }) => unit.repeat(Math.floor(count / [...unit].length)));
      const bigOrder = fc.record({
        vendorId,
        amount,
        currency: fc.constantFrom('EUR', 'SAR'),
        description: fc.constant(null),
        lines: fc.array(fc.record({ sku: vendorId, quantity: fc.integer({ min: 1, max: 99 }), note }), {
          minLength: 1,
          maxLength: 4,
        }),
      });
      fc.assert(
        fc.property(bigOrder, (value) => {
          const json = expectedJson(value);
          const result = canonicalize(purchaseOrder, orderText(value, plain));
          if (bytes(json) <= maxArgumentBytes) expect(accepted(result).json).toBe(json);
          else {
            expect(result).toEqual({
              ok: false,
              errors: [{ path: '', code: 'arguments_too_large', message: inputErrorCodes.arguments_too_large }],
            });
          }
        }),
        { numRuns: 150 },
      );
    },
  );
});

// --- refusals never throw ---

const tool = { type: 'object' } satisfies JsonObject;
const nested: JsonObject = {
  type: 'object',
  properties: {
    a: { type: 'array', items: { 'x-amount': true, type: ['string', 'number'], minimum: 0 } },
    b: { type: 'object', additionalProperties: { type: 'string', 'x-identifier': true } },
    c: { 'x-amount': true, exclusiveMaximum: 100 },
  },
  required: ['a'],
};
const schemas: readonly JsonObject[] = [purchaseOrder, tool, nested];

const isSorted = (paths: readonly string[]) =>
  paths.every((path, index) => index === 0 || (paths[index - 1] ?? '') <= path);

/** What every answer must look like, whatever the input. */
const checkAnswer = (input: StrictArguments) => {
  for (const schema of schemas) {
    const result = canonicalizeArguments(withValidator({ inputSchema: schema }), input);
    if (result.ok) {
      expect(bytes(result.arguments.json)).toBeLessThanOrEqual(maxArgumentBytes);
      expect(result.arguments.hash).toBe(sha256(result.arguments.json));
      // Integers beyond 2^53 are bigints in the value and digits in the text: read back exactly.
      expect(parseExactJson(result.arguments.json)).toEqual(result.arguments.value);
      continue;
    }
    expect(result.errors.length).toBeGreaterThan(0);
    for (const error of result.errors) {
      expect(error.path === '' || error.path.startsWith('/')).toBe(true);
      expect(Object.hasOwn(inputErrorCodes, error.code)).toBe(true);
      expect(typeof error.message).toBe('string');
      expect(error.message.length).toBeGreaterThan(0);
    }
    expect(result.errors.length).toBeLessThanOrEqual(maxInputErrors + 1);
    const listed = result.errors.filter((error) => error.code !== 'more_errors');
    expect(isSorted(listed.map((error) => error.path))).toBe(true);
  }
};

const message = (args: string): string =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"erp.purchase_orders.create","arguments":${args}}}`;

/** Reads the text bare and as a message body; both answers are checked when they are JSON. */
const readAndCheck = (text: string) => {
  for (const focus of [[], ['params', 'arguments']] as const) {
    const input = readArguments(text, focus);
    if (input !== null) checkAnswer(input);
  }
};

const token = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  '"',
  ':',
  ',',
  '\\',
  '\\u',
  'd800',
  '\\ud800',
  '\\udc00',
  '\ud800',
  '\udfff',
  '1',
  '-',
  '.',
  'e',
  '0',
  '1e400',
  '9007199254740993',
  '"__proto__"',
  '"constructor"',
  '"amount"',
  '"vendor_id"',
  '"١,٥٠٠"',
  '"V-ف"',
  'true',
  'null',
  ' ',
  '"a"',
  '"e\u0301"',
  '"\u00e9"',
);

interface Edit {
  readonly at: number;
  readonly remove: number;
  readonly insert: string;
}

const edits = fc.array(
  fc.record({ at: fc.nat(), remove: fc.integer({ min: 0, max: 3 }), insert: fc.oneof(token, fc.constant('')) }),
  { minLength: 1, maxLength: 5 },
);

const mutate = (source: string, changes: readonly Edit[]): string =>
  changes.reduce((current, change) => {
    const at = current.length === 0 ? 0 : change.at % (current.length + 1);
    return current.slice(0, at) + change.insert + current.slice(at + change.remove);
  }, source);

const deep = fc.record({
  levels: fc.integer({ min: 1, max: 5000 }),
  open: fc.constantFrom('[', '{"a":', '{"__proto__":', '[1,'),
  inner: fc.oneof(fc.json({ maxDepth: 2 }), token),
  closed: fc.boolean(),
  prefix: fc.constantFrom('', '{"params":{"arguments":', '{"id":'),
});

describe(verifies('args.json-hazards', 'a refusal never throws'), () => {
  it(verifies('args.json-hazards', 'survives arbitrary JSON (ASCII and any Unicode)'), () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.json(), fc.json({ stringUnit: 'binary' }), fc.json({ stringUnit: 'grapheme' })),
        (json) => {
          readAndCheck(json);
          readAndCheck(message(json));
        },
      ),
      { numRuns: 400 },
    );
  });

  it(verifies('args.json-hazards', 'survives arbitrary text, lone surrogates and token soup'), () => {
    const lone = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.string({ unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), lone) }),
          fc.string({ unit: token, maxLength: 60 }),
        ),
        (text) => {
          readAndCheck(text);
          readAndCheck(message(text));
        },
      ),
      { numRuns: 400 },
    );
  });

  it(verifies('args.every-problem', 'survives mutated valid messages and answers ok or listed problems'), () => {
    fc.assert(
      fc.property(order, spelling, edits, (value, how, changes) => {
        readAndCheck(mutate(message(orderText(value, how)), changes));
        readAndCheck(mutate(orderText(value, how), changes));
      }),
      { numRuns: 400 },
    );
  });

  it(verifies('args.limits', 'survives deep nesting, open or closed, anywhere in the message'), () => {
    fc.assert(
      fc.property(deep, ({ levels, open, inner, closed, prefix }) => {
        const close = open === '[' || open === '[1,' ? ']' : '}';
        const body = `${open.repeat(levels)}${inner}${closed ? close.repeat(levels) : ''}`;
        const suffix = prefix === '' ? '' : prefix === '{"id":' ? ',"params":{"arguments":{}}}' : '}}';
        readAndCheck(`${prefix}${body}${suffix}`);
        readAndCheck(message(body));
      }),
      { numRuns: 200 },
    );
  });

  it(verifies('args.json-hazards', 'survives generated arguments objects with hazards spliced in'), () => {
    const hazard = fc.constantFrom(
      '"__proto__":{"x":1}',
      '"a":1,"a":2',
      '"n":1e400',
      '"n":12345678901234567890',
      '"s":"\\ud800"',
      '"\\udc00":0',
      '"amount":"١,٥٠٠"',
      '"vendor_id":"V\\u202e1"',
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), fc.array(hazard), (object, extra) => {
        const base = JSON.stringify(object);
        const args =
          extra.length === 0 ? base : `{${[...extra, base.slice(1, -1)].filter((part) => part !== '').join(',')}}`;
        readAndCheck(args);
        readAndCheck(message(args));
      }),
      { numRuns: 300 },
    );
  });
});

/** A parsed value with its keys in NFC, as the reader stores them. */
const nfcKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(nfcKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    setOwn(out, key.normalize('NFC'), nfcKeys(child));
  }
  return out;
};

describe(verifies('args.json-hazards', 'the reader against JSON.parse'), () => {
  it(
    verifies('args.json-hazards', 'accepts exactly the texts JSON.parse accepts, and reads hazard-free ones the same'),
    () => {
      const candidate = fc.oneof(
        fc.json(),
        fc.string({ unit: token, maxLength: 40 }),
        fc.tuple(fc.json(), edits).map(([json, changes]) => mutate(json, changes)),
      );
      fc.assert(
        fc.property(candidate, (text) => {
          let parsed: { value: unknown } | null = null;
          try {
            parsed = { value: JSON.parse(text) };
          } catch {
            parsed = null;
          }
          const read = readArguments(text, []);
          expect(read === null).toBe(parsed === null);
          if (read !== null && parsed !== null && read.issues.length === 0)
            expect(read.value).toEqual(nfcKeys(parsed.value));
        }),
        { numRuns: 500 },
      );
    },
  );
});
