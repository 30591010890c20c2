// The console's session list, the same rules in both adapters: the table's (dynalite, as in AWS
// and the local runtime) and the in-memory one the tests use. A session starts once, is read back
// whole, its last use moves on only from what was read, and an ended one stays ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbSessionStore } from '../../shared/adapters/dynamodb/console-sessions.js';
import { MemorySessionStore } from '../../shared/adapters/memory/console-sessions.js';
import type { SessionStore } from '../../shared/sessions/session-store.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';

let local: TestStore;
beforeAll(async () => {
  local = await startTestStore(null, 'console-sessions');
});
afterAll(async () => {
  await local?.close();
});

const adapters: [string, () => SessionStore][] = [
  ['the table', () => new DynamoDbSessionStore(local.dynamodb.documents, 'console-sessions')],
  ['memory', () => new MemorySessionStore()],
];

describe.each(adapters)('the session list in %s', (_name, storeOf) => {
  const session = { use: 'session' as const, subject: 'farah', csrf: 'token', seenAt: 1_000, expiresAt: 9_000 };

  it(verifies('console.session-revocable', 'keeps a session, ends it for good, and starts an id once'), async () => {
    const store = storeOf();
    await store.start('s-1', session);
    expect(await store.get('s-1')).toEqual({ ...session, ended: false });
    expect(await store.get('s-2')).toBeNull();
    await expect(store.start('s-1', session)).rejects.toThrow();
    await store.end('s-1', 2_000);
    await store.end('s-1', 3_000);
    await store.end('s-unknown', 3_000);
    expect(await store.get('s-1')).toEqual({ ...session, ended: true });
    expect(await store.get('s-unknown')).toBeNull();
  });

  it(
    verifies('console.session-idle', 'moves the last use on only from the one read, never after the end'),
    async () => {
      const store = storeOf();
      await store.start('s-3', session);
      await store.touch('s-3', 1_000, 61_000);
      // A request that read the old value loses its race, harmlessly.
      await store.touch('s-3', 1_000, 62_000);
      expect((await store.get('s-3'))?.seenAt).toBe(61_000);
      await store.end('s-3', 70_000);
      await store.touch('s-3', 61_000, 121_000);
      expect(await store.get('s-3')).toMatchObject({ seenAt: 61_000, ended: true });
    },
  );
});
