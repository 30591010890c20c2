// The configuration bundle in DynamoDB: one item, replaced with a conditional write so two pushes
// cannot silently overwrite each other. The same version is pushed again when the deployed bundle
// lacks a compiled snapshot the functions can read (pushed by an older config:push).
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  ConfigBundle,
  type ConfigBundleStore,
  decodeCompiledSnapshot,
  type PushResult,
} from '../../control-plane/bundle.js';

const itemName = 'current';

export class DynamoDbConfigStore implements ConfigBundleStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async fetch(): Promise<ConfigBundle | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { name: itemName }, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const { name: _name, ...bundle } = Item;
    // Read once per configuration: zod's compiled fast path would cost more to build than it saves.
    return ConfigBundle.parse(bundle, { jitless: true });
  }

  async push(bundle: ConfigBundle, expectedVersion: string | null): Promise<PushResult> {
    const current = await this.fetch();
    if (
      current?.version === bundle.version &&
      current.compiled !== undefined &&
      decodeCompiledSnapshot(current.compiled).ok
    ) {
      return { kind: 'unchanged' };
    }
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { name: itemName, ...ConfigBundle.parse(bundle) },
          ...(expectedVersion === null
            ? { ConditionExpression: 'attribute_not_exists(#name)', ExpressionAttributeNames: { '#name': 'name' } }
            : {
                ConditionExpression: '#version = :expected',
                ExpressionAttributeNames: { '#version': 'version' },
                ExpressionAttributeValues: { ':expected': expectedVersion },
              }),
        }),
      );
      return { kind: 'pushed' };
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
      return { kind: 'conflict', current: (await this.fetch())?.version ?? null };
    }
  }
}
