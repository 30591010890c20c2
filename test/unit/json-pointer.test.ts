import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPointer, parseJsonPointer, pointerSegment, pointerValue } from '../../shared/json-pointer.js';
import { verifies } from '../support/requirements.js';

const key = fc.oneof(
  fc.string(),
  fc.constantFrom('', '~', '/', '~0', '~1', '~01', '/~', 'a/b~c', 'é', '日本', '🙂/~'),
  fc.string({ unit: fc.constantFrom('~', '/', '0', '1', 'a', 'é', '😀') }),
);

describe(verifies('args.every-problem', 'JSON Pointers (RFC 6901)'), () => {
  it(verifies('args.every-problem', 'reads back exactly the keys it was built from, whatever they hold'), () => {
    fc.assert(
      fc.property(fc.array(key, { maxLength: 6 }), (keys) => {
        expect(parseJsonPointer(jsonPointer(keys))).toEqual(keys);
      }),
    );
  });

  it(verifies('args.every-problem', 'escapes ~ as ~0 and / as ~1, and names the whole document with ""'), () => {
    expect(jsonPointer(['a/b', 'm~n', '', 0])).toBe('/a~1b/m~0n//0');
    expect(pointerSegment('~1')).toBe('/~01');
    expect(jsonPointer([])).toBe('');
    expect(parseJsonPointer('')).toEqual([]);
    expect(parseJsonPointer('/')).toEqual(['']);
    expect(parseJsonPointer('/~01')).toEqual(['~1']);
  });

  it(verifies('args.every-problem', 'reads a pointer that does not start with "/" as naming nothing'), () => {
    expect(parseJsonPointer('code')).toBeNull();
    expect(pointerValue({ code: 'x' }, 'code')).toBeUndefined();
  });

  it(verifies('args.every-problem', 'finds a value through own properties only'), () => {
    const document = JSON.parse('{"error":{"a/b":{"~":"found"}},"__proto__":{"x":1},"list":["zero"]}');
    expect(pointerValue(document, '/error/a~1b/~0')).toBe('found');
    expect(pointerValue(document, '/__proto__/x')).toBe(1);
    expect(pointerValue(document, '')).toBe(document);
    expect(pointerValue(document, '/constructor')).toBeUndefined();
    expect(pointerValue(document, '/error/toString')).toBeUndefined();
    expect(pointerValue(document, '/list/0')).toBeUndefined();
    expect(pointerValue(document, '/missing/deeper')).toBeUndefined();
  });
});
