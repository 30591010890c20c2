// Calls recorded before an index existed lack its attributes. Once per table, after the deployment
// that adds it, this gives them those attributes (`npm run executions -- --table <name>
// --index-earlier-calls`); a second run finds none. Two such indexes: the by-time index (a call
// recorded before it is listed only with --agent), and the partition of unknown outcomes not yet
// settled in the open-by-deadline index (a call that ended unknown before it is not counted in
// UnknownOutcomes, though it can be settled).
import { type DynamoDBDocumentClient, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { unsettledShard } from '../../executions/write-plan.js';
import { appliedUnlessConditionFailed } from './conditions.js';
import { listingAttributes } from './execution-listing.js';

/** What the indexes need of a call recorded before them. */
const EarlierRecord = z.object({
  execution_id: z.uuid(),
  agent_id: z.string(),
  created_at: z.iso.datetime(),
  status: z.string(),
  updated_at: z.iso.datetime(),
  created_key: z.string().optional(),
  open_shard: z.string().optional(),
});
type EarlierRecord = z.infer<typeof EarlierRecord>;

/** One conditional write: a call deleted meanwhile stays deleted, one settled meanwhile stays out. */
const update = (
  client: DynamoDBDocumentClient,
  tableName: string,
  record: EarlierRecord,
  expressions: Pick<
    ConstructorParameters<typeof UpdateCommand>[0],
    'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
  >,
): Promise<boolean> =>
  appliedUnlessConditionFailed(
    client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { execution_id: record.execution_id, agent_id: record.agent_id },
        ...expressions,
      }),
    ),
  );

/** Gives one call the attributes it lacks; whether anything was written. */
const indexRecord = async (client: DynamoDBDocumentClient, tableName: string, record: EarlierRecord) => {
  let written = false;
  if (record.created_key === undefined) {
    const { created_shard, created_key } = listingAttributes(record);
    written = await update(client, tableName, record, {
      UpdateExpression: 'SET created_shard = :shard, created_key = :key',
      ConditionExpression: 'attribute_exists(execution_id)',
      ExpressionAttributeValues: { ':shard': created_shard, ':key': created_key },
    });
  }
  if (record.status === 'unknown' && record.open_shard === undefined) {
    const entered = await update(client, tableName, record, {
      UpdateExpression: 'SET open_shard = :shard, open_until = :since',
      ConditionExpression: '#status = :unknown AND attribute_not_exists(open_shard)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':shard': unsettledShard, ':since': record.updated_at, ':unknown': 'unknown' },
    });
    written ||= entered;
  }
  return written;
};

/**
 * A scan of the whole table, one conditional write per call lacking an attribute; its lifecycle
 * writes are untouched. Returns how many calls it indexed.
 */
export const indexEarlierCalls = async (client: DynamoDBDocumentClient, tableName: string): Promise<number> => {
  let indexed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const { Items = [], LastEvaluatedKey } = await client.send(
      new ScanCommand({
        TableName: tableName,
        // Only records have a created_at (agents' places, connection claims and sessions do not).
        FilterExpression:
          'attribute_exists(created_at) AND attribute_not_exists(created_key) OR #status = :unknown AND attribute_not_exists(open_shard)',
        ProjectionExpression: 'execution_id, agent_id, created_at, #status, updated_at, created_key, open_shard',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':unknown': 'unknown' },
        ExclusiveStartKey: start,
      }),
    );
    for (const record of Items.map((item) => EarlierRecord.parse(item))) {
      if (await indexRecord(client, tableName, record)) indexed += 1;
    }
    start = LastEvaluatedKey;
  } while (start !== undefined);
  return indexed;
};
