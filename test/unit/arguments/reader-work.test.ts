// Work per request, counted rather than timed: reading and canonicalizing a call's arguments
// builds no JSON Pointer per value (a pointer is built where a problem or an inexact number needs
// one), so the cost grows with the size of the input and not with its depth times its size.
import { describe, expect, it, vi } from 'vitest';
import { verifies } from '../../support/requirements.js';
import { withValidator } from '../../support/validators.js';

const pointers = vi.hoisted(() => ({ built: 0 }));
vi.mock('../../../shared/json-pointer.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../shared/json-pointer.js')>();
  return {
    ...original,
    jsonPointer: (segments: readonly (string | number)[]) => {
      pointers.built += 1;
      return original.jsonPointer(segments);
    },
  };
});

const { canonicalizeArguments } = await import('../../../shared/arguments/canonicalize.js');
const { readArguments } = await import('../../../shared/arguments/strict-json.js');

const lines = (count: number) =>
  `{"lines":[${Array.from({ length: count }, (_, index) => `{"sku":"S-${index}","quantity":${index},"price":1.5,"deep":{"a":{"b":[true,null]}}}`).join(',')}]}`;

describe(verifies('args.linear-reader', 'the work one call costs'), () => {
  it(
    verifies(
      'args.linear-reader',
      'reads and canonicalizes 600 lines (5 400 values) without building a pointer per value',
    ),
    () => {
      pointers.built = 0;
      const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":${lines(600)}}}`;
      const read = readArguments(text);
      expect(read?.issues).toEqual([]);
      const result = canonicalizeArguments(
        withValidator({ inputSchema: { type: 'object' } }),
        read ?? { value: {}, numbers: new Map(), issues: [] },
      );
      expect(result.ok).toBe(true);
      expect(pointers.built).toBe(0);
    },
  );

  it(
    verifies(
      'args.linear-reader',
      'keeps number text only where a double would change it, so plain numbers cost no pointer',
    ),
    () => {
      const read = readArguments(lines(500), []);
      expect(read?.numbers.size).toBe(0);
      expect(readArguments('{"a":[1.50,2,9007199254740993]}', [])?.numbers).toEqual(
        new Map([
          ['/a/0', '1.50'],
          ['/a/2', '9007199254740993'],
        ]),
      );
    },
  );
});
