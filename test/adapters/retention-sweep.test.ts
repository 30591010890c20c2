// settings.retention locally: the embedded store (dynalite, which has no time to live) is swept of
// the items whose retain_until has passed, by DynamoDB's rule, and nothing else: records still
// within their retention and calls still open (no date) stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localTableNames } from '../../infra/local/dynamodb.js';
import { startRetentionSweep } from '../../infra/local/retention-sweep.js';
import { DynamoDbConnectionClaims } from '../../shared/adapters/dynamodb/connection-claims.js';
import { deleteExpiredItems } from '../../shared/adapters/dynamodb/expired-items.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { idempotencyDigest } from '../../shared/executions/call-keys.js';
import { ManualClock } from '../support/clock.js';
import { anExecution } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';

const dayMs = 86_400_000;
const madeAt = Date.parse('2026-01-10T12:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();

let bed: TestStore;
beforeAll(async () => {
  bed = await startTestStore(null, localTableNames.executions);
});
afterAll(async () => {
  await bed?.close();
});

/** A final call kept `days` days, made at madeAt; a pending one; their ids. */
const seed = async (retentionDays: number) => {
  const final = anExecution({
    status: 'succeeded',
    created_at: at(madeAt),
    updated_at: at(madeAt),
    retention_s: retentionDays * 86_400,
  });
  const open = anExecution({ status: 'pending_approval', created_at: at(madeAt), updated_at: at(madeAt) });
  await bed.store.create(final);
  await bed.store.create(open);
  return { final: final.execution_id, open: open.execution_id };
};

describe('the local retention sweep', () => {
  it(
    verifies(
      ['retention.local-sweep', 'store.call-keys'],
      'deletes what is past its retain_until and keeps what is not, open calls and call keys included',
    ),
    async () => {
      const short = await seed(1);
      const long = await seed(30);
      // A /tool/call-tool connection claim carries the same attribute (a day).
      const claims = new DynamoDbConnectionClaims(
        bed.dynamodb.documents,
        localTableNames.executions,
        new ManualClock(madeAt),
      );
      expect(await claims.claim('connection-1', 'procurement-agent')).toBe(true);
      // A call key dated like the one-day call's record.
      const key = {
        agent_id: 'procurement-agent',
        digest: idempotencyDigest('order-1'),
        execution_id: short.final,
        tool: 'erp.orders.create',
        arguments_hash: 'a'.repeat(64),
        retain_until: Math.floor((madeAt + dayMs) / 1000),
      };
      expect(await bed.store.claimCallKey(key)).toEqual({ kind: 'claimed' });
      // Two days later: the one-day call, the claim and the key are past their date, nothing else.
      const swept = await deleteExpiredItems(
        bed.dynamodb.documents,
        localTableNames.executions,
        executionsTable,
        Math.floor((madeAt + 2 * dayMs) / 1000),
      );
      expect(swept).toEqual({ deleted: 3, more: false });
      expect(await bed.store.get(short.final)).toBeUndefined();
      expect(await bed.store.get(short.open)).toMatchObject({ status: 'pending_approval' });
      expect(await bed.store.get(long.final)).toMatchObject({ status: 'succeeded' });
      expect(await claims.claim('connection-1', 'procurement-agent')).toBe(true);
      expect(await bed.store.claimCallKey({ ...key, execution_id: long.final })).toEqual({ kind: 'claimed' });
    },
  );

  it(verifies('retention.local-sweep', 'runs as soon as the runtime starts it, by the runtime’s clock'), async () => {
    const kept = await seed(400);
    const warnings: string[] = [];
    const deleted: unknown[] = [];
    const stop = startRetentionSweep(bed.dynamodb.documents, new ManualClock(madeAt + 401 * dayMs), {
      info: (_message, ...attributes) => void deleted.push(...attributes),
      warn: (message) => void warnings.push(message),
    });
    await stop();
    expect(warnings).toEqual([]);
    expect(await bed.store.get(kept.final)).toBeUndefined();
    expect(await bed.store.get(kept.open)).toMatchObject({ status: 'pending_approval' });
    expect(deleted).toEqual([expect.objectContaining({ deleted: expect.any(Number) })]);
  });
});
