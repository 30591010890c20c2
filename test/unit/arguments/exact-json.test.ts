// JSON text for canonical arguments that may hold integers beyond 2^53 (as bigint): the canonical
// form is the `canonicalize` package's wherever there is no bigint, and stored text reads back exactly.
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxArgumentValues, maxArrayItems, readArguments } from '../../../shared/arguments/strict-json.js';
import {
  canonicalJsonText,
  exactJsonText,
  parseExactJson,
  parseStringifiable,
  stringifiable,
} from '../../../shared/wire/exact-json.js';
import { verifies } from '../../support/requirements.js';

describe(verifies('args.exact-integers', 'exact JSON text'), () => {
  it(
    verifies('args.exact-integers', 'writes the same canonical text as the canonicalize package for plain JSON'),
    () => {
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          // -0 is written 0 by both; the package has no bigint to compare.
          expect(canonicalJsonText(value)).toBe(canonicalize(value));
        }),
        { numRuns: 300 },
      );
    },
  );

  it(verifies('args.exact-integers', 'writes a bigint as its digits and reads such digits back as a bigint'), () => {
    const value = { b: [9007199254740993n, -12345678901234567890n, 1], a: { '10': 1, '9': 2 }, c: 2.5 };
    const canonical = canonicalJsonText(value);
    expect(canonical).toBe('{"a":{"10":1,"9":2},"b":[9007199254740993,-12345678901234567890,1],"c":2.5}');
    expect(exactJsonText({ z: 9007199254740993n, a: 1 })).toBe('{"z":9007199254740993,"a":1}');
    expect(parseExactJson(canonical)).toEqual(value);
    // Safe integers and fractions stay numbers.
    expect(parseExactJson('[9007199254740991,1e400,1.5]')).toEqual([9007199254740991, Number.POSITIVE_INFINITY, 1.5]);
    expect(() => JSON.stringify({ n: 1n })).toThrow();
  });

  it(
    verifies(
      'args.exact-integers',
      'reads text with or without long digit runs as the reviver reads it, digit for digit',
    ),
    () => {
      // Every integer form JSON has, with safe and unsafe magnitudes, in strings and keys as well.
      const integer = fc.oneof(fc.bigInt(), fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }));
      const exactValue = fc.letrec((tie) => ({
        value: fc.oneof(
          { depthSize: 'small' },
          integer,
          fc.jsonValue({ maxDepth: 0 }),
          fc.array(tie('value'), { maxLength: 4 }),
          fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
        ),
      })).value;
      const reviverReading = (text: string): unknown =>
        JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
          typeof value === 'number' && !Number.isSafeInteger(value) && /^-?(0|[1-9]\d*)$/.test(context?.source ?? '')
            ? BigInt(context?.source ?? '')
            : value,
        );
      fc.assert(
        fc.property(exactValue, (value) => {
          const text = exactJsonText(value);
          expect(parseExactJson(text)).toEqual(reviverReading(text));
          expect(JSON.stringify(parseStringifiable(text))).toBe(JSON.stringify(stringifiable(reviverReading(text))));
        }),
        { numRuns: 300 },
      );
    },
  );
});

describe(verifies('args.value-caps', 'what the reader builds past the caps'), () => {
  it(verifies('args.value-caps', 'reports too many values once and builds, and reports, nothing more'), () => {
    // Eleven arrays of 500 two-value elements (an array and its string): past the cap in the tenth.
    const chunk = `[${Array.from({ length: 500 }, () => '["\\ud800"]').join(',')}]`;
    const read = readArguments(`{"a":[${Array.from({ length: 11 }, () => chunk).join(',')}],"a":1}`, []);
    expect(read?.issues.filter((issue) => issue.code === 'too_many_values')).toEqual([
      { path: '', code: 'too_many_values' },
    ]);
    // Every value past the cap went unread: its lone surrogate is not reported, nor the duplicate key.
    expect(read?.issues.filter((issue) => issue.code === 'lone_surrogate').length).toBeLessThan(maxArgumentValues);
    expect(read?.issues.some((issue) => issue.code === 'duplicate_key')).toBe(false);
  });

  it(verifies('args.value-caps', 'stops an array at 1 000 items, keeps reading its siblings, and says where'), () => {
    const items = Array.from({ length: maxArrayItems + 5 }, (_, index) => String(index)).join(',');
    const read = readArguments(`{"x/y":{"list":[${items}]},"after":"\\ud800"}`, []);
    expect(read?.issues).toEqual([
      { path: '/x~1y/list', code: 'too_many_items' },
      { path: '/after', code: 'lone_surrogate' },
    ]);
    const value = read?.value;
    expect(value).toMatchObject({ 'x/y': { list: expect.any(Array) } });
    expect(JSON.stringify(value).split(',').length).toBe(maxArrayItems + 1);
  });
});
