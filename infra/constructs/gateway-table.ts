// A gateway table, built from the same key definitions the local runtime uses: on-demand,
// point-in-time recovery, TTL for retention where defined, optionally a customer-managed key.
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  CfnGlobalTable,
  type ITableV2,
  TableEncryptionV2,
  TableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { KeyAttribute, TableDefinition } from '../../shared/adapters/dynamodb/tables.js';

export interface GatewayTableProps {
  /** Keys and indexes, shared with the local runtime. */
  readonly definition: TableDefinition;
  /** Encrypt the table with this key. @default AWS-owned key */
  readonly encryptionKey?: IKey;
  /** What happens to the table when the stack is deleted. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

const attribute = (key: KeyAttribute) => ({
  name: key.name,
  type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
});

const tableV2Props = (definition: TableDefinition) => ({
  partitionKey: attribute(definition.partitionKey),
  ...(definition.sortKey === undefined ? {} : { sortKey: attribute(definition.sortKey) }),
  globalSecondaryIndexes: definition.globalSecondaryIndexes.map((index) => ({
    indexName: index.indexName,
    partitionKey: attribute(index.partitionKey),
    ...(index.sortKey === undefined ? {} : { sortKey: attribute(index.sortKey) }),
  })),
  ...(definition.timeToLiveAttribute === undefined ? {} : { timeToLiveAttribute: definition.timeToLiveAttribute }),
});

export class GatewayTable extends Construct {
  readonly table: ITableV2;
  /** The table's logical id in the template (IAM findings name it). */
  readonly tableLogicalId: string;

  constructor(scope: Construct, id: string, props: GatewayTableProps) {
    super(scope, id);
    const table = new TableV2(this, 'Table', {
      ...tableV2Props(props.definition),
      billing: Billing.onDemand(),
      // Continuous backups for the longest window DynamoDB offers: a restore to any second of the
      // last 35 days brings back items as they were then, including those TTL has deleted since.
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true, recoveryPeriodInDays: 35 },
      deletionProtection: (props.removalPolicy ?? RemovalPolicy.RETAIN) === RemovalPolicy.RETAIN,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      encryption:
        props.encryptionKey === undefined
          ? TableEncryptionV2.awsManagedKey()
          : TableEncryptionV2.customerManagedKey(props.encryptionKey),
    });
    this.table = table;
    const cfn = table.node.defaultChild;
    if (!(cfn instanceof CfnGlobalTable))
      throw new Error('TableV2 no longer synthesizes an AWS::DynamoDB::GlobalTable.');
    this.tableLogicalId = Stack.of(this).getLogicalId(cfn);
  }
}
