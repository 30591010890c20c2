// The call keys of the execution store port, one suite every adapter runs (DynamoDB against
// dynalite, the in-memory store): a key is claimed once however many race for it, is the agent's
// own, answers with the call it names, is replaced only while it still names the call replaced,
// and is never seen by a read or listing of calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallKey, heldCallDigest, idempotencyDigest } from '../../shared/executions/call-keys.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { verifies } from '../support/requirements.js';

export interface OpenedKeyStore {
  readonly store: ExecutionStore;
  close(): Promise<void>;
}

const keyFor = (agent: string, name: string, fields: Partial<CallKey> = {}): CallKey => ({
  agent_id: agent,
  digest: idempotencyDigest(name),
  execution_id: uuidV7Ids.next(),
  tool: 'erp.orders.create',
  arguments_hash: 'a'.repeat(64),
  retain_until: 1_900_000_000,
  ...fields,
});

export const callKeysContract = (name: string, open: () => Promise<OpenedKeyStore>): void => {
  describe(`${name} keeps call keys`, () => {
    let opened: OpenedKeyStore;
    let store: ExecutionStore;
    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    it(
      verifies('store.call-keys', 'claims a key once among racers, and answers the others with the winner'),
      async () => {
        const racers = Array.from({ length: 8 }, () => keyFor('racing-agent', 'k-1'));
        const claims = await Promise.all(racers.map((key) => store.claimCallKey(key)));
        const won = claims.flatMap((claim, index) => (claim.kind === 'claimed' ? [racers[index]] : []));
        expect(won).toHaveLength(1);
        for (const claim of claims.filter((each) => each.kind === 'taken')) {
          expect(claim).toEqual({ kind: 'taken', current: won[0] });
        }
      },
    );

    it(verifies('store.call-keys', "keeps each agent's keys apart, and each kind of key apart"), async () => {
      const mine = keyFor('agent-a', 'shared-name');
      expect(await store.claimCallKey(mine)).toEqual({ kind: 'claimed' });
      expect(await store.claimCallKey(keyFor('agent-b', 'shared-name'))).toEqual({ kind: 'claimed' });
      const held = keyFor('agent-a', '', { digest: heldCallDigest(null, mine.tool, mine.arguments_hash) });
      expect(await store.claimCallKey(held)).toEqual({ kind: 'claimed' });
      expect(await store.claimCallKey(keyFor('agent-a', 'shared-name'))).toEqual({ kind: 'taken', current: mine });
    });

    it(
      verifies('store.call-keys', 'replaces a key only while it names the call replaced, one replacer winning'),
      async () => {
        const first = keyFor('replacing-agent', 'k-2');
        await store.claimCallKey(first);
        const stale = keyFor('replacing-agent', 'k-2');
        expect(await store.claimCallKey(stale, uuidV7Ids.next())).toEqual({ kind: 'taken', current: first });
        const replacers = Array.from({ length: 5 }, () => keyFor('replacing-agent', 'k-2', { arguments_hash: 'b' }));
        const claims = await Promise.all(replacers.map((key) => store.claimCallKey(key, first.execution_id)));
        expect(claims.filter((claim) => claim.kind === 'claimed')).toHaveLength(1);
        // Replacing a key no one holds is claiming it.
        expect(await store.claimCallKey(keyFor('replacing-agent', 'k-3'), first.execution_id)).toEqual({
          kind: 'claimed',
        });
      },
    );

    it(verifies('store.call-keys', 'is seen by no read or listing of calls'), async () => {
      const key = keyFor('hidden-agent', 'k-4');
      await store.claimCallKey(key);
      expect(await store.get(key.execution_id)).toBeUndefined();
      expect((await store.listByAgent('hidden-agent')).items).toEqual([]);
      expect((await store.scanOpen({ limit: 1_000 })).items.map((item) => item.agent_id)).not.toContain('hidden-agent');
      expect((await store.listOpen({ limit: 1_000 })).items.map((item) => item.agent_id)).not.toContain('hidden-agent');
    });
  });
};
