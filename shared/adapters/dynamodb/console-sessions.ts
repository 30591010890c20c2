// The console's session list in the executions table, as the connection claims are: one item per
// session under a key that is never a UUID and with no index attribute, so no read or listing of
// calls sees it; DynamoDB's time to live removes it a day after it ends. Every write is a
// conditional update (the console's role may update items, not put or delete them).
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { SessionStore, StoredSession } from '../../sessions/session-store.js';
import { isConditionFailure } from './conditions.js';
import { executionsTable } from './tables.js';

const keptAfterEndSeconds = 24 * 60 * 60;
const sortKey = 'console-session';

const consoleSessionKey = (id: string) => ({ execution_id: `console-session#${id}`, agent_id: sortKey });

const Item = z.object({
  use: z.enum(['session', 'customer']),
  subject: z.string(),
  csrf: z.string(),
  seen_at: z.number(),
  expires_at: z.number(),
  ended_at: z.number().optional(),
});

export class DynamoDbSessionStore implements SessionStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async start(id: string, session: Omit<StoredSession, 'ended'>): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: consoleSessionKey(id),
        UpdateExpression:
          'SET #use = :use, subject = :subject, csrf = :csrf, seen_at = :seen, expires_at = :expires, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(execution_id)',
        ExpressionAttributeNames: { '#use': 'use', '#ttl': executionsTable.timeToLiveAttribute },
        ExpressionAttributeValues: {
          ':use': session.use,
          ':subject': session.subject,
          ':csrf': session.csrf,
          ':seen': session.seenAt,
          ':expires': session.expiresAt,
          ':ttl': Math.ceil(session.expiresAt / 1000) + keptAfterEndSeconds,
        },
      }),
    );
  }

  async get(id: string): Promise<StoredSession | null> {
    const { Item: item } = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: consoleSessionKey(id), ConsistentRead: true }),
    );
    const parsed = Item.safeParse(item);
    if (!parsed.success) return null;
    const { use, subject, csrf, seen_at, expires_at, ended_at } = parsed.data;
    return { use, subject, csrf, seenAt: seen_at, expiresAt: expires_at, ended: ended_at !== undefined };
  }

  async touch(id: string, seenAt: number, now: number): Promise<void> {
    await this.update(id, 'SET seen_at = :now', 'seen_at = :seen AND attribute_not_exists(ended_at)', {
      ':now': now,
      ':seen': seenAt,
    });
  }

  async end(id: string, now: number): Promise<void> {
    await this.update(id, 'SET ended_at = :now', 'attribute_exists(execution_id) AND attribute_not_exists(ended_at)', {
      ':now': now,
    });
  }

  /** A conditional update whose lost condition is a normal outcome (already moved on, ended, unknown). */
  private async update(id: string, expression: string, condition: string, values: Record<string, number>) {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: consoleSessionKey(id),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
