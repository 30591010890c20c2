// The embedded store over time and under faults: every query and scan ends its cursor (an open
// one pins old store files and memory), and open calls are found from their records whatever
// the index says.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { decidableBy } from '../../shared/use-cases/approver-decisions.js';
import { anExecution, humanStep } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';

const iso = (offsetMs: number) => new Date(Date.parse('2026-11-29T12:00:00.000Z') + offsetMs).toISOString();

const everyPage = async (list: (cursor: string | undefined) => ReturnType<ExecutionStore['listOpen']>) => {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor);
    ids.push(...page.items.map((item) => item.execution_id));
    cursor = page.next;
  } while (cursor !== undefined);
  return ids;
};

describe.each(['on disk', 'in memory'] as const)('the embedded store’s cursors, %s', (where) => {
  let folder: string;
  let local: TestStore;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'gateway-cursors-'));
    local = await startTestStore(where === 'on disk' ? join(folder, 'dynamodb') : null, 'gateway-executions');
  });
  afterAll(async () => {
    await local?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it(
    verifies('local.store-cursors-ended', 'ends every cursor of a query or scan, also those stopped by their limit'),
    async () => {
      const open = Array.from({ length: 30 }, (_, index) =>
        anExecution({
          agent_id: 'cursor-agent',
          status: index % 3 === 0 ? 'approved' : 'pending_approval',
          expires_at: iso(index * 1_000),
          decision: {
            effect: 'allow',
            reason: null,
            determining: [],
            step: humanStep({ staff: 'finance', customer: false }),
            config_version: 'v1',
          },
        }),
      );
      for (const execution of open) await local.store.create(execution);
      for (const done of Array.from({ length: 10 }, () => anExecution({ status: 'succeeded' }))) {
        await local.store.create(done);
      }
      expect(local.dynamodb.openCursors()).toBe(0);

      // The queries restart recovery and the console inbox make, many times over: pages that stop
      // at their limit, reads by id (limit 2), an agent's newest call (limit 1), scans.
      for (let round = 0; round < 5; round++) {
        const listed = await everyPage((cursor) => local.store.listOpen({ limit: 7, ...(cursor ? { cursor } : {}) }));
        expect(listed.sort()).toEqual(open.map((execution) => execution.execution_id).sort());
        const scanned = await everyPage((cursor) => local.store.scanOpen({ limit: 4, ...(cursor ? { cursor } : {}) }));
        expect(scanned.sort()).toEqual(open.map((execution) => execution.execution_id).sort());
        const inbox = await decidableBy(
          { store: local.store, clock: systemClock },
          { id: 'finance-approver', name: null, groups: ['finance'] },
          5,
        );
        expect(inbox).toHaveLength(5);
        for (const execution of open.slice(0, 5)) {
          expect((await local.store.get(execution.execution_id))?.execution_id).toBe(execution.execution_id);
        }
        expect((await local.store.listByAgent('cursor-agent', { limit: 1 })).items).toHaveLength(1);
        // Between requests, nothing is left open.
        expect(local.dynamodb.openCursors()).toBe(0);
      }
    },
  );
});

describe('open calls read from their records', () => {
  let local: TestStore;
  beforeAll(async () => {
    local = await startTestStore(null, 'scan-executions');
  });
  afterAll(async () => {
    await local?.close();
  });

  it(
    verifies(
      'store.open-calls-from-records',
      'finds an open call whose index entry is gone, and skips calls that ended',
    ),
    async () => {
      const open = anExecution({ status: 'approved', claimed_at: iso(0), deadline_at: iso(10_000) });
      await local.store.create(open);
      const ended = anExecution({ status: 'succeeded' });
      await local.store.create(ended);
      // What a crash between a call's index entry and its record leaves: the index says it ended.
      await local.dynamodb.documents.send(
        new UpdateCommand({
          TableName: 'scan-executions',
          Key: { execution_id: open.execution_id, agent_id: open.agent_id },
          UpdateExpression: 'REMOVE open_shard, open_until',
        }),
      );
      expect((await local.store.listOpen()).items).toEqual([]);
      const scanned = await everyPage((cursor) => local.store.scanOpen({ limit: 1, ...(cursor ? { cursor } : {}) }));
      expect(scanned).toEqual([open.execution_id]);
    },
  );
});

describe('the in-memory store’s size', () => {
  it(
    verifies(
      'local.memory-per-call',
      'keeps each key and record in a buffer of its own size, never a slice pinning a shared slab',
    ),
    async () => {
      const local = await startTestStore(null, 'memory-executions');
      try {
        for (let index = 0; index < 200; index++) {
          await local.store.create(
            anExecution({
              status: 'succeeded',
              result_json: JSON.stringify({ id: 'PO-1', vendor_id: 'V-100', amount: '250.00', status: 'open' }),
            }),
          );
        }
        // Small buffers are slices of Node's shared 8 KB pool: one kept slice keeps its whole slab,
        // about 10 KB per call where the call holds about 1.5 KB.
        expect(await local.dynamodb.sharedBuffersKept()).toBe(0);
      } finally {
        await local.close();
      }
    },
  );
});
