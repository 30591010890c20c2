// The reference the gateway is measured against: a server that takes the same JSON-RPC tools/call
// over HTTP, makes the same system call (the demo ERP's POST /purchase-orders, with the headers the
// gateway sends) and, with a store, the same two store writes as the gateway's direct write (a
// conditional PutItem of the claimed record, then a conditional UpdateItem with the outcome and the
// retention), and nothing else: no policy, no validation, no MCP SDK. Without a store it is the
// bare system call.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Agent, request } from 'undici';
import { type Listening, listen } from '../infra/local/net.js';
import { listingAttributes } from '../shared/adapters/dynamodb/execution-listing.js';
import { errorText } from '../shared/errors.js';
import type { Execution } from '../shared/executions/execution.js';
import { defaultRetentionMs, epochSeconds, retentionSeconds } from '../shared/executions/retention.js';
import { jsonRpcCodes } from '../shared/json-rpc-codes.js';
import { type ResultObject, resultObject } from '../shared/result.js';

export interface MinimalStore {
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  /** A record the gateway wrote for the same call: each write here is an item of its shape and size. */
  readonly template: Execution;
}

export interface MinimalServerOptions {
  readonly erpUrl: string;
  readonly erpApiKey: string;
  /** The system's deadline, recorded on the claim as the gateway does. */
  readonly deadlineMs: number;
  readonly store: MinimalStore | null;
}

export interface MinimalServer extends Listening<Server> {
  readonly url: string;
}

export interface ToolCall {
  readonly id: unknown;
  readonly arguments: unknown;
}

export const readToolCall = async (request: IncomingMessage): Promise<ToolCall> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const message: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (typeof message !== 'object' || message === null || !('params' in message)) throw new Error('not a tools/call');
  const { params } = message;
  const args = typeof params === 'object' && params !== null && 'arguments' in params ? params.arguments : {};
  return { id: 'id' in message ? message.id : null, arguments: args };
};

export const reply = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
};

/** The record as the gateway claims it: no retention end yet (its final write sets that). */
const claimedRecord = (store: MinimalStore): Omit<Execution, 'retain_until'> => {
  const { retain_until: _end, ...open } = store.template;
  return open;
};

/** The conditional PutItem of the claimed record, as the gateway's direct write makes it. */
const claimCommand = (
  store: MinimalStore,
  claimed: Omit<Execution, 'retain_until'>,
  call: { executionId: string; traceId: string; claimedAt: number; deadlineMs: number },
): PutCommand => {
  const { executionId, traceId, claimedAt } = call;
  const at = new Date(claimedAt).toISOString();
  const deadline = new Date(claimedAt + call.deadlineMs).toISOString();
  return new PutCommand({
    TableName: store.tableName,
    Item: {
      ...claimed,
      execution_id: executionId,
      status: 'approved',
      code: null,
      message: null,
      result_json: null,
      http_status: null,
      latency_ms: null,
      trace_id: traceId,
      claimed_at: at,
      deadline_at: deadline,
      created_at: at,
      updated_at: at,
      history: [{ status: 'approved', at }],
      open_shard: 'open',
      open_until: deadline,
      // The by-time index's attributes, written with every record the gateway makes.
      ...listingAttributes({ execution_id: executionId, created_at: at }),
    },
    ConditionExpression: 'attribute_not_exists(execution_id)',
  });
};

