// `npm run executions -- --stats` as a process against a real local store (dynalite) at an endpoint:
// held calls with known times to their decisions give exact p50 / p90 per group, the calls pending
// and the share expired; the listing shows a call's approvals and its escalation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTables, type LocalDynamoDb, localTableNames, startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import type { DecisionRecord, Execution } from '../../shared/executions/execution.js';
import { anExecution, humanStep } from '../support/executions.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';
import { type CollectedRun, runProcess } from '../support/spawn.js';

const minute = 60_000;
const hour = 60 * minute;
const now = Date.now();
const iso = (ms: number): string => new Date(ms).toISOString();

const held = (step: NonNullable<DecisionRecord['step']>): DecisionRecord => ({
  effect: 'allow',
  reason: null,
  determining: [{ name: 'large-orders', file: 'policies.cedar', line: 1 }],
  step,
  config_version: 'v-load',
});
const finance = held(
  humanStep({ staff: 'finance', customer: false }, { escalation: { after_ms: 4 * hour, group: 'operations' } }),
);

/** A call finance decided `waitMs` after it was made (approved, with its approval recorded). */
const decidedAfter = (waitMs: number, createdAgo: number): Execution => {
  const created = now - createdAgo;
  return anExecution({
    status: 'succeeded',
    created_at: iso(created),
    decision: finance,
    decided_by: 'farah',
    decided_at: iso(created + waitMs),
    decided_as: 'finance',
    approvals: [{ by: 'farah', group: 'finance', at: iso(created + waitMs), signed_in_at: null, acr: null }],
  });
};

const escalatedCreated = now - 30 * hour;
const escalated = anExecution({
  status: 'rejected',
  code: 'rejected',
  created_at: iso(escalatedCreated),
  decision: finance,
  escalated_at: iso(escalatedCreated + 4 * hour),
  decided_by: 'oskar',
  decided_at: iso(escalatedCreated + 5 * hour),
  decided_as: 'operations',
  approvals: [
    { by: 'oskar', group: 'operations', at: iso(escalatedCreated + 5 * hour), signed_in_at: null, acr: null },
  ],
});

const calls: Execution[] = [
  // Finance decided four: 1, 2, 3 and 10 minutes. Nearest rank: p50 the 2nd (2 min), p90 the 4th.
  decidedAfter(3 * minute, 2 * hour),
  decidedAfter(minute, 3 * hour),
  decidedAfter(10 * minute, 4 * hour),
  decidedAfter(2 * minute, 5 * hour),
  anExecution({ status: 'expired', code: 'approval_expired', created_at: iso(now - 40 * hour), decision: finance }),
  anExecution({ created_at: iso(now - 10 * minute), decision: finance }),
  // Escalated, then decided by operations: counted for operations.
  escalated,
  // Only the customer decides it, and has not yet.
  anExecution({ created_at: iso(now - hour), decision: held(humanStep({ staff: null, customer: true })) }),
  // Not held, and held before the window: neither counts.
  anExecution({ status: 'succeeded', created_at: iso(now - hour) }),
  decidedAfter(minute, 8 * 24 * hour),
];

describe('npm run executions -- --stats', () => {
  let dynamodb: LocalDynamoDb;
  const cli = async (...args: string[]): Promise<CollectedRun> => {
    const { AWS_PROFILE: _profile, ...inherited } = process.env;
    const run = await runProcess(
      process.execPath,
      ['--import', 'tsx', projectPath('scripts/executions.ts'), '--endpoint', dynamodb.endpoint, ...args],
      {
        cwd: projectPath(),
        env: {
          ...inherited,
          AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
          AWS_CONFIG_FILE: '/nonexistent',
          AWS_ACCESS_KEY_ID: dynamodb.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: dynamodb.credentials.secretAccessKey,
        },
      },
    );
    return run;
  };

  beforeAll(async () => {
    dynamodb = await startLocalDynamoDb({ dataPath: null });
    await ensureTables(dynamodb.client, [{ definition: executionsTable, tableName: localTableNames.executions }]);
    const store = new DynamoDbExecutionStore(dynamodb.documents, localTableNames.executions, quietLog);
    for (const call of calls) expect(await store.create(call)).toEqual({ kind: 'created' });
  });
  afterAll(async () => {
    await dynamodb?.close();
  });

  it(
    verifies(
      'load.stats',
      'prints per group the time to decision at p50 and p90, the calls pending and the share expired',
    ),
    async () => {
      const json = await cli('--stats', '--json');
      expect(json.code, json.output).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        since: expect.stringMatching(/^\d{4}-/),
        groups: [
          {
            group: '(customer)',
            held: 1,
            decided: 0,
            p50_ms: null,
            p90_ms: null,
            pending: 1,
            expired: 0,
            expired_share: null,
          },
          {
            group: 'finance',
            held: 6,
            decided: 4,
            p50_ms: 2 * minute,
            p90_ms: 10 * minute,
            pending: 1,
            expired: 1,
            expired_share: 0.2,
          },
          {
            group: 'operations',
            held: 1,
            decided: 1,
            p50_ms: 5 * hour,
            p90_ms: 5 * hour,
            pending: 0,
            expired: 0,
            expired_share: 0,
          },
        ],
      });
      const table = await cli('--stats');
      expect(table.code, table.output).toBe(0);
      const lines = table.stdout.split('\n');
      expect(lines[1]?.split(/\s{2,}/)).toEqual([
        'GROUP',
        'HELD',
        'DECIDED',
        'P50',
        'P90',
        'PENDING',
        'EXPIRED',
        'EXPIRED SHARE',
      ]);
      expect(lines.find((line) => line.startsWith('finance'))?.split(/\s{2,}/)).toEqual([
        'finance',
        '6',
        '4',
        '2 min 00 s',
        '10 min 00 s',
        '1',
        '1',
        '20%',
      ]);

      const refused = await cli('--stats', '--agent', 'alpha-agent');
      expect([refused.code, refused.stderr]).toEqual([
        2,
        expect.stringContaining('--stats counts every held call of the window; it takes no --agent'),
      ]);
    },
  );

  it(
    verifies('escalation.shown', 'the listing shows who approved as which group and when, and the escalation'),
    async () => {
      const json = await cli('--json', '--status', 'rejected');
      expect(json.code, json.output).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        execution_id: escalated.execution_id,
        approvals: [{ by: 'oskar', group: 'operations', at: escalated.decided_at }],
        escalated_to: 'operations',
        escalated_at: escalated.escalated_at,
      });
      const table = await cli('--status', 'rejected');
      const row = table.stdout.split('\n').find((line) => line.includes(escalated.execution_id)) ?? '';
      expect(row.split(/\s+/).slice(-2)).toEqual([
        `oskar(operations)@${escalated.decided_at}`,
        `operations@${escalated.escalated_at}`,
      ]);
    },
  );
});
