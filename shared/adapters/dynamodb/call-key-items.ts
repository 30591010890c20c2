// The call keys of shared/executions/call-keys.ts as items of the executions table: one per agent
// and digest, claimed with one conditional put (the local store has no transactions). Like an
// agent's pending places, its key is never a UUID, so no execution read finds it, and it carries
// no index attribute, so no listing does; its retain_until lets the table's time to live (the
// local runtime's sweep) delete it after the call's record.
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { CallKey, CallKeyClaim } from '../../executions/call-keys.js';
import { isConditionFailure } from './conditions.js';

const callKeyItemKey = (agentId: string, digest: string) => ({ execution_id: `call-key#${digest}`, agent_id: agentId });

/** A key item read back: the call it answers ("answers", as execution_id is the item's own key). */
const CallKeyItem = z.object({
  agent_id: z.string(),
  answers: z.string(),
  tool: z.string(),
  arguments_hash: z.string(),
  retain_until: z.number().int(),
});

const readCallKey = async (
  client: DynamoDBDocumentClient,
  tableName: string,
  key: CallKey,
): Promise<CallKey | undefined> => {
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: callKeyItemKey(key.agent_id, key.digest), ConsistentRead: true }),
  );
  if (Item === undefined) return undefined;
  const { answers, ...fields } = CallKeyItem.parse(Item);
  return { ...fields, digest: key.digest, execution_id: answers };
};

/** Claims `key` (see ExecutionStore.claimCallKey): a put only if the item is absent or names `replacing`. */
export const claimCallKeyItem = async (
  client: DynamoDBDocumentClient,
  tableName: string,
  key: CallKey,
  replacing?: string,
): Promise<CallKeyClaim> => {
  try {
    await client.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...callKeyItemKey(key.agent_id, key.digest),
          answers: key.execution_id,
          tool: key.tool,
          arguments_hash: key.arguments_hash,
          retain_until: key.retain_until,
        },
        ...(replacing === undefined
          ? { ConditionExpression: 'attribute_not_exists(execution_id)' }
          : {
              ConditionExpression: 'attribute_not_exists(execution_id) OR answers = :replacing',
              ExpressionAttributeValues: { ':replacing': replacing },
            }),
      }),
    );
    return { kind: 'claimed' };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { kind: 'taken', current: await readCallKey(client, tableName, key) };
  }
};