/** The conditional UpdateItem with the outcome and the retention, as the gateway's final write. */
const settleCommand = (
  store: MinimalStore,
  executionId: string,
  outcome: { resultJson: string; httpStatus: number; latencyMs: number },
): UpdateCommand => {
  const at = new Date().toISOString();
  return new UpdateCommand({
    TableName: store.tableName,
    Key: { execution_id: executionId, agent_id: store.template.agent_id },
    UpdateExpression:
      'SET #status = :to, updated_at = :at, history = list_append(history, :change), #code = :code, ' +
      '#message = :message, #result_json = :result_json, #http_status = :http_status, ' +
      '#latency_ms = :latency_ms, ' +
      // As the gateway's final write: kept for the call's retention from now.
      'retain_until = :final_s + if_not_exists(retention_s, :default_retention_s) REMOVE open_shard, open_until',
    ConditionExpression: 'attribute_exists(execution_id) AND #status = :from',
    ExpressionAttributeNames: {
      '#status': 'status',
      '#code': 'code',
      '#message': 'message',
      '#result_json': 'result_json',
      '#http_status': 'http_status',
      '#latency_ms': 'latency_ms',
    },
    ExpressionAttributeValues: {
      ':from': 'approved',
      ':to': 'succeeded',
      ':at': at,
      ':change': [{ status: 'succeeded', at }],
      ':code': null,
      ':message': null,
      ':result_json': outcome.resultJson,
      ':http_status': outcome.httpStatus,
      ':latency_ms': outcome.latencyMs,
      ':final_s': epochSeconds(at),
      ':default_retention_s': retentionSeconds(defaultRetentionMs),
    },
    ReturnValues: 'ALL_NEW',
  });
};

/** The JSON-RPC answer to the call: the gateway's result object, as text and structured. */
export const toolResult = (call: ToolCall, outcome: ResultObject) => {
  return {
    jsonrpc: '2.0',
    id: call.id,
    result: {
      content: [{ type: 'text', text: JSON.stringify(outcome) }],
      structuredContent: outcome,
      isError: false,
    },
  };
};

/** One tools/call: the claim, the system call with the gateway's headers, the outcome, the answer. */
const toolCallHandler = (options: MinimalServerOptions, dispatcher: Agent) => {
  const { store } = options;
  const claimed = store === null ? null : claimedRecord(store);
  return async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const call = await readToolCall(incoming);
    const executionId = randomUUID();
    const traceId = randomBytes(16).toString('hex');
    const claimedAt = Date.now();
    if (store !== null && claimed !== null) {
      await store.documents.send(
        claimCommand(store, claimed, { executionId, traceId, claimedAt, deadlineMs: options.deadlineMs }),
      );
    }
    const started = Date.now();
    const answer = await request(`${options.erpUrl}/purchase-orders`, {
      method: 'POST',
      dispatcher,
      headers: {
        accept: 'application/json',
        'x-request-id': executionId,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        'x-api-key': options.erpApiKey,
        'content-type': 'application/json',
      },
      body: JSON.stringify(call.arguments),
    });
    const resultJson = await answer.body.text();
    const result: unknown = JSON.parse(resultJson);
    if (store !== null) {
      const settled = { resultJson, httpStatus: answer.statusCode, latencyMs: Date.now() - started };
      await store.documents.send(settleCommand(store, executionId, settled));
    }
    const outcome = resultObject({
      status: answer.statusCode < 300 ? 'succeeded' : 'failed',
      execution_id: executionId,
      result,
    });
    reply(response, 200, toolResult(call, outcome));
  };
};

/** Serves `handle` on loopback, a call that fails answered as a JSON-RPC error; `closing` ends with it. */
export const serveToolCalls = async (
  handle: (incoming: IncomingMessage, response: ServerResponse) => Promise<void>,
  closing: () => Promise<void>,
): Promise<MinimalServer> => {
  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      const message = errorText(error);
      if (!response.headersSent)
        reply(response, 500, { jsonrpc: '2.0', id: null, error: { code: jsonRpcCodes.internalError, message } });
      else response.destroy();
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    ...listening,
    url: `http://127.0.0.1:${listening.port}`,
    close: async () => {
      await listening.close();
      await closing();
    },
  };
};

export const startMinimalServer = async (options: MinimalServerOptions): Promise<MinimalServer> => {
  const dispatcher = new Agent();
  return serveToolCalls(toolCallHandler(options, dispatcher), () => dispatcher.close());
};
