// Calls recorded before the by-time index existed lack its attributes, so only an agent's listing
// shows them. Once per table, after the deployment that adds the index, this gives them those
// attributes (`npm run executions -- --table <name> --index-earlier-calls`); a second run finds none.
import { type DynamoDBDocumentClient, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { appliedUnlessConditionFailed } from './conditions.js';
import { listingAttributes } from './execution-listing.js';

/** What the by-time index needs of a call recorded before it existed. */
const EarlierRecord = z.object({ execution_id: z.uuid(), agent_id: z.string(), created_at: z.iso.datetime() });

/**
 * A scan of the whole table, one conditional write per call without the attributes: a call deleted
 * meanwhile stays deleted, and its lifecycle writes are untouched. Returns how many calls it indexed.
 */
export const indexEarlierCalls = async (client: DynamoDBDocumentClient, tableName: string): Promise<number> => {
  let indexed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const { Items = [], LastEvaluatedKey } = await client.send(
      new ScanCommand({
        TableName: tableName,
        // Only records have a created_at (agents' places, connection claims and sessions do not).
        FilterExpression: 'attribute_exists(created_at) AND attribute_not_exists(created_key)',
        ProjectionExpression: 'execution_id, agent_id, created_at',
        ExclusiveStartKey: start,
      }),
    );
    for (const record of Items.map((item) => EarlierRecord.parse(item))) {
      const { created_shard, created_key } = listingAttributes(record);
      const written = await appliedUnlessConditionFailed(
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { execution_id: record.execution_id, agent_id: record.agent_id },
            UpdateExpression: 'SET created_shard = :shard, created_key = :key',
            ConditionExpression: 'attribute_exists(execution_id)',
            ExpressionAttributeValues: { ':shard': created_shard, ':key': created_key },
          }),
        ),
      );
      if (written) indexed += 1;
    }
    start = LastEvaluatedKey;
  } while (start !== undefined);
  return indexed;
};
