// The DynamoDB execution store against dynalite: the port's contract (test/contracts), and what is
// this adapter's own: items read back are checked, data is kept across a restart on the same
// folder, a table made by an older version is refused, and the client it is given is left as it was.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTables, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { listen } from '../../infra/local/net.js';
import { indexEarlierCalls } from '../../shared/adapters/dynamodb/earlier-calls.js';
import { DynamoDbExecutionListing } from '../../shared/adapters/dynamodb/execution-listing.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { executionStoreDocuments } from '../../shared/adapters/dynamodb/store-client.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { StoreUnavailableError } from '../../shared/errors.js';
import { callKeysContract } from '../contracts/call-keys.contract.js';
import { executionListingContract } from '../contracts/execution-listing.contract.js';
import { executionStoreContract } from '../contracts/execution-store.contract.js';
import { anExecution } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';

let local: TestStore;
beforeAll(async () => {
  local = await startTestStore();
});
afterAll(async () => {
  await local.close();
});

// The contract's rules are cited here: the manifest check reads the titles of *.test.ts files only.
describe(
  verifies(
    [
      'store.contract',
      'store.ownership-by-key',
      'store.by-id-and-by-agent',
      'store.conditional-transitions',
      'store.guarded-writes',
      'store.open-calls',
      'store.open-calls-from-records',
      'limits.pending-store-race-safe',
      'limits.pending-released-on-leave',
      'ops.retention',
      'store.lifecycle-plan',
      'store.release-failure-logged',
    ],
    'the port contract against dynalite',
  ),
  () => {
    executionStoreContract('DynamoDbExecutionStore', async () => {
      const opened = await startTestStore();
      return {
        ...opened,
        // The agent's places item holding text where a set belongs: the store refuses to take ids out of it.
        breakPlaces: async (agentId) => {
          await opened.dynamodb.documents.send(
            new PutCommand({
              TableName: 'executions',
              Item: { execution_id: `pending-calls#${agentId}`, agent_id: agentId, holders: 'not a set' },
            }),
          );
        },
      };
    });
  },
);

describe(verifies('store.call-keys', 'call keys against dynalite'), () => {
  callKeysContract('DynamoDbExecutionStore', async () => {
    const fresh = await startTestStore();
    return { store: fresh.store, close: () => fresh.close() };
  });
});

describe(verifies('ops.executions-newest-first', 'the listing against dynalite'), () => {
  executionListingContract('DynamoDbExecutionListing', async () => {
    const fresh = await startTestStore();
    return {
      store: fresh.store,
      listing: new DynamoDbExecutionListing(fresh.dynamodb.documents, 'executions'),
      close: () => fresh.close(),
    };
  });
});

describe('calls recorded before the by-time index', () => {
  it(
    verifies('ops.executions-newest-first', 'are listed without --agent once indexed, in their place, by one run'),
    async () => {
      const fresh = await startTestStore();
      try {
        const listing = new DynamoDbExecutionListing(fresh.dynamodb.documents, 'executions');
        const records = [2, 0, 1].map((minute) =>
          anExecution({ created_at: new Date(Date.UTC(2026, 10, 29, 12, minute)).toISOString() }),
        );
        for (const record of records) await fresh.store.create(record);
        await fresh.store.reservePending('procurement-agent', records[0]?.execution_id ?? '', 5);
        // Two as an older version wrote them: without the index's attributes.
        for (const record of records.slice(0, 2)) {
          await fresh.dynamodb.documents.send(
            new UpdateCommand({
              TableName: 'executions',
              Key: { execution_id: record.execution_id, agent_id: record.agent_id },
              UpdateExpression: 'REMOVE created_shard, created_key',
            }),
          );
        }
        const listed = async () => (await listing.list({ limit: 10 })).items.map((item) => item.execution_id);
        expect(await listed()).toEqual([records[2]?.execution_id]);
        expect(await indexEarlierCalls(fresh.dynamodb.documents, 'executions')).toBe(2);
        expect(await listed()).toEqual([records[0], records[2], records[1]].map((record) => record?.execution_id));
        expect(await indexEarlierCalls(fresh.dynamodb.documents, 'executions')).toBe(0);
      } finally {
        await fresh.close();
      }
    },
  );
});

