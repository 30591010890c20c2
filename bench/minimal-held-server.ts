// The floor of the reply to a held call: a server that takes the same JSON-RPC tools/call over HTTP
// and makes the requests the gateway's hold makes on the way to its reply, and nothing else: the
// call's key (the adapter's own conditional PutItem of a held call's key item, so the same call asked
// again would join it), the agent's pending place (the adapter's own conditional UpdateItem), then
// the record (a PutItem of a held record the gateway wrote, under a fresh id, as the adapter writes
// a new record) and the approval run's start (the Step Functions adapter's own StartExecution, on
// the same local endpoint and state machine) together. No policy, no validation, no MCP SDK.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { claimCallKeyItem } from '../shared/adapters/dynamodb/call-key-items.js';
import { DynamoDbExecutionStore, newItemOf } from '../shared/adapters/dynamodb/execution-store.js';
import type { ApprovalRuns } from '../shared/approvals/approval-runs.js';
import { type CallKey, keyRetainUntil } from '../shared/executions/call-keys.js';
import type { Execution } from '../shared/executions/execution.js';
import { defaultRetentionSeconds } from '../shared/executions/retention.js';
import { uuidV7Ids } from '../shared/ids.js';
import type { ResultObject } from '../shared/result.js';
import { approvalTimeoutSeconds } from '../shared/use-cases/approval-time.js';
import {
  type MinimalServer,
  type MinimalStore,
  readToolCall,
  reply,
  serveToolCalls,
  toolResult,
} from './minimal-server.js';

export interface MinimalHoldOptions {
  /** The gateway's store and table; the template is a held record the gateway wrote, before its run registered. */
  readonly store: MinimalStore;
  /** The gateway's reply to the template's call: the floor's replies are of its shape and size. */
  readonly reply: ResultObject;
  /** The agent whose places the floor takes (one of its own, so each side's place item grows alike). */
  readonly agentId: string;
  readonly pendingLimit: number;
  /** The approval runs on the gateway's Step Functions endpoint and state machine. */
  readonly approvalRuns: ApprovalRuns;
}

/** The floor's agent: a name as long as the template's agent's, so its records are of the same size. */
export const floorAgentOf = (agentId: string): string => `floor-${agentId}`.slice(0, Math.max(agentId.length, 6));

/**
 * The template's record as the gateway would write it for a call of this id, agent and time: the
 * same approval time, a history of the same length, a fresh trace, nothing its run adds later.
 */
export const heldRecordOf = (
  template: Execution,
  call: { executionId: string; agentId: string; at: number },
): Execution => {
  const at = new Date(call.at).toISOString();
  const approvalMs =
    template.expires_at === null ? 0 : Date.parse(template.expires_at) - Date.parse(template.created_at);
  return {
    ...template,
    execution_id: call.executionId,
    agent_id: call.agentId,
    created_at: at,
    updated_at: at,
    expires_at: template.expires_at === null ? null : new Date(call.at + approvalMs).toISOString(),
    history: template.history.map((change) => ({ ...change, at })),
    trace_id: template.trace_id === null ? null : randomBytes(16).toString('hex'),
    task_token: null,
    notified_at: null,
  };
};

/**
 * The key a held call is known by while it waits (the gateway's join of a call asked for again), for
 * a new call each time: a random digest as long as the gateway's SHA-256, kept as long as the call's.
 */
const heldCallKeyOf = (held: Execution): CallKey => ({
  agent_id: held.agent_id,
  digest: randomBytes(32).toString('hex'),
  execution_id: held.execution_id,
  tool: held.tool,
  arguments_hash: held.arguments_hash ?? '',
  retain_until: keyRetainUntil(
    held.created_at,
    held.expires_at === null ? 0 : Date.parse(held.expires_at) - Date.parse(held.created_at),
    held.retention_s ?? defaultRetentionSeconds,
  ),
});

const holdHandler = (options: MinimalHoldOptions) => {
  const { store, approvalRuns, agentId, pendingLimit } = options;
  // The adapter's own pending place: the same conditional write the gateway's hold makes.
  const places = new DynamoDbExecutionStore(store.documents, store.tableName, {
    info: () => undefined,
    warn: () => undefined,
  });
  return async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const call = await readToolCall(incoming);
    const executionId = uuidV7Ids.next();
    const held = heldRecordOf(store.template, { executionId, agentId, at: Date.now() });
    const key = await claimCallKeyItem(store.documents, store.tableName, heldCallKeyOf(held));
    if (key.kind !== 'claimed') throw new Error(`the floor's call key for ${executionId} was taken`);
    const place = await places.reservePending(agentId, executionId, pendingLimit);
    if (place.kind !== 'reserved') throw new Error(`the floor's agent ${agentId} has no pending place left`);
    await Promise.all([
      store.documents.send(
        new PutCommand({
          TableName: store.tableName,
          Item: newItemOf(held),
          ConditionExpression: 'attribute_not_exists(execution_id)',
        }),
      ),
      approvalRuns.start({
        execution_id: executionId,
        agent_id: agentId,
        timeout_seconds: approvalTimeoutSeconds(held, Date.now()),
      }),
    ]);
    reply(response, 200, toolResult(call, { ...options.reply, execution_id: executionId }));
  };
};

export const startMinimalHeldServer = (options: MinimalHoldOptions): Promise<MinimalServer> =>
  serveToolCalls(holdHandler(options), async () => undefined);
