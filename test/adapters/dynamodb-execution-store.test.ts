// The DynamoDB execution store against dynalite: ownership by key, conditional transitions,
// listings, and data kept across a restart on the same folder.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTables, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { IllegalTransitionError } from '../../shared/executions/store.js';
import { anExecution } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';

let local: TestStore;
beforeAll(async () => {
  local = await startTestStore();
});
afterAll(async () => {
  await local.close();
});

describe('DynamoDbExecutionStore', () => {
  it('[store.ownership-by-key] reads an execution with its owner and not with another agent', async () => {
    const execution = anExecution({ agent_id: 'owner-agent' });
    expect(await local.store.create(execution)).toEqual({ kind: 'created' });
    expect(await local.store.getOwned({ execution_id: execution.execution_id, agent_id: 'owner-agent' })).toEqual(
      execution,
    );
    expect(
      await local.store.getOwned({ execution_id: execution.execution_id, agent_id: 'other-agent' }),
    ).toBeUndefined();
  });

  it('[store.ownership-by-key] refuses to overwrite an existing execution', async () => {
    const execution = anExecution();
    await local.store.create(execution);
    const rewrite = { ...execution, tool: 'erp.vendors.delete', status: 'succeeded' as const };
    expect(await local.store.create(rewrite)).toEqual({ kind: 'exists' });
    expect(await local.store.get(execution.execution_id)).toEqual(execution);
  });

  it('[store.by-id-and-by-agent] refuses to guess when one id is recorded for two agents', async () => {
    const execution = anExecution({ agent_id: 'first-agent' });
    await local.store.create(execution);
    await local.store.create({ ...execution, agent_id: 'second-agent' });
    await expect(local.store.get(execution.execution_id)).rejects.toThrow(/more than one agent/);
  });

  it('[store.by-id-and-by-agent] reads by id alone', async () => {
    const execution = anExecution({ agent_id: 'by-id-agent' });
    await local.store.create(execution);
    expect(await local.store.get(execution.execution_id)).toEqual(execution);
    expect(await local.store.get('0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55')).toBeUndefined();
  });

  it('[store.by-id-and-by-agent] lists an agent’s executions newest first, page by page', async () => {
    const agent = 'listing-agent';
    const base = Date.parse('2026-11-01T10:00:00.000Z');
    const created = [0, 1, 2, 3, 4].map((minute) =>
      anExecution({ agent_id: agent, created_at: new Date(base + minute * 60_000).toISOString() }),
    );
    for (const execution of created) await local.store.create(execution);
    await local.store.create(anExecution({ agent_id: 'someone-else' }));

    const first = await local.store.listByAgent(agent, { limit: 3 });
    expect(first.items.map((item) => item.execution_id)).toEqual(
      created
        .slice(2)
        .reverse()
        .map((item) => item.execution_id),
    );
    expect(first.next).toBeTypeOf('string');
    const second = await local.store.listByAgent(agent, { limit: 3, ...(first.next ? { cursor: first.next } : {}) });
    expect(second.items.map((item) => item.execution_id)).toEqual(
      created
        .slice(0, 2)
        .reverse()
        .map((item) => item.execution_id),
    );
  });

  it('[store.conditional-transitions] applies a transition from the expected status and records it', async () => {
    const execution = anExecution({ status: 'pending_approval' });
    await local.store.create(execution);
    const at = new Date(Date.parse(execution.created_at) + 1000).toISOString();
    const outcome = await local.store.transition(execution, { from: 'pending_approval', to: 'approved', at });
    expect(outcome.kind).toBe('applied');
    if (outcome.kind !== 'applied') return;
    expect(outcome.execution.status).toBe('approved');
    expect(outcome.execution.updated_at).toBe(at);
    expect(outcome.execution.history).toEqual([
      { status: 'pending_approval', at: execution.created_at },
      { status: 'approved', at },
    ]);

    const done = await local.store.transition(execution, {
      from: 'approved',
      to: 'succeeded',
      at,
      patch: { result_json: '{"id":"PO-1"}', code: null },
    });
    expect(done.kind === 'applied' && done.execution.result_json).toBe('{"id":"PO-1"}');
  });

  it('[store.conditional-transitions] reports a lost race as a conflict with the current record', async () => {
    const execution = anExecution({ status: 'pending_approval' });
    await local.store.create(execution);
    const at = new Date().toISOString();
    const [first, second] = await Promise.all([
      local.store.transition(execution, { from: 'pending_approval', to: 'approved', at }),
      local.store.transition(execution, { from: 'pending_approval', to: 'rejected', at }),
    ]);
    const outcomes = [first, second].map((outcome) => outcome.kind).sort();
    expect(outcomes).toEqual(['applied', 'conflict']);
    const winner = [first, second].find((outcome) => outcome.kind === 'applied');
    const loser = [first, second].find((outcome) => outcome.kind === 'conflict');
    if (winner?.kind !== 'applied' || loser?.kind !== 'conflict') throw new Error('expected one of each');
    expect(loser.current?.status).toBe(winner.execution.status);
    expect(loser.current?.history).toHaveLength(2);
  });

  it('[store.conditional-transitions] answers conflict for an execution that does not exist', async () => {
    const missing = anExecution();
    const outcome = await local.store.transition(missing, {
      from: 'pending_approval',
      to: 'expired',
      at: missing.created_at,
    });
    expect(outcome).toEqual({ kind: 'conflict', current: undefined });
    expect(await local.store.get(missing.execution_id)).toBeUndefined();
  });

  it('[store.conditional-transitions] refuses transitions outside the lifecycle without writing', async () => {
    const execution = anExecution({ status: 'succeeded' });
    await local.store.create(execution);
    await expect(
      local.store.transition(execution, { from: 'succeeded', to: 'approved', at: execution.created_at }),
    ).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(
      local.store.transition(execution, { from: 'pending_approval', to: 'succeeded', at: execution.created_at }),
    ).rejects.toBeInstanceOf(IllegalTransitionError);
    expect((await local.store.get(execution.execution_id))?.status).toBe('succeeded');
  });

  it('refuses to return an item that is not a valid execution', async () => {
    await local.dynamodb.documents.send(
      new PutCommand({
        TableName: 'executions',
        Item: { execution_id: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d56', agent_id: 'a', status: 'exploded' },
      }),
    );
    await expect(local.store.get('0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d56')).rejects.toThrow(/status/);
  });
});

describe('a store on disk', () => {
  it('[local.persistence] keeps executions across a restart on the same data folder', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'gateway-store-'));
    try {
      const execution = anExecution({ agent_id: 'persistent-agent' });
      const first = await startTestStore(folder);
      await first.store.create(execution);
      await first.close();

      const second = await startTestStore(folder);
      try {
        expect(await second.store.getOwned(execution)).toEqual(execution);
      } finally {
        await second.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('guarded writes and the open calls', () => {
  const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

  it('[store.guarded-writes] a decision holds only with the held arguments hash and before the expiry', async () => {
    const execution = anExecution({ arguments_hash: 'a'.repeat(64), expires_at: iso(60_000) });
    await local.store.create(execution);
    const decide = (hash: string, now: string) =>
      local.store.transition(execution, {
        from: 'pending_approval',
        to: 'approved',
        at: now,
        guard: { argumentsHash: hash, notExpiredAt: now },
      });
    expect((await decide('b'.repeat(64), iso(0))).kind).toBe('conflict');
    expect((await decide('a'.repeat(64), iso(61_000))).kind).toBe('conflict');
    expect((await local.store.get(execution.execution_id))?.status).toBe('pending_approval');
    expect((await decide('a'.repeat(64), iso(0))).kind).toBe('applied');
  });

  it('[store.guarded-writes] a claim holds once, and only on an approved call', async () => {
    const pending = anExecution();
    await local.store.create(pending);
    expect((await local.store.claim(pending, { at: iso(0), deadline: iso(10_000) })).kind).toBe('conflict');
    const approved = anExecution({ status: 'approved' });
    await local.store.create(approved);
    const claims = await Promise.all(
      Array.from({ length: 10 }, () => local.store.claim(approved, { at: iso(0), deadline: iso(10_000) })),
    );
    expect(claims.filter((claim) => claim.kind === 'applied')).toHaveLength(1);
    const held = await local.store.get(approved.execution_id);
    expect(held?.claimed_at).not.toBeNull();
    expect(held?.status).toBe('approved');
  });

  it('[store.guarded-writes] an annotation holds only in the expected status, and once when asked', async () => {
    const execution = anExecution();
    await local.store.create(execution);
    const token = await local.store.annotate(execution, 'pending_approval', { task_token: 't-1' });
    expect(token.kind === 'applied' && token.execution.task_token).toBe('t-1');
    expect((await local.store.annotate(execution, 'approved', { task_token: 't-2' })).kind).toBe('conflict');
    const first = await local.store.annotate(execution, 'pending_approval', { notified_at: iso(0) }, 'notified_at');
    const second = await local.store.annotate(execution, 'pending_approval', { notified_at: iso(5) }, 'notified_at');
    expect([first.kind, second.kind]).toEqual(['applied', 'conflict']);
    const held = await local.store.get(execution.execution_id);
    expect(held).toMatchObject({
      task_token: 't-1',
      notified_at: first.kind === 'applied' ? first.execution.notified_at : '',
    });
  });

  it('[store.open-calls] lists every open call once over small pages, and a call leaves the list when it ends', async () => {
    const separate = await startTestStore();
    try {
      const open = Array.from({ length: 40 }, (_, index) =>
        anExecution({ status: index % 2 === 0 ? 'pending_approval' : 'approved', expires_at: iso(index * 1000) }),
      );
      for (const execution of open) await separate.store.create(execution);
      await separate.store.create(anExecution({ status: 'succeeded' }));
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await separate.store.listOpen({ limit: 7, ...(cursor === undefined ? {} : { cursor }) });
        expect(page.items.length).toBeLessThanOrEqual(7);
        seen.push(...page.items.map((item) => item.execution_id));
        cursor = page.next;
        pages += 1;
      } while (cursor !== undefined);
      expect(pages).toBeGreaterThanOrEqual(6);
      expect(seen.sort()).toEqual(open.map((execution) => execution.execution_id).sort());
      // Spread over the index's partitions by the id's last digit.
      const shards = new Set(open.map((execution) => execution.execution_id.slice(-1)));
      expect(shards.size).toBeGreaterThan(4);

      const [ended] = open;
      if (ended === undefined) throw new Error('expected calls');
      await separate.store.transition(ended, { from: 'pending_approval', to: 'expired', at: iso(0) });
      const after = await separate.store.listOpen({ limit: 100 });
      expect(after.items.map((item) => item.execution_id)).not.toContain(ended.execution_id);
      expect(after.items).toHaveLength(39);
    } finally {
      await separate.close();
    }
  });

  it('[local.outdated-data] refuses a table made without an index this version reads, saying what to do', async () => {
    const dynamodb = await startLocalDynamoDb({ dataPath: null });
    try {
      const { globalSecondaryIndexes, ...rest } = executionsTable;
      const older = { ...rest, globalSecondaryIndexes: globalSecondaryIndexes.slice(0, 1) };
      await ensureTables(dynamodb.client, [{ definition: older, tableName: 'older-executions' }]);
      await expect(
        ensureTables(dynamodb.client, [{ definition: executionsTable, tableName: 'older-executions' }]),
      ).rejects.toThrow(
        'The local table older-executions was made by an older version: it lacks the open-by-deadline index. Start with a new data folder (--data-dir), or move the old one away.',
      );
    } finally {
      await dynamodb.close();
    }
  });
});