describe('unknown outcomes recorded before their partition', () => {
  it(
    verifies(
      'settle.unknown-outcomes-gauge',
      'are counted once indexed by the one run, and leave the count when settled',
    ),
    async () => {
      const fresh = await startTestStore();
      try {
        const unknown = anExecution({ status: 'unknown', code: 'timeout' });
        const done = anExecution({ status: 'succeeded' });
        for (const record of [unknown, done]) await fresh.store.create(record);
        // As an older version wrote it: no entry in the partition of unsettled outcomes.
        await fresh.dynamodb.documents.send(
          new UpdateCommand({
            TableName: 'executions',
            Key: { execution_id: unknown.execution_id, agent_id: unknown.agent_id },
            UpdateExpression: 'REMOVE open_shard, open_until',
          }),
        );
        expect(await fresh.store.countUnsettled()).toBe(0);
        expect(await indexEarlierCalls(fresh.dynamodb.documents, 'executions')).toBe(1);
        expect(await fresh.store.countUnsettled()).toBe(1);
        expect(await indexEarlierCalls(fresh.dynamodb.documents, 'executions')).toBe(0);
        const at = new Date().toISOString();
        const settlement = {
          outcome: 'failed',
          by: 'alice',
          at,
          reason: 'not in the ERP',
          unknown_code: 'timeout',
        } as const;
        await fresh.store.transition(unknown, { from: 'unknown', to: 'failed', at, settlement });
        expect(await fresh.store.countUnsettled()).toBe(0);
      } finally {
        await fresh.close();
      }
    },
  );
});

describe('calls recorded before approvals were kept one by one', () => {
  it(verifies('quorum.approval-write', 'a record without the approvals attribute holds none'), async () => {
    const {
      approvals: _none,
      escalated_at: _never,
      ...older
    } = anExecution({
      arguments_hash: 'a'.repeat(64),
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    await local.dynamodb.documents.send(new PutCommand({ TableName: 'executions', Item: older }));
    const approval = { by: 'farah', at: older.created_at, group: 'finance', signed_in_at: null, acr: null };
    const request = { at: older.created_at, argumentsHash: 'a'.repeat(64) };
    expect((await local.store.addApproval(older, { ...request, approvals: [approval, approval] })).kind).toBe(
      'conflict',
    );
    const added = await local.store.addApproval(older, { ...request, approvals: [approval] });
    expect(added).toMatchObject({ kind: 'applied', execution: { approvals: [approval] } });
  });
});

describe('items read back', () => {
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
  it(verifies('local.persistence', 'keeps executions across a restart on the same data folder'), async () => {
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

describe('an older table', () => {
  it(
    verifies('local.outdated-data', 'refuses a table made without an index this version reads, saying what to do'),
    async () => {
      const dynamodb = await startLocalDynamoDb({ dataPath: null });
      try {
        const { globalSecondaryIndexes, ...rest } = executionsTable;
        // As the versions before the by-time index made it.
        const older = { ...rest, globalSecondaryIndexes: globalSecondaryIndexes.slice(0, 2) };
        await ensureTables(dynamodb.client, [{ definition: older, tableName: 'older-executions' }]);
        await expect(
          ensureTables(dynamodb.client, [{ definition: executionsTable, tableName: 'older-executions' }]),
        ).rejects.toThrow(
          'The local table older-executions was made by an older version: it lacks the by-time index. Start with a new data folder (--data-dir), or move the old one away.',
        );
      } finally {
        await dynamodb.close();
      }
    },
  );
});

describe('the client a store is given', () => {
  const offline = { region: 'local', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 };

  it(verifies('store.client-untouched', 'constructing a store leaves the client’s middleware as it was'), () => {
    const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ ...offline, endpoint: 'http://127.0.0.1:9' }));
    const before = documents.middlewareStack.identify();
    const store = new DynamoDbExecutionStore(documents, 'executions', quietLog);
    expect(store).toBeInstanceOf(DynamoDbExecutionStore);
    expect(documents.middlewareStack.identify()).toEqual(before);
  });

  it(
    verifies(
      'store.client-untouched',
      'the factory’s client answers a fault on the store’s side as the store being unavailable',
    ),
    async () => {
      // A store on loopback that answers every request with DynamoDB's own temporary fault.
      const server = createServer((_request, response) => {
        response.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
        response.end(
          JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'down' }),
        );
      });
      const listening = await listen(server, '127.0.0.1', 0);
      const client = new DynamoDBClient({ ...offline, endpoint: `http://127.0.0.1:${listening.port}` });
      try {
        const store = new DynamoDbExecutionStore(executionStoreDocuments(client), 'executions', quietLog);
        await expect(store.get(anExecution().execution_id)).rejects.toBeInstanceOf(StoreUnavailableError);
        // The same client, as given to a store without the factory: the SDK's own error.
        const plain = new DynamoDbExecutionStore(
          DynamoDBDocumentClient.from(
            new DynamoDBClient({ ...offline, endpoint: `http://127.0.0.1:${listening.port}` }),
          ),
          'executions',
          quietLog,
        );
        await expect(plain.get(anExecution().execution_id)).rejects.toThrow(
          expect.objectContaining({ name: 'InternalServerError' }),
        );
      } finally {
        client.destroy();
        await listening.close();
      }
    },
  );
});
