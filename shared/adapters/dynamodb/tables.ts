// The tables' key layout, as plain data: the CDK stack and the local runtime both build their
// tables from these definitions, so the two can never disagree on a key name.

export interface KeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

export interface TableDefinition {
  /** Logical name; the deployed name is chosen by the stack or the local runtime. */
  readonly logicalName: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  readonly globalSecondaryIndexes: readonly {
    readonly indexName: string;
    readonly partitionKey: KeyAttribute;
    readonly sortKey?: KeyAttribute;
  }[];
  /** Epoch-seconds attribute after which DynamoDB may delete the item. */
  readonly timeToLiveAttribute?: string;
}

/**
 * Executions: partitioned on the execution id so a busy agent's writes spread over the whole
 * table; the agent id as sort key so a read with both keys enforces ownership by the key itself.
 */
export const executionsTable = {
  logicalName: 'executions',
  partitionKey: { name: 'execution_id', type: 'S' },
  sortKey: { name: 'agent_id', type: 'S' },
  globalSecondaryIndexes: [
    {
      indexName: 'by-agent',
      partitionKey: { name: 'agent_id', type: 'S' },
      sortKey: { name: 'created_at', type: 'S' },
    },
    {
      // Sparse: only calls still waiting (for a decision or an outcome) carry these attributes,
      // so the reconciler and the restarted local runtime read exactly those, by deadline.
      indexName: 'open-by-deadline',
      partitionKey: { name: 'open_shard', type: 'S' },
      sortKey: { name: 'open_until', type: 'S' },
    },
    {
      // Every record, newest first: sixteen partitions by the last hex digit of the id (random in a
      // UUIDv7), so the writes of a busy gateway never crowd one partition; the operator's listing
      // reads the sixteen and merges them. The sort key is the creation time then the id, so no two
      // records tie and the merge's order is the index's own.
      indexName: 'by-time',
      partitionKey: { name: 'created_shard', type: 'S' },
      sortKey: { name: 'created_key', type: 'S' },
    },
  ],
  timeToLiveAttribute: 'retain_until',
} as const satisfies TableDefinition;

/** The deployed configuration bundle: one item per name (the gateway reads "current"). */
export const configTable = {
  logicalName: 'config',
  partitionKey: { name: 'name', type: 'S' },
  globalSecondaryIndexes: [],
} as const satisfies TableDefinition;
