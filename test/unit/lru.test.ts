// The bounded map behind what the gateway remembers per instance (decisions, listings).
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

  it(verifies('policy.decision-memo', 'refuses a capacity below one'), () => {
    expect(() => new LruMap(0)).toThrow(RangeError);
    expect(() => new LruMap(1.5)).toThrow(RangeError);
  });
});
