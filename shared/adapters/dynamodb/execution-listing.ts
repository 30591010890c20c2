// The audit listing on DynamoDB, newest first across pages: an agent's calls through the by-agent
// index, every call through the by-time index (its sixteen partitions read side by side and merged),
// the time filter in the key condition. Status and tool are filters, so a page reads on until it
// holds `limit` matches or a bounded number of reads is spent; its cursor is where it stopped,
// checked on the way back against the query it is used with.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Execution } from '../../executions/execution.js';
import {
  checkListingLimit,
  type ExecutionListing,
  type ExecutionQuery,
  InvalidCursorError,
  listingOrderKey,
} from '../../executions/listing.js';
import type { ExecutionPage } from '../../executions/store.js';
import { readItem } from './execution-items.js';
import { executionsTable } from './tables.js';

const byAgentIndex = executionsTable.globalSecondaryIndexes[0].indexName;
const byTimeIndex = executionsTable.globalSecondaryIndexes[2].indexName;

/** The by-time index's partitions: the last hex digit of the id, random in a UUIDv7. */
const timeShards: readonly string[] = [...'0123456789abcdef'];

/**
 * The by-time index's attributes, written with the record when it is made and never changed after:
 * the index entry costs one write per call, whatever happens to the call later.
 */
export const listingAttributes = (
  execution: Pick<Execution, 'execution_id' | 'created_at'>,
): { readonly created_shard: string; readonly created_key: string } => ({
  created_shard: execution.execution_id.slice(-1).toLowerCase(),
  created_key: listingOrderKey(execution),
});

/** Reads one page of an agent's calls may spend, so a filter that matches little costs a bounded amount per page. */
const maxReadsPerPage = 20;
/** Rounds of reads (each at most one per partition) one page of every call may spend. */
const maxRoundsPerPage = 6;
/** Items read per request when a filter may drop some (DynamoDB's Limit counts items read). */
const filteredReadSize = 200;

/** Where a listing stopped: in one agent's index partition, or below a place in time order. */
const Cursor = z.discriminatedUnion('by', [
  z.object({
    by: z.literal('agent'),
    key: z.object({ agent_id: z.string(), created_at: z.string(), execution_id: z.string() }).strict(),
  }),
  z.object({ by: z.literal('time'), before: z.string() }).strict(),
]);
type Cursor = z.infer<typeof Cursor>;
type AgentPosition = Extract<Cursor, { by: 'agent' }>['key'];

const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

/** The cursor, only when it was given for this kind of listing and, by agent, this agent. */
const cursorOf = (query: ExecutionQuery): Cursor | undefined => {
  if (query.cursor === undefined) return undefined;
  let cursor: Cursor;
  try {
    cursor = Cursor.parse(JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8')));
  } catch {
    throw new InvalidCursorError();
  }
  if (query.agent === undefined ? cursor.by !== 'time' : cursor.by !== 'agent' || cursor.key.agent_id !== query.agent)
    throw new InvalidCursorError();
  return cursor;
};

/** The status and tool filters, as a query's filter expression and its names and values. */
const filtersOf = (query: ExecutionQuery) => {
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
  return {
    values,
    filtered: filters.length > 0,
    expression: {
      ...(filters.length === 0 ? {} : { FilterExpression: filters.join(' AND ') }),
      ...(filters.length === 0 ? {} : { ExpressionAttributeNames: names }),
    },
  };
};

/** A record with its place in time order. */
interface Placed {
  readonly key: string;
  readonly execution: Execution;
}

/** One partition of the by-time index as a page reads down it. */
interface ShardRead {
  readonly shard: string;
  start: Record<string, unknown> | undefined;
  /** The place of the last item read: everything above it in this partition has been read. */
  reached: string | undefined;
  exhausted: boolean;
}

const newestFirst = (a: Placed, b: Placed): number => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0);

/**
 * The page once the partitions are read: what is read at or above the lowest place every partition
 * still open has reached (nothing above it is unread), newest first, at most `limit`; the next page
 * goes on below the last shown, or below that place when the page ends there.
 */
const mergedPage = (known: readonly Placed[], shards: readonly ShardRead[], limit: number): ExecutionPage => {
  const open = shards.filter((read) => !read.exhausted).map((read) => read.reached ?? '\uffff');
  const floor = open.sort().at(-1);
  const complete = [...known].sort(newestFirst).filter((placed) => floor === undefined || placed.key >= floor);
  const shown = complete.slice(0, limit);
  const items = shown.map((placed) => placed.execution);
  const last = shown.at(-1);
  if (shown.length === limit && last !== undefined && (complete.length > limit || floor !== undefined))
    return { items, next: encodeCursor({ by: 'time', before: last.key }) };
  return floor === undefined ? { items } : { items, next: encodeCursor({ by: 'time', before: floor }) };
};

export class DynamoDbExecutionListing implements ExecutionListing {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async list(query: ExecutionQuery): Promise<ExecutionPage> {
    checkListingLimit(query.limit);
    const cursor = cursorOf(query);
    if (query.agent === undefined) return this.listNewest(query, cursor?.by === 'time' ? cursor.before : undefined);
    return this.listAgent(query, query.agent, cursor?.by === 'agent' ? cursor.key : undefined);
  }

