// DynamoDB adapter of the execution store. It persists the domain's write plans
// (shared/executions/write-plan.ts) as single-item conditional writes only (the local store has no
// transactions); a failed condition is read back and reported as a conflict.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { StoreUnavailableError } from '../../errors.js';
import { Execution, openStatuses } from '../../executions/execution.js';
import { defaultRetentionSeconds, retainUntil } from '../../executions/retention.js';
import type {
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
  planClaim,
  releasePlaceAfter,
  type WritePlan,
} from '../../executions/write-plan.js';
import type { Log } from '../../log.js';
import type { ExecutionStatus } from '../../result.js';
import { readItem } from './execution-items.js';
import { DynamoDbExecutionListing } from './execution-listing.js';
import { executionsTable } from './tables.js';

const openIndex = executionsTable.globalSecondaryIndexes[1].indexName;
/** The index partitions of open calls by name (the domain's partitions, by their hex digit). */
const openShards: readonly string[] = Array.from(
  { length: openShardCount },
  (_, shard) => `open-${shard.toString(16)}`,
);

/** The sparse index's attributes of a call still waiting, keyed by its next deadline. */
const openAttributes = (execution: Execution): Record<string, string> => {
  const entry = openEntryOf(execution);
  return entry === null ? {} : { open_shard: `open-${entry.shard.toString(16)}`, open_until: entry.until };
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

/**
 * An agent's places for calls waiting for approval: one item per agent in the executions table,
 * whose string set holds the ids of its held calls. Its key is never a UUID, so no execution read
 * finds it, and it carries no index attribute, so no listing does.
 */
const pendingPlacesKey = (agentId: string) => ({ execution_id: `pending-calls#${agentId}`, agent_id: agentId });
const PendingPlaces = z.object({ holders: z.set(z.string()).optional() });

/** Whether a conditional write failed on its condition (DynamoDB and dynalite name it alike). */
export const isConditionFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * All of `conditions` (each one term, never an OR), and `unset` (an attribute) absent or NULL when
 * named. That last part is written out as two conjunctions joined by OR, not as a parenthesized
 * OR: the same condition to DynamoDB (AND binds tighter than OR), and one the local store's
 * expression parser reads in a fraction of the time (a parenthesized group costs it about a third
 * of a millisecond per write).
 */
export const conditionOf = (conditions: readonly string[], unset?: string): string =>
  unset === undefined
    ? conditions.join(' AND ')
    : [`attribute_not_exists(${unset})`, `attribute_type(${unset}, :null)`]
        .map((either) => [...conditions, either].join(' AND '))
        .join(' OR ');

/** A write plan as one UpdateCommand's expressions: its sets, its index change, and its conditions. */
const updateOf = (plan: WritePlan) => {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':expected_status': plan.conditions.status };
  const sets: string[] = [];
  for (const [field, value] of Object.entries(plan.sets)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  if (plan.historyEntry !== null) {
    values[':history_entry'] = [plan.historyEntry];
    sets.push('history = list_append(history, :history_entry)');
  }
  if (plan.retainFrom !== null) {
    values[':final_s'] = plan.retainFrom;
    values[':default_retention_s'] = defaultRetentionSeconds;
    sets.push('retain_until = :final_s + if_not_exists(retention_s, :default_retention_s)');
  }
  if (plan.openIndex.kind === 'due') {
    values[':open_until'] = plan.openIndex.until;
    sets.push('open_until = :open_until');
  }
  const removes = plan.openIndex.kind === 'leave' ? ' REMOVE open_shard, open_until' : '';
  return {
    UpdateExpression: `SET ${sets.join(', ')}${removes}`,
    ConditionExpression: conditionsOf(plan.conditions, names, values),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
};

/** The plan's conditions as a condition expression, their names and values added to the given ones. */
const conditionsOf = (
  conditions: WritePlan['conditions'],
  names: Record<string, string>,
  values: Record<string, unknown>,
): string => {
  const terms = ['attribute_exists(execution_id)', '#status = :expected_status'];
  if (conditions.argumentsHash !== undefined) {
    values[':hash'] = conditions.argumentsHash;
    terms.push('arguments_hash = :hash');
  }
  if (conditions.expiresAfter !== undefined) {
    values[':now'] = conditions.expiresAfter;
    terms.push('expires_at > :now');
  }
  if (conditions.unset === undefined) return conditionOf(terms);
  names[`#${conditions.unset}`] = conditions.unset;
  values[':null'] = 'NULL';
  return conditionOf(terms, `#${conditions.unset}`);
};

/** Page cursors are opaque to callers: JSON in base64url, checked against its shape on the way back. */
const Cursor = z.record(z.string(), z.string());
/** Where a listing of open calls goes on: the index partition, and the key within it. */
const OpenCursor = z.object({ shard: z.number().int().min(0), key: Cursor.optional() });
const encodeCursor = (position: unknown): string => Buffer.from(JSON.stringify(position)).toString('base64url');
const decodeCursor = <S extends z.ZodType>(cursor: string, shape: S): z.infer<S> =>
  shape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));

/** DynamoDB's answers that mean "not now": nothing was written, and the same request may work shortly. */
const throttlingErrors = new Set([
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ThrottlingException',
  'LimitExceededException',
]);
const isTemporaryFault = (error: unknown): boolean =>
  error instanceof Error && (('$fault' in error && error.$fault === 'server') || throttlingErrors.has(error.name));

/**
 * The document client the execution store is given: `client`'s, with a fault on the store's side
 * that outlasts the SDK's own retries turned into the one kind of error callers know (a call refused
 * with nothing sent, not an internal fault of unknown outcome). It adds that step to `client`'s
 * middleware, which the document client shares: build `client` for it.
 */
export const executionStoreDocuments = (client: DynamoDBClient): DynamoDBDocumentClient => {
  const documents = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  documents.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw isTemporaryFault(error)
          ? new StoreUnavailableError('The execution store is unavailable.', { cause: error })
          : error;
      }
    },
    { step: 'initialize', name: 'storeUnavailable', override: true },
  );
  return documents;
};

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
          Item: { ...itemOf(Execution.parse(execution)), ...openAttributes(execution) },
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
      } else key = LastEvaluatedKey as Record<string, string>;
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
