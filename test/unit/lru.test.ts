// The bounded map behind what the gateway remembers per instance (decisions, listings).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LruMap } from '../../shared/lru.js';
import { verifies } from '../support/requirements.js';

describe('LruMap', () => {
  it(verifies('policy.decision-memo', 'keeps at most its capacity, forgetting the least recently used'), () => {
    const map = new LruMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).toBe(1); // a is now the most recently used
    map.set('d', 4); // b goes
    expect(map.size).toBe(3);
    expect(map.get('b')).toBeUndefined();
    expect([map.get('a'), map.get('c'), map.get('d')]).toEqual([1, 3, 4]);
    map.set('c', 30); // replacing an entry forgets nothing
    expect(map.size).toBe(3);
    expect(map.get('c')).toBe(30);
    map.set('e', 5); // a is the least recently used now
    expect(map.get('a')).toBeUndefined();
    expect(map.get('d')).toBe(4);
  });

  it(verifies('policy.decision-memo', 'forgets in the order a list kept by last use would, whatever is asked'), () => {
    const operation = fc.record({ set: fc.boolean(), key: fc.constantFrom('a', 'b', 'c', 'd', 'e') });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(operation, { maxLength: 60 }), (capacity, operations) => {
        const map = new LruMap<string, number>(capacity);
        // The model: keys from least to most recently used, each with its value.
        let model: [string, number][] = [];
        operations.forEach(({ set, key }, step) => {
          const known = model.find(([candidate]) => candidate === key);
          if (set) {
            map.set(key, step);
            const entry: [string, number] = [key, step];
            model = [...model.filter(([candidate]) => candidate !== key), entry].slice(-capacity);
          } else {
            expect(map.get(key)).toBe(known?.[1]);
            if (known !== undefined) model = [...model.filter(([candidate]) => candidate !== key), known];
          }
          expect(map.size).toBe(model.length);
        });
      }),
      { numRuns: 500 },
    );
  });

  it(verifies('policy.decision-memo', 'refuses a capacity below one'), () => {
    expect(() => new LruMap(0)).toThrow(RangeError);
    expect(() => new LruMap(1.5)).toThrow(RangeError);
  });
});
