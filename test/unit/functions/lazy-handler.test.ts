// A Lambda entry point is composed on its first invocation and reused for the container's life;
// a composition that throws is tried again on the next invocation.
import { describe, expect, it } from 'vitest';
import { lazyHandler } from '../../../functions/commons/lazy-handler.js';
import { verifies } from '../../support/requirements.js';

describe(verifies('functions.environment', 'the lazy Lambda entry point'), () => {
  it(
    verifies('functions.environment', 'builds nothing until invoked, then builds once and reuses the handler'),
    async () => {
      let builds = 0;
      const handler = lazyHandler(() => {
        builds += 1;
        const id = builds;
        return async (event: { readonly n: number }, label: string) => `${label}:${event.n * 2}:built-${id}`;
      });
      expect(builds).toBe(0);
      await expect(handler({ n: 1 }, 'a')).resolves.toBe('a:2:built-1');
      await expect(handler({ n: 5 }, 'b')).resolves.toBe('b:10:built-1');
      expect(builds).toBe(1);
    },
  );

  it(verifies('functions.environment', 'does not keep a build that threw: the next invocation builds again'), () => {
    const environment: { VALUE?: string } = {};
    let builds = 0;
    const handler = lazyHandler(() => {
      builds += 1;
      const value = environment.VALUE;
      if (value === undefined) throw new Error('VALUE: expected a value');
      return () => value;
    });
    expect(() => handler()).toThrow('VALUE: expected a value');
    expect(() => handler()).toThrow('VALUE: expected a value');
    environment.VALUE = 'ready';
    expect(handler()).toBe('ready');
    environment.VALUE = 'changed';
    expect(handler()).toBe('ready');
    expect(builds).toBe(3);
  });
});
