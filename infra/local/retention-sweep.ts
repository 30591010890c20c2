// settings.retention locally: the embedded store has no time to live, so the runtime sweeps the
// executions table of what DynamoDB's would delete in AWS (retain_until passed), once at start and
// then every few minutes, one sweep at a time.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deleteExpiredItems } from '../../shared/adapters/dynamodb/expired-items.js';
import { executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import type { Clock } from '../../shared/clock.js';
import type { Log } from '../../shared/log.js';
import { localTableNames } from './dynamodb.js';
import { startPeriodicTask } from './periodic-task.js';

/** How often the local store is swept of records past their retention. */
const retentionSweepMs = 10 * 60_000;

/** Starts sweeping; the answer stops it, waiting for a sweep under way (before the store closes). */
export const startRetentionSweep = (
  documents: DynamoDBDocumentClient,
  clock: Clock,
  log: Pick<Log, 'info' | 'warn'>,
): (() => Promise<void>) =>
  startPeriodicTask(async () => {
    const nowSeconds = Math.floor(clock.now() / 1000);
    await deleteExpiredItems(documents, localTableNames.executions, executionsTable, nowSeconds)
      .then((swept) => {
        if (swept.deleted > 0) log.info('records past their retention deleted', { ...swept });
      })
      .catch((error: unknown) => log.warn('the retention sweep failed; it runs again later', { error }));
  }, retentionSweepMs);
