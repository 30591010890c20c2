// Clients loaded on first use: one load however many callers ask at once, and a failed load
// tried again by the next caller rather than remembered.
import { describe, expect, it } from 'vitest';
import { clientOf, onFirstUse } from '../../shared/adapters/on-first-use.js';
import { verifies } from '../support/requirements.js';

describe('onFirstUse', () => {
  it(
    verifies('perf.bundle-budget', 'loads once for callers that ask together, and not before the first asks'),
    async () => {
      let loads = 0;
      const client = onFirstUse(async () => {
        loads += 1;
        return { id: loads };
      });
      expect(loads).toBe(0);
      const [first, second] = await Promise.all([client(), client()]);
      expect(first).toBe(second);
      expect(await client()).toBe(first);
      expect(loads).toBe(1);
    },
  );

  it(verifies('perf.bundle-budget', 'tries a failed load again on the next use'), async () => {
    let loads = 0;
    const client = onFirstUse(async () => {
      loads += 1;
      if (loads === 1) throw new Error('not reachable yet');
      return { id: loads };
    });
    await expect(client()).rejects.toThrow('not reachable yet');
    expect(await client()).toEqual({ id: 2 });
    expect(loads).toBe(2);
  });

  it(verifies('perf.bundle-budget', 'takes a client given as is'), async () => {
    const given = { id: 'given' };
    expect(await clientOf(given)).toBe(given);
    expect(await clientOf(onFirstUse(async () => given))).toBe(given);
  });
});
