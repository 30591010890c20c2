// The configuration table's one item: the pointer to the deployed bundle (version, object
// version, hash, signature), replaced with a conditional write so two pushes cannot silently
// overwrite each other. An item an older config:push wrote (the whole bundle) reads as unsigned.
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  type BundlePointer,
  type BundlePointerTable,
  type DeployedBundle,
  BundlePointer as Pointer,
} from '../../control-plane/bundle.js';
import { isConditionFailure } from './conditions.js';

const itemName = 'current';

/** What an older config:push wrote: the bundle itself, of which only the version is read. */
const OlderItem = z.object({ version: z.string().min(1) });

export class DynamoDbBundlePointers implements BundlePointerTable {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(): Promise<DeployedBundle | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { name: itemName }, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const pointer = Pointer.safeParse(Item, { jitless: true });
    if (pointer.success) return { kind: 'signed', pointer: pointer.data };
    const older = OlderItem.safeParse(Item, { jitless: true });
    // Neither: the item is not ours to read, and nothing in it is taken.
    return { kind: 'unsigned', version: older.success ? older.data.version : '(unreadable)' };
  }

  async write(pointer: BundlePointer, expectedVersion: string | null): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { name: itemName, ...Pointer.parse(pointer) },
          ...(expectedVersion === null
            ? { ConditionExpression: 'attribute_not_exists(#name)', ExpressionAttributeNames: { '#name': 'name' } }
            : {
                ConditionExpression: '#version = :expected',
                ExpressionAttributeNames: { '#version': 'version' },
                ExpressionAttributeValues: { ':expected': expectedVersion },
              }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
