// DynamoDB adapter of the execution store. It persists the domain's write plans
// (shared/executions/write-plan.ts) as single-item conditional writes only (the local store has no
// transactions); a failed condition is read back and reported as a conflict.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { CallKey, CallKeyClaim } from '../../executions/call-keys.js';
import { Execution, openStatuses } from '../../executions/execution.js';
import { retainUntil } from '../../executions/retention.js';
import type {
  ApprovalRequest,
  ClaimRequest,
  CreateResult,
  ExecutionKey,
  ExecutionPage,
  ExecutionPatch,
  ExecutionStore,
  PendingReservation,
  TransitionRequest,
  TransitionResult,
} from '../../executions/store.js';
import {
  legalPlan,
  openEntryOf,
  openShardCount,
  planAnnotation,
  planApproval,
  planClaim,
  releasePlaceAfter,
  unsettledShard,
  unsettledSince,
  type WritePlan,
} from '../../executions/write-plan.js';
import type { Log } from '../../log.js';
import type { ExecutionStatus } from '../../result.js';
import { claimCallKeyItem } from './call-key-items.js';
import { isConditionFailure } from './conditions.js';
import { readItem } from './execution-items.js';
import { DynamoDbExecutionListing, listingAttributes } from './execution-listing.js';
import { updateOf } from './plan-update.js';
import { executionsTable } from './tables.js';

const openIndex = executionsTable.globalSecondaryIndexes[1].indexName;
/** The index partitions of open calls by name (the domain's partitions, by their hex digit). */
const openShards: readonly string[] = Array.from(
  { length: openShardCount },
  (_, shard) => `open-${shard.toString(16)}`,
);

/**
 * The sparse index's attributes of a call still waiting, keyed by its next deadline, or of an
 * unknown outcome not yet settled, in that partition since it ended.
 */
const openAttributes = (execution: Execution): Record<string, string> => {
  const entry = openEntryOf(execution);
  if (entry !== null) return { open_shard: `open-${entry.shard.toString(16)}`, open_until: entry.until };
  const since = unsettledSince(execution);
  return since === null ? {} : { open_shard: unsettledShard, open_until: since };
};

/**
 * The record as written: its retention only when known (a final write adds to the attribute, so it
 * is never NULL), and its deletion date only when it is final.
 */
const itemOf = (execution: Execution): Record<string, unknown> => {
  const { retention_s, retain_until: _given, ...fields } = execution;
  const until = retainUntil(execution.status, execution.updated_at, retention_s);
  return {
    ...fields,
    ...(retention_s === null ? {} : { retention_s }),
    ...(until === null ? {} : { retain_until: until }),
  };
};

/** A new record's item: the record as written and the attributes of the indexes it belongs to. */
export const newItemOf = (execution: Execution): Record<string, unknown> => ({
  ...itemOf(execution),
  ...openAttributes(execution),
  ...listingAttributes(execution),
});

/**
 * An agent's places for calls waiting for approval: one item per agent in the executions table,
 * whose string set holds the ids of its held calls. Its key is never a UUID, so no execution read
 * finds it, and it carries no index attribute, so no listing does.
 */
const pendingPlacesKey = (agentId: string) => ({ execution_id: `pending-calls#${agentId}`, agent_id: agentId });
const PendingPlaces = z.object({ holders: z.set(z.string()).optional() });

/** Page cursors are opaque to callers: JSON in base64url, checked against its shape on the way back. */
const Cursor = z.record(z.string(), z.string());
/** Where a listing of open calls goes on: the index partition, and the key within it. */
const OpenCursor = z.object({ shard: z.number().int().min(0), key: Cursor.optional() });
const encodeCursor = (position: unknown): string => Buffer.from(JSON.stringify(position)).toString('base64url');
const decodeCursor = <S extends z.ZodType>(cursor: string, shape: S): z.infer<S> =>
  shape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));

