// A gateway table, built from the same key definitions the local runtime uses: on-demand,
// point-in-time recovery, TTL for retention where defined, optionally a customer-managed key. Each
// function is granted by what it does with the table (record calls, decide, reconcile, ...): the
// exact calls its code paths make, named once here rather than listed at every grant.
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  CfnGlobalTable,
  type ITableV2,
  TableEncryptionV2,
  TableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable, type IRole } from 'aws-cdk-lib/aws-iam';
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
  private readonly definition: TableDefinition;

  constructor(scope: Construct, id: string, props: GatewayTableProps) {
    super(scope, id);
    this.definition = props.definition;
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

  /**
   * Serving agents' calls (the executions table): each call is recorded, claimed, moved on and read
   * back by its key, and an agent's own calls are listed from the table's indexes.
   */
  grantRecordCalls(role: IRole): void {
    this.table.grant(role, 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query');
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.tableLogicalId}.Arn>/index/*]`,
      reason: "Per-agent listings query the executions table's own indexes; the grant covers exactly those.",
    });
  }

  /** The approval run's steps (register, execute, expire): read and conditionally update one call by its full key. */
  grantAdvanceHeldCalls(grantee: IGrantable): void {
    this.grantByKey(grantee);
  }

  /** The reconciler: what the approval run's steps do, found from the sparse index of open calls. */
  grantReconcile(grantee: IGrantable): void {
    this.grantByKey(grantee);
    this.grantQuery(grantee, [this.indexArn('open-by-deadline')]);
  }

  /**
   * The approver console: decides a call it finds by its id alone (a query on the table), lists
   * the open calls, and lists the requesting agent's recent calls beside a held one.
   */
  grantDecide(grantee: IGrantable): void {
    this.grantByKey(grantee);
    this.grantQuery(grantee, [this.table.tableArn, this.indexArn('open-by-deadline'), this.indexArn('by-agent')]);
  }

  /** The deployed configuration (the configuration table) is read, never written, by the functions: config:push writes it. */
  grantReadConfiguration(grantee: IGrantable): void {
    this.table.grant(grantee, 'dynamodb:GetItem');
  }

  private grantByKey(grantee: IGrantable): void {
    Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
    });
  }

  private grantQuery(grantee: IGrantable, resourceArns: string[]): void {
    Grant.addToPrincipal({ grantee, actions: ['dynamodb:Query'], resourceArns });
  }

  /** One of the table's own indexes, by the name its definition gives it. */
  private indexArn(name: string): string {
    const index = this.definition.globalSecondaryIndexes.find((candidate) => candidate.indexName === name);
    if (index === undefined) throw new Error(`The ${this.definition.logicalName} table defines no ${name} index.`);
    return `${this.table.tableArn}/index/${index.indexName}`;
  }
}
