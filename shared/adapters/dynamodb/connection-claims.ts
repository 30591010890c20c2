// The once-per-connection claim of the /tool/call-tool WebSocket front, as one conditional put in
// the executions table: the first message of a connection writes the item, any later one finds it.
// Its key is never a UUID and it carries no index attribute, so no read or listing of calls sees
// it; DynamoDB's time to live removes it a day later (a connection lives two hours at most).
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ConnectionClaims } from '../../channel-connections.js';
import type { Clock } from '../../clock.js';
import { isConditionFailure } from './conditions.js';
import { executionsTable } from './tables.js';

const retainSeconds = 24 * 60 * 60;

export const connectionClaimKey = (connectionId: string, agentId: string) => ({
  execution_id: `call-tool-connection#${connectionId}`,
  agent_id: agentId,
});

export class DynamoDbConnectionClaims implements ConnectionClaims {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock,
  ) {}

  async claim(connectionId: string, agentId: string): Promise<boolean> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...connectionClaimKey(connectionId, agentId),
            [executionsTable.timeToLiveAttribute]: Math.floor(this.clock.now() / 1000) + retainSeconds,
          },
          ConditionExpression: 'attribute_not_exists(execution_id)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