export class DynamoDbExecutionStore implements ExecutionStore {
  /** `log` hears of a held call's place that could not be given back. */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly log: Log,
  ) {}

  async create(execution: Execution): Promise<CreateResult> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: newItemOf(Execution.parse(execution)),
          ConditionExpression: 'attribute_not_exists(execution_id)',
        }),
      );
      return { kind: 'created' };
    } catch (error) {
      if (isConditionFailure(error)) return { kind: 'exists' };
      throw error;
    }
  }

  async getOwned(key: ExecutionKey): Promise<Execution | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { execution_id: key.execution_id, agent_id: key.agent_id },
        ConsistentRead: true,
      }),
    );
    return readItem(Item);
  }

  async get(executionId: string): Promise<Execution | undefined> {
    const { Items = [] } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'execution_id = :id',
        ExpressionAttributeValues: { ':id': executionId },
        ConsistentRead: true,
        Limit: 2,
      }),
    );
    // Ids are generated by the gateway (UUIDv7), so one id has one owner; two would be a fault.
    if (Items.length > 1) throw new Error(`Execution id ${executionId} is recorded for more than one agent.`);
    return readItem(Items[0]);
  }

  // async: a move the lifecycle refuses is a rejected promise, as every other fault of a write.
  async transition(key: ExecutionKey, change: TransitionRequest): Promise<TransitionResult> {
    return this.persist(key, legalPlan(change));
  }

  claim(key: ExecutionKey, claim: ClaimRequest): Promise<TransitionResult> {
    return this.persist(key, planClaim(claim));
  }

  addApproval(key: ExecutionKey, approval: ApprovalRequest): Promise<TransitionResult> {
    return this.persist(key, planApproval(approval));
  }

  annotate(
    key: ExecutionKey,
    status: ExecutionStatus,
    patch: ExecutionPatch,
    onlyIfUnset?: keyof ExecutionPatch,
  ): Promise<TransitionResult> {
    return this.persist(key, planAnnotation(status, patch, onlyIfUnset));
  }

  /** One conditional update of an existing execution, as the plan says; a failed condition is a conflict. */
  private async persist(key: ExecutionKey, plan: WritePlan): Promise<TransitionResult> {
    let execution: Execution | undefined;
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { execution_id: key.execution_id, agent_id: key.agent_id },
          ...updateOf(plan),
          ReturnValues: 'ALL_NEW',
        }),
      );
      execution = readItem(Attributes);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return { kind: 'conflict', current: await this.getOwned(key) };
    }
    if (execution === undefined) throw new Error('The store returned no attributes for an applied update.');
    await releasePlaceAfter(plan, key, (agentId, ids) => this.releasePending(agentId, ids), this.log);
    return { kind: 'applied', execution };
  }

  async listOpen(options: { dueBefore?: string; limit?: number; cursor?: string } = {}): Promise<ExecutionPage> {
    const limit = options.limit ?? 100;
    const start = options.cursor === undefined ? { shard: 0 } : decodeCursor(options.cursor, OpenCursor);
    const items: Execution[] = [];
    let shard = start.shard;
    let key = start.key;
    while (shard < openShards.length && items.length < limit) {
      const { Items, LastEvaluatedKey } = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: openIndex,
          KeyConditionExpression:
            options.dueBefore === undefined ? 'open_shard = :shard' : 'open_shard = :shard AND open_until <= :due',
          ExpressionAttributeValues: {
            ':shard': openShards[shard],
            ...(options.dueBefore === undefined ? {} : { ':due': options.dueBefore }),
          },
          Limit: limit - items.length,
          ExclusiveStartKey: key,
        }),
      );
      for (const item of Items ?? []) {
        const execution = readItem(item);
        if (execution !== undefined) items.push(execution);
      }
      if (LastEvaluatedKey === undefined) {
        shard += 1;
        key = undefined;
      } else key = Cursor.parse(LastEvaluatedKey);
    }
    if (shard >= openShards.length) return { items };
    return { items, next: encodeCursor(key === undefined ? { shard } : { shard, key }) };
  }

  async reservePending(agentId: string, executionId: string, limit: number): Promise<PendingReservation> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: pendingPlacesKey(agentId),
          UpdateExpression: 'ADD holders :ids',
          ConditionExpression: 'attribute_not_exists(holders) OR size(holders) < :limit OR contains(holders, :id)',
          ExpressionAttributeValues: { ':ids': new Set([executionId]), ':limit': limit, ':id': executionId },
        }),
      );
      return { kind: 'reserved' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: pendingPlacesKey(agentId), ConsistentRead: true }),
      );
      return { kind: 'full', holders: [...(PendingPlaces.parse(Item ?? {}).holders ?? [])] };
    }
  }

  async releasePending(agentId: string, executionIds: readonly string[]): Promise<void> {
    if (executionIds.length === 0) return;
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: pendingPlacesKey(agentId),
          UpdateExpression: 'DELETE holders :ids',
          ConditionExpression: 'attribute_exists(holders)',
          ExpressionAttributeValues: { ':ids': new Set(executionIds) },
        }),
      )
      .catch((error: unknown) => {
        // No places recorded at all: nothing to give back.
        if (!isConditionFailure(error)) throw error;
      });
  }

  claimCallKey(key: CallKey, replacing?: string): Promise<CallKeyClaim> {
    return claimCallKeyItem(this.client, this.tableName, key, replacing);
  }

  /** One COUNT query of the index's partition of unsettled outcomes, page by page. */
  async countUnsettled(): Promise<number> {
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const { Count = 0, LastEvaluatedKey } = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: openIndex,
          KeyConditionExpression: 'open_shard = :shard',
          ExpressionAttributeValues: { ':shard': unsettledShard },
          Select: 'COUNT',
          ExclusiveStartKey: start,
        }),
      );
      count += Count;
      start = LastEvaluatedKey;
    } while (start !== undefined);
    return count;
  }

  /** One scan request per page: `limit` records are read, and the open ones among them returned. */
  async scanOpen(options: { limit?: number; cursor?: string } = {}): Promise<ExecutionPage> {
    const statuses = [...openStatuses];
    const { Items, LastEvaluatedKey } = await this.client.send(
      new ScanCommand({
        TableName: this.tableName,
        FilterExpression: `#status IN (${statuses.map((_, index) => `:open${index}`).join(', ')})`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: Object.fromEntries(statuses.map((status, index) => [`:open${index}`, status])),
        ConsistentRead: true,
        Limit: options.limit ?? 100,
        ExclusiveStartKey: options.cursor === undefined ? undefined : decodeCursor(options.cursor, Cursor),
      }),
    );
    const items = (Items ?? []).map((item) => readItem(item)).filter((item) => item !== undefined);
    return LastEvaluatedKey === undefined ? { items } : { items, next: encodeCursor(LastEvaluatedKey) };
  }

  /** Through the audit listing's own query of the by-agent index (npm run executions reads the same). */
  listByAgent(agentId: string, options: { limit?: number; cursor?: string } = {}): Promise<ExecutionPage> {
    return new DynamoDbExecutionListing(this.client, this.tableName).list({
      agent: agentId,
      limit: options.limit ?? 50,
      ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
    });
  }
}
