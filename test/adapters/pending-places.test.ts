// The pending_calls limit against dynalite: one conditional write takes a place, concurrent holds
// never take more places than the limit, leaving pending_approval gives the place back, and places
// left behind by a crash are given back the next time the agent is found at its limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidV7Ids } from '../../shared/ids.js';
import { takePendingPlace, unrecordedGraceMs } from '../../shared/limits/pending-quota.js';
import { ManualClock } from '../support/clock.js';
import { anExecution } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';

let local: TestStore;
beforeAll(async () => {
  local = await startTestStore();
});
afterAll(async () => {
  await local.close();
});

const holders = async (agentId: string): Promise<readonly string[]> => {
  // A limit of 0 is always full, so the answer lists every place taken.
  const answer = await local.store.reservePending(agentId, uuidV7Ids.next(), 0);
  return answer.kind === 'full' ? [...answer.holders].sort() : [];
};

describe('pending places in the store', () => {
  it(
    verifies('limits.pending-store-race-safe', 'concurrent holds of one agent take at most its limit of places'),
    async () => {
      const agent = 'racing-agent';
      const ids = Array.from({ length: 12 }, () => uuidV7Ids.next());
      const answers = await Promise.all(ids.map((id) => local.store.reservePending(agent, id, 5)));
      const reserved = ids.filter((_, index) => answers[index]?.kind === 'reserved');
      expect(reserved).toHaveLength(5);
      expect(await holders(agent)).toEqual([...reserved].sort());
    },
  );

  it(
    verifies(
      'limits.pending-store-race-safe',
      'taking the same place twice counts once, and giving it back twice frees one',
    ),
    async () => {
      const agent = 'idempotent-agent';
      const [first, second] = [uuidV7Ids.next(), uuidV7Ids.next()];
      expect(await local.store.reservePending(agent, first, 2)).toEqual({ kind: 'reserved' });
      expect(await local.store.reservePending(agent, first, 2)).toEqual({ kind: 'reserved' });
      expect(await local.store.reservePending(agent, second, 2)).toEqual({ kind: 'reserved' });
      // Full now, but a retry of a call already holding a place still holds it.
      expect(await local.store.reservePending(agent, first, 2)).toEqual({ kind: 'reserved' });
      expect(await local.store.reservePending(agent, uuidV7Ids.next(), 2)).toMatchObject({ kind: 'full' });
      await local.store.releasePending(agent, [first]);
      await local.store.releasePending(agent, [first]);
      expect(await holders(agent)).toEqual([second]);
      await local.store.releasePending('agent-with-no-places', [first]);
    },
  );

  it(
    verifies('limits.pending-released-on-leave', 'a held call that leaves pending_approval gives its place back'),
    async () => {
      const agent = 'leaving-agent';
      const execution = anExecution({ agent_id: agent, status: 'pending_approval' });
      await local.store.create(execution);
      await local.store.reservePending(agent, execution.execution_id, 1);
      expect(await holders(agent)).toEqual([execution.execution_id]);
      const key = { execution_id: execution.execution_id, agent_id: agent };
      const moved = await local.store.transition(key, {
        from: 'pending_approval',
        to: 'rejected',
        at: new Date().toISOString(),
      });
      expect(moved.kind).toBe('applied');
      expect(await holders(agent)).toEqual([]);
      // The places item is no execution: listings and reads by id never see it.
      expect((await local.store.listByAgent(agent)).items.map((item) => item.execution_id)).toEqual([
        execution.execution_id,
      ]);
    },
  );

  it(
    verifies(
      'limits.pending-self-repair',
      'at the limit, places of calls no longer waiting or never recorded are given back',
    ),
    async () => {
      const agent = 'crashed-agent';
      const clock = new ManualClock(Date.now());
      const deps = { store: local.store, clock };
      // A held call decided while the place was not given back (a crash between the two writes).
      const decided = anExecution({ agent_id: agent, status: 'rejected' });
      await local.store.create(decided);
      await local.store.reservePending(agent, decided.execution_id, 3);
      // A place taken for a call whose record was never written (a crash before it).
      const unrecorded = uuidV7Ids.next();
      await local.store.reservePending(agent, unrecorded, 3);
      // A call still waiting keeps its place.
      const waiting = anExecution({
        agent_id: agent,
        status: 'pending_approval',
        expires_at: new Date(clock.now() + 3_600_000).toISOString(),
      });
      await local.store.create(waiting);
      await local.store.reservePending(agent, waiting.execution_id, 3);

      // The unrecorded place may still be in the middle of being recorded: only the decided one goes.
      const next = anExecution({ agent_id: agent, expires_at: waiting.expires_at });
      expect(await takePendingPlace(deps, next, 3)).toBe(true);
      await local.store.create(next);
      expect(await holders(agent)).toEqual([unrecorded, waiting.execution_id, next.execution_id].sort());
      expect(await takePendingPlace(deps, anExecution({ agent_id: agent }), 3)).toBe(false);

      clock.advance(2 * unrecordedGraceMs);
      const after = anExecution({ agent_id: agent });
      expect(await takePendingPlace(deps, after, 3)).toBe(true);
      expect(await holders(agent)).toEqual([waiting.execution_id, next.execution_id, after.execution_id].sort());
    },
  );
});
