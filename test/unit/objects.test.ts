// setOwn: keys from outside become ordinary own data properties, whatever their name.
import { describe, expect, it } from 'vitest';
import { setOwn } from '../../shared/objects.js';
import { verifies } from '../support/requirements.js';

describe('setOwn', () => {
  it(verifies('args.json-hazards', 'adds __proto__, constructor and toString as own data, never a prototype'), () => {
    for (const target of [{} as Record<string, unknown>, Object.create(null) as Record<string, unknown>]) {
      const prototype: unknown = Object.getPrototypeOf(target);
      setOwn(target, '__proto__', { polluted: true });
      setOwn(target, 'constructor', 1);
      setOwn(target, 'toString', 'x');
      setOwn(target, 'constructor', 2);
      expect(Object.getPrototypeOf(target)).toBe(prototype);
      expect(Object.keys(target)).toEqual(['__proto__', 'constructor', 'toString']);
      expect(Object.getOwnPropertyDescriptor(target, '__proto__')).toEqual({
        value: { polluted: true },
        enumerable: true,
        writable: true,
        configurable: true,
      });
      expect(Object.getOwnPropertyDescriptor(target, 'constructor')?.value).toBe(2);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    }
  });

  it(verifies('args.json-hazards', 'writes array items as own data'), () => {
    const items: unknown[] = [];
    setOwn(items, 0, 'a');
    setOwn(items, 1, 'b');
    expect(items).toEqual(['a', 'b']);
  });
});