  /** Every call: the sixteen partitions read in rounds, each only as far as the page needs. */
  private async listNewest(query: ExecutionQuery, before: string | undefined): Promise<ExecutionPage> {
    const since = query.since === undefined ? undefined : new Date(query.since).toISOString();
    // A cursor from a listing that went below this one's start time: nothing is left.
    if (before !== undefined && since !== undefined && before <= since) return { items: [] };
    const shards: ShardRead[] = timeShards.map((shard) => ({
      shard,
      start: undefined,
      reached: undefined,
      exhausted: false,
    }));
    const known: Placed[] = [];
    const { filtered } = filtersOf(query);
    for (let round = 0; round < maxRoundsPerPage; round += 1) {
      // A partition is read further only while it may hold a record newer than the page's last.
      const bar = [...known].sort(newestFirst)[query.limit - 1]?.key;
      const due = shards.filter(
        (read) => !read.exhausted && (read.reached === undefined || bar === undefined || read.reached > bar),
      );
      if (due.length === 0) break;
      const base = filtered ? filteredReadSize : Math.max(2, Math.ceil((2 * query.limit) / timeShards.length));
      const size = Math.min(1_000, base * 2 ** round);
      const reads = await Promise.all(due.map((read) => this.readShard(read, query, { since, before, size })));
      known.push(...reads.flat());
    }
    return mergedPage(known, shards, query.limit);
  }

  /** One read down one partition of the by-time index, from where it stopped. */
  private async readShard(
    read: ShardRead,
    query: ExecutionQuery,
    range: { since: string | undefined; before: string | undefined; size: number },
  ): Promise<Placed[]> {
    const { values, expression } = filtersOf(query);
    values[':shard'] = read.shard;
    const { since, before } = range;
    if (since !== undefined) values[':since'] = since;
    if (before !== undefined) values[':before'] = before;
    // One condition on the sort key: both ends (the cursor's own record is dropped below), or either.
    const bound =
      since !== undefined && before !== undefined
        ? ' AND created_key BETWEEN :since AND :before'
        : before !== undefined
          ? ' AND created_key < :before'
          : since !== undefined
            ? ' AND created_key >= :since'
            : '';
    const { Items = [], LastEvaluatedKey } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: byTimeIndex,
        KeyConditionExpression: `created_shard = :shard${bound}`,
        ...expression,
        ExpressionAttributeValues: values,
        ExclusiveStartKey: read.start,
        ScanIndexForward: false,
        Limit: range.size,
      }),
    );
    read.start = LastEvaluatedKey;
    read.exhausted = LastEvaluatedKey === undefined;
    read.reached = LastEvaluatedKey === undefined ? undefined : z.string().parse(LastEvaluatedKey.created_key);
    return Items.map((item) => readItem(item))
      .filter((execution) => execution !== undefined)
      .map((execution) => ({ key: listingOrderKey(execution), execution }))
      .filter((placed) => before === undefined || placed.key < before);
  }

  /** One agent's calls, down its partition of the by-agent index. */
  private async listAgent(
    query: ExecutionQuery,
    agent: string,
    from: AgentPosition | undefined,
  ): Promise<ExecutionPage> {
    let start = from;
    const items: Execution[] = [];
    let next: Cursor | undefined;
    for (let reads = 0; reads < maxReadsPerPage; reads += 1) {
      const remaining = query.limit - items.length;
      const { Items = [], LastEvaluatedKey } = await this.readAgent(query, agent, start, remaining);
      const read = Items.map((item) => readItem(item)).filter((item) => item !== undefined);
      const kept = read.slice(0, remaining);
      items.push(...kept);
      const last = kept.at(-1);
      if (read.length > remaining && last !== undefined) {
        // Matches beyond the page were read: the next page starts after the last one shown.
        next = {
          by: 'agent',
          key: { agent_id: last.agent_id, created_at: last.created_at, execution_id: last.execution_id },
        };
        break;
      }
      next = LastEvaluatedKey === undefined ? undefined : Cursor.parse({ by: 'agent', key: LastEvaluatedKey });
      start = next?.by === 'agent' ? next.key : undefined;
      if (start === undefined || items.length >= query.limit) break;
    }
    return next === undefined ? { items } : { items, next: encodeCursor(next) };
  }

  private readAgent(query: ExecutionQuery, agent: string, start: AgentPosition | undefined, remaining: number) {
    const { values, expression, filtered } = filtersOf(query);
    values[':agent'] = agent;
    if (query.since !== undefined) values[':since'] = query.since;
    return this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: byAgentIndex,
        KeyConditionExpression: `agent_id = :agent${query.since === undefined ? '' : ' AND created_at >= :since'}`,
        ...expression,
        ExpressionAttributeValues: values,
        ExclusiveStartKey: start,
        ScanIndexForward: false,
        Limit: filtered ? Math.max(remaining, filteredReadSize) : remaining,
      }),
    );
  }
}
