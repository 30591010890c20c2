// DynamoDB adapter of the execution store. Single-item conditional writes only (the local store
// has no transactions); a failed condition is read back and reported as a conflict.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { allowedTransitions, Execution } from '../../executions/execution.js';
import {
  type CreateResult,
  type ExecutionKey,
  type ExecutionPage,
  type ExecutionStore,
  IllegalTransitionError,
  type TransitionRequest,
  type TransitionResult,
} from '../../executions/store.js';
import { executionsTable } from './tables.js';

const byAgentIndex = executionsTable.globalSecondaryIndexes[0].indexName;

const isConditionFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

const Cursor = z.record(z.string(), z.string());
const encodeCursor = (key: Record<string, unknown>): string => Buffer.from(JSON.stringify(key)).toString('base64url');
const decodeCursor = (cursor: string): Record<string, string> =>
  Cursor.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));

/** Items are validated on the way out: a record that does not parse is a fault, not data. */
const readItem = (item: Record<string, unknown> | undefined): Execution | undefined => {
  if (item === undefined) return undefined;
  const { retain_until: _retention, ...fields } = item;
  return Execution.parse(fields);
};

export class DynamoDbExecutionStore implements ExecutionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(execution: Execution): Promise<CreateResult> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: Execution.parse(execution),
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
    const { Items } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'execution_id = :id',
        ExpressionAttributeValues: { ':id': executionId },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return readItem(Items?.[0]);
  }

  async transition(key: ExecutionKey, change: TransitionRequest): Promise<TransitionResult> {
    if (!allowedTransitions[change.from].includes(change.to)) throw new IllegalTransitionError(change.from, change.to);
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = {
      ':from': change.from,
      ':to': change.to,
      ':at': change.at,
      ':change': [{ status: change.to, at: change.at }],
    };
    const sets = ['#status = :to', 'updated_at = :at', 'history = list_append(history, :change)'];
    for (const [field, value] of Object.entries(change.patch ?? {})) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { execution_id: key.execution_id, agent_id: key.agent_id },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(execution_id) AND #status = :from',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      const execution = readItem(Attributes);
      if (execution === undefined) throw new Error('The store returned no attributes for an applied transition.');
      return { kind: 'applied', execution };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return { kind: 'conflict', current: await this.getOwned(key) };
    }
  }

  async listByAgent(agentId: string, options: { limit?: number; cursor?: string } = {}): Promise<ExecutionPage> {
    const { Items, LastEvaluatedKey } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: byAgentIndex,
        KeyConditionExpression: 'agent_id = :agent',
        ExpressionAttributeValues: { ':agent': agentId },
        ScanIndexForward: false,
        Limit: options.limit ?? 50,
        ExclusiveStartKey: options.cursor === undefined ? undefined : decodeCursor(options.cursor),
      }),
    );
    const items = (Items ?? []).map((item) => readItem(item)).filter((item) => item !== undefined);
    return LastEvaluatedKey === undefined ? { items } : { items, next: encodeCursor(LastEvaluatedKey) };
  }
}
