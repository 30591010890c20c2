// Recovery at local start against the real embedded store and a controlled clock: each call is
// judged at the time it is reached, and open calls are found from their records, not the index.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRunStart } from '../../../shared/approvals/approval-runs.js';
import { recoverOpenExecutions } from '../../../shared/use-cases/recovery.js';
import { approvalDepsFor, unusedPort } from '../../support/approval-deps.js';
import { ManualClock } from '../../support/clock.js';
import { anExecution } from '../../support/executions.js';
import { startTestStore, type TestStore } from '../../support/local-store.js';
import { verifies } from '../../support/requirements.js';

/** Recovery's services, with an approval run that records what it starts and takes `startMs` to start. */
const recoveryDeps = (local: TestStore, clock: ManualClock, startMs: number) => {
  const started: ApprovalRunStart[] = [];
  const deps = approvalDepsFor(local.store, clock, {
    approvalRuns: {
      start: async (input) => {
        started.push(input);
        // A slow start: recovering each call moves the clock on.
        clock.advance(startMs);
        return 'started';
      },
      signal: unusedPort('the approval run signal'),
    },
  });
  return { deps, started };
};

describe('recovery at local start', () => {
  let local: TestStore;
  beforeAll(async () => {
    local = await startTestStore(null, 'recovery-executions');
  });
  afterAll(async () => {
    await local?.close();
  });

  it(
    verifies(
      'approvals.recovery-clock-per-call',
      'expires a call whose approval time ran out while recovery was busy with others',
    ),
    async () => {
      const clock = new ManualClock(Date.parse('2026-11-30T08:00:00.000Z'));
      const expiresAt = new Date(clock.now() + 1_500).toISOString();
      const held = Array.from({ length: 3 }, () =>
        anExecution({
          status: 'pending_approval',
          expires_at: expiresAt,
          created_at: new Date(clock.now()).toISOString(),
        }),
      );
      for (const execution of held) await local.store.create(execution);
      const { deps, started } = recoveryDeps(local, clock, 1_000);

      const report = await recoverOpenExecutions(deps, 'restart');

      // The first is resumed with 1.5 s left (2 s, rounded up), the second a second later with 0.5 s
      // left; by the third the time has run out, so it expires instead of waiting again.
      expect(report).toEqual({ resumed: 2, restarted: 0, lost: 0, expired: 1, executed: 0, settled: 0 });
      expect(started.map((start) => start.timeout_seconds)).toEqual([2, 1]);
      const [late] = held.filter(
        (execution) => !started.some((start) => start.execution_id === execution.execution_id),
      );
      const expired = await local.store.get(late?.execution_id ?? '');
      expect(expired).toMatchObject({ status: 'expired', code: 'approval_expired' });
      expect(expired?.history.at(-1)).toEqual({ status: 'expired', at: new Date(clock.now()).toISOString() });
    },
  );

  it(verifies('approvals.recovery-from-records', 'resumes a held call the index no longer lists'), async () => {
    const clock = new ManualClock(Date.parse('2026-11-30T09:00:00.000Z'));
    const unlisted = anExecution({
      status: 'pending_approval',
      expires_at: new Date(clock.now() + 60_000).toISOString(),
      created_at: new Date(clock.now()).toISOString(),
    });
    await local.store.create(unlisted);
    await local.dynamodb.documents.send(
      new UpdateCommand({
        TableName: 'recovery-executions',
        Key: { execution_id: unlisted.execution_id, agent_id: unlisted.agent_id },
        UpdateExpression: 'REMOVE open_shard, open_until',
      }),
    );
    const { deps, started } = recoveryDeps(local, clock, 0);

    await recoverOpenExecutions(deps, 'restart');

    expect(started).toContainEqual({
      execution_id: unlisted.execution_id,
      agent_id: unlisted.agent_id,
      timeout_seconds: 60,
      restarts: 0,
    });
  });
});
