// The audit listing on DynamoDB: an agent's calls through the by-agent index (newest first, the
// time filter in the key condition), or the whole table by a scan. Status and tool are filters, so
// a page reads on until it holds `limit` matches or a bounded number of reads is spent; its cursor
// is where it stopped, checked on the way back against the query it is used with.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Execution } from '../../executions/execution.js';
import {
  type ExecutionListing,
  type ExecutionQuery,
  InvalidCursorError,
  maxListingLimit,
} from '../../executions/listing.js';
import type { ExecutionPage } from '../../executions/store.js';
import { readItem } from './execution-items.js';
import { executionsTable } from './tables.js';

const byAgentIndex = executionsTable.globalSecondaryIndexes[0].indexName;

/** Reads one page may spend, so a filter that matches little costs a bounded amount per page. */
const maxReadsPerPage = 20;
/** Items read per request when a filter may drop some (DynamoDB's Limit counts items read). */
const filteredReadSize = 200;

/** Where a listing stopped: in one agent's index partition, or in the table's scan order. */
const Cursor = z.discriminatedUnion('by', [
  z.object({
    by: z.literal('agent'),
    key: z.object({ agent_id: z.string(), created_at: z.string(), execution_id: z.string() }).strict(),
  }),
  z.object({ by: z.literal('table'), key: z.object({ execution_id: z.string(), agent_id: z.string() }).strict() }),
]);
type Cursor = z.infer<typeof Cursor>;

const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

/** The cursor's position, only when it was given for this kind of listing and, by agent, this agent. */
const startOf = (query: ExecutionQuery): Cursor['key'] | undefined => {
  if (query.cursor === undefined) return undefined;
  let cursor: Cursor;
  try {
    cursor = Cursor.parse(JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8')));
  } catch {
    throw new InvalidCursorError();
  }
  if (query.agent === undefined ? cursor.by !== 'table' : cursor.by !== 'agent' || cursor.key.agent_id !== query.agent)
    throw new InvalidCursorError();
  return cursor.key;
};

const positionOf = (execution: Execution, by: Cursor['by']): Cursor =>
  by === 'agent'
    ? {
        by,
        key: { agent_id: execution.agent_id, created_at: execution.created_at, execution_id: execution.execution_id },
      }
    : { by, key: { execution_id: execution.execution_id, agent_id: execution.agent_id } };

const newestFirst = (a: Execution, b: Execution): number =>
  a.created_at === b.created_at ? b.execution_id.localeCompare(a.execution_id) : a.created_at < b.created_at ? 1 : -1;

export class DynamoDbExecutionListing implements ExecutionListing {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async list(query: ExecutionQuery): Promise<ExecutionPage> {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > maxListingLimit) {
      throw new RangeError(`A listing's limit is a whole number from 1 to ${maxListingLimit}.`);
    }
    const by: Cursor['by'] = query.agent === undefined ? 'table' : 'agent';
    let start: Cursor['key'] | undefined = startOf(query);
    const items: Execution[] = [];
    let next: Cursor | undefined;
    for (let reads = 0; reads < maxReadsPerPage; reads += 1) {
      const remaining = query.limit - items.length;
      const { Items = [], LastEvaluatedKey } = await this.read(query, start, remaining);
      const read = Items.map((item) => readItem(item)).filter((item) => item !== undefined);
      const kept = read.slice(0, remaining);
      items.push(...kept);
      const last = kept.at(-1);
      if (read.length > remaining && last !== undefined) {
        // Matches beyond the page were read: the next page starts after the last one shown.
        next = positionOf(last, by);
        break;
      }
      next = LastEvaluatedKey === undefined ? undefined : Cursor.parse({ by, key: LastEvaluatedKey });
      start = next?.key;
      if (start === undefined || items.length >= query.limit) break;
    }
    // A scan's order is the table's: each page is shown newest first.
    if (by === 'table') items.sort(newestFirst);
    return next === undefined ? { items } : { items, next: encodeCursor(next) };
  }

  private read(query: ExecutionQuery, start: Cursor['key'] | undefined, remaining: number) {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const filters: string[] = [];
    if (query.status !== undefined) {
      names['#status'] = 'status';
      values[':status'] = query.status;
      filters.push('#status = :status');
    }
    if (query.tool !== undefined) {
      names['#tool'] = 'tool';
      values[':tool'] = query.tool;
      filters.push('#tool = :tool');
    }
    if (query.since !== undefined) values[':since'] = query.since;
    const common = {
      TableName: this.tableName,
      ExclusiveStartKey: start,
      ...(Object.keys(names).length === 0 ? {} : { ExpressionAttributeNames: names }),
    };
    if (query.agent !== undefined) {
      values[':agent'] = query.agent;
      return this.client.send(
        new QueryCommand({
          ...common,
          IndexName: byAgentIndex,
          KeyConditionExpression: `agent_id = :agent${query.since === undefined ? '' : ' AND created_at >= :since'}`,
          ...(filters.length === 0 ? {} : { FilterExpression: filters.join(' AND ') }),
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: filters.length === 0 ? remaining : Math.max(remaining, filteredReadSize),
        }),
      );
    }
    // The table also holds items that are no execution (agents' places, connection claims, console
    // sessions): only records have a created_at.
    filters.unshift('attribute_exists(created_at)');
    if (query.since !== undefined) filters.push('created_at >= :since');
    return this.client.send(
      new ScanCommand({
        ...common,
        FilterExpression: filters.join(' AND '),
        ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
        Limit: Math.max(remaining, filteredReadSize),
      }),
    );
  }
}
