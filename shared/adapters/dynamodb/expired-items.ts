// The table's time to live where the store has none: the local store (dynalite) keeps every item,
// so the local runtime deletes, every so often, the items whose time-to-live attribute has passed,
// by the rule DynamoDB applies in AWS (retention.ts). A record is deleted only if it is still past
// its date when deleted (the condition), so a record made final again meanwhile is kept.
import { DeleteCommand, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { isPastRetention } from '../../executions/retention.js';
import { appliedUnlessConditionFailed } from './conditions.js';
import type { TableDefinition } from './tables.js';

/** Items read per scan page, and pages one sweep reads at most (the rest wait for the next sweep). */
const pageSize = 200;
const maxPagesPerSweep = 50;

export interface ExpiredSweep {
  /** Items deleted. */
  readonly deleted: number;
  /** Whether the sweep stopped at its bound with more of the table left to read. */
  readonly more: boolean;
}

/**
 * Deletes the items of `tableName` whose `definition.timeToLiveAttribute` is past `nowSeconds`
 * (epoch seconds), a page at a time, within a bound per sweep.
 */
export const deleteExpiredItems = async (
  documents: DynamoDBDocumentClient,
  tableName: string,
  definition: TableDefinition,
  nowSeconds: number,
): Promise<ExpiredSweep> => {
  const ttl = definition.timeToLiveAttribute;
  if (ttl === undefined) return { deleted: 0, more: false };
  const keyNames = [
    definition.partitionKey.name,
    ...(definition.sortKey === undefined ? [] : [definition.sortKey.name]),
  ];
  const names = { '#ttl': ttl, ...Object.fromEntries(keyNames.map((name, index) => [`#k${index}`, name])) };
  let deleted = 0;
  let cursor: Record<string, unknown> | undefined;
  for (let page = 0; page < maxPagesPerSweep; page += 1) {
    const { Items, LastEvaluatedKey } = await documents.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: '#ttl < :now',
        ProjectionExpression: [...keyNames.map((_, index) => `#k${index}`), '#ttl'].join(', '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':now': nowSeconds },
        Limit: pageSize,
        ExclusiveStartKey: cursor,
      }),
    );
    for (const item of Items ?? []) {
      if (!isPastRetention(item[ttl], nowSeconds)) continue;
      const deletedOne = await appliedUnlessConditionFailed(
        documents.send(
          new DeleteCommand({
            TableName: tableName,
            Key: Object.fromEntries(keyNames.map((name) => [name, item[name]])),
            ConditionExpression: '#ttl < :now',
            ExpressionAttributeNames: { '#ttl': ttl },
            ExpressionAttributeValues: { ':now': nowSeconds },
          }),
        ),
      );
      if (deletedOne) deleted += 1;
    }
    cursor = LastEvaluatedKey;
    if (cursor === undefined) return { deleted, more: false };
  }
  return { deleted, more: true };
};
