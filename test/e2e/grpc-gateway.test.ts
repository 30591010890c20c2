// The gRPC tool gateway under `npm start`, driven by @grpc/grpc-js as a caller would: one stream
// per request, Connect first, JSON-RPC messages after; every answer checked against the
// reference's shapes, and the executions it leaves read back from the store.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { isErrorStatus, ResultObject } from '../../shared/result.js';
import { eventually } from '../support/approval-org.js';
import { type ConnectFields, openStream } from '../support/grpc-client.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

let erp: DemoErp;
let runtime: RuntimeProcess;
let store: DynamoDbExecutionStore;
const clients: grpc.Client[] = [];

const traceId = '0af7651916cd43dd8448eb211c80319c';
const connectFields: ConnectFields = {
  server_id: 'erp',
  request_id: 'pcc-request-1',
  trace_context: { trace_id: traceId, span_id: 'b7ad6b7169203331' },
  tenant_info: {
    bundle_id: 'com.example.notes',
    feature_id: 'summarize',
    client_info: '<iPhone17,1> <iPhone OS;26.1;23B80>',
    automated_test_device_group: 'ci-group-a',
  },
  server_cloudos_version: '3.1 (24A100)',
};

beforeAll(async () => {
  erp = await startDemoErp({ port: 0 });
  runtime = await startRuntimeProcess(['--memory', '--no-demo-erp'], { DEMO_ERP_URL: erp.url });
  store = new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );
}, 180_000);

afterAll(async () => {
  for (const client of clients.splice(0)) client.close();
  await runtime?.stop();
  await erp?.close();
});

beforeEach(() => erp.reset());

const open = (token: string = demoTokens.procurement, extra: Record<string, string> = {}) =>
  openStream(runtime.grpcAddress, { authorization: `Bearer ${token}`, ...extra }, clients);

const connected = async (fields: ConnectFields = connectFields, extra: Record<string, string> = {}) => {
  const stream = open(demoTokens.procurement, extra);
  stream.connect(fields);
  expect(await stream.next()).toEqual({ response: 'connected', connected: {} });
  return stream;
};

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** A tools/call answer as the reference shapes it: structuredContent always, isError by status. */
const toolAnswer = (message: Record<string, unknown>): { id: unknown; result: ResultObject } => {
  expect(Object.keys(message).sort()).toEqual(['id', 'jsonrpc', 'result']);
  expect(message.jsonrpc).toBe('2.0');
  const answer = message.result as {
    content: { type: string; text: string }[];
    structuredContent: unknown;
    isError: boolean;
  };
  expect(Object.keys(answer).sort()).toEqual(['content', 'isError', 'structuredContent']);
  const result = ResultObject.parse(answer.structuredContent);
  expect(answer.content).toHaveLength(1);
  expect(answer.content[0]?.type).toBe('text');
  expect(JSON.parse(answer.content[0]?.text ?? 'null')).toEqual(answer.structuredContent);
  expect(answer.isError).toBe(isErrorStatus(result.status));
  return { id: message.id, result };
};

const order = (amount: string) => ({ vendor_id: 'V-100', amount, currency: 'EUR', description: 'Chairs' });

describe('the gRPC gateway under npm start', () => {
  it(
    verifies(
      ['grpc.messages', 'grpc.metadata-recorded', 'grpc.bounds'],
      'serves one stream: initialize, two calls answered out of order, a held call and its status, recorded with the stream’s metadata',
    ),
    async () => {
      const stream = await connected(connectFields, { 'Apple-Request-UUID': 'B4A7C5E2-7F3D-4E1A-9C2B-1D2E3F4A5B6C' });
      stream.send({
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cb_bridged', version: '1' } },
      });
      expect(await stream.nextJson()).toEqual({
        jsonrpc: '2.0',
        id: 'init',
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'approval-gateway', title: 'Approval Gateway', version: expect.any(String) },
          instructions: expect.any(String),
        },
      });
      stream.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      stream.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
      const listed = await stream.nextJson();
      expect(listed.id).toBe('list');
      const names = (listed.result as { tools: { name: string; outputSchema: unknown }[] }).tools.map(
        (tool) => tool.name,
      );
      expect(names).toEqual(
        expect.arrayContaining(['get_execution_status', 'erp.purchase_orders.get', 'erp.vendors.get']),
      );

      stream.send(call('small', 'erp.purchase_orders.create', order('50')));
      const small = toolAnswer(await stream.nextJson());
      expect(small).toMatchObject({ id: 'small', result: { status: 'succeeded', result: { id: 'PO-1001' } } });

      // The first call's answer drips slowly from the ERP: the second one is answered first.
      erp.addFault({
        method: 'GET',
        route: '/purchase-orders/{purchase_order_id}',
        fault: { kind: 'drip', interval_ms: 5 },
      });
      stream.send(call('slow', 'erp.purchase_orders.get', { purchase_order_id: 'PO-1001' }));
      stream.send(call('fast', 'erp.vendors.get', { vendor_id: 'V-100' }));
      const first = toolAnswer(await stream.nextJson());
      const second = toolAnswer(await stream.nextJson());
      expect([first.id, second.id]).toEqual(['fast', 'slow']);
      expect(first.result).toMatchObject({ status: 'succeeded', result: { id: 'V-100' } });
      expect(second.result).toMatchObject({ status: 'succeeded', result: { id: 'PO-1001' } });

      stream.send(call('held', 'erp.purchase_orders.create', order('1500')));
      const held = toolAnswer(await stream.nextJson());
      expect(held).toMatchObject({ id: 'held', result: { status: 'pending_approval', code: null } });
      stream.send(call('status', 'get_execution_status', { execution_id: held.result.execution_id }));
      const status = toolAnswer(await stream.nextJson());
      expect(status).toMatchObject({
        id: 'status',
        result: { status: 'pending_approval', execution_id: held.result.execution_id },
      });
      stream.call.end();
      expect(await stream.ended).toMatchObject({ code: 0 });

      // Every execution the stream created carries its metadata; the trace reached the ERP.
      for (const executionId of [
        small.result.execution_id,
        first.result.execution_id,
        second.result.execution_id,
        held.result.execution_id,
      ]) {
        const record = await store.get(executionId ?? '');
        expect(record?.origin).toEqual({
          transport: 'grpc',
          server_id: 'erp',
          request_id: 'pcc-request-1',
          request_uuid: 'B4A7C5E2-7F3D-4E1A-9C2B-1D2E3F4A5B6C',
          trace_id: traceId,
          span_id: 'b7ad6b7169203331',
          tenant: connectFields.tenant_info,
          server_cloudos_version: '3.1 (24A100)',
        });
        expect(record?.trace_id).toBe(traceId);
      }
      const parents = erp.calls().map((received) => received.headers.traceparent ?? '');
      expect(parents).toHaveLength(3);
      for (const parent of parents) expect(parent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      expect(new Set([...parents.map((parent) => parent.split('-')[2]), 'b7ad6b7169203331']).size).toBe(4);
    },
  );

  it(verifies('grpc.connect-first', 'ends a stream without Connect with FAILED_PRECONDITION'), async () => {
    const stream = open();
    stream.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    expect(await stream.ended).toMatchObject({ code: 9, details: expect.stringMatching(/Connect/) });
  });

  it(verifies('grpc.server-id', 'ends a stream whose server_id names nothing with NOT_FOUND'), async () => {
    const stream = open();
    stream.connect({ ...connectFields, server_id: 'payroll' });
    expect(await stream.ended).toMatchObject({ code: 5 });
  });

  it(
    verifies('grpc.messages', 'answers a malformed request_body with a parse error and the next message normally'),
    async () => {
      const stream = await connected({ server_id: '*' });
      stream.sendRaw('{"jsonrpc":"2.0","id":"broken","method":"tools/call","params":{');
      expect(await stream.nextJson()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.any(String) },
      });
      stream.send(call('good', 'erp.vendors.get', { vendor_id: 'V-200' }));
      expect(toolAnswer(await stream.nextJson())).toMatchObject({ id: 'good', result: { status: 'succeeded' } });
      stream.call.end();
      expect(await stream.ended).toMatchObject({ code: 0 });
    },
  );

  it(
    verifies('grpc.identity', 'refuses a wrong token with UNAUTHENTICATED and runs each agent as itself'),
    async () => {
      const wrong = open('not-a-token');
      wrong.connect(connectFields);
      expect(await wrong.ended).toMatchObject({ code: 16 });
      // The support agent's token: the support agent's view (no purchase order creation).
      const support = open(demoTokens.support);
      support.connect({ server_id: '*' });
      expect(await support.next()).toMatchObject({ response: 'connected' });
      support.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const names = ((await support.nextJson()).result as { tools: { name: string }[] }).tools.map((tool) => tool.name);
      expect(names).toContain('erp.purchase_orders.get');
      expect(names).not.toContain('erp.purchase_orders.create');
      support.call.end();
      await support.ended;
    },
  );

  it(
    verifies(
      'grpc.dropped-stream',
      'completes a write whose stream is dropped mid-call: the ERP counts one call, the status tool tells the outcome',
    ),
    async () => {
      erp.addFault({ method: 'POST', route: '/purchase-orders', fault: { kind: 'drip', interval_ms: 10 } });
      const stream = await connected({ ...connectFields, request_id: 'pcc-request-dropped' });
      stream.send(call('write', 'erp.purchase_orders.create', order('50')));
      const reached = await eventually(
        async () => erp.calls().filter((received) => received.method === 'POST'),
        (calls) => calls.length > 0,
      );
      const executionId = reached[0]?.requestId ?? '';
      stream.call.cancel();
      expect(await stream.ended).toMatchObject({ code: 1 });

      const follow = await connected({ server_id: '*' });
      const outcome = await eventually(
        async () => {
          follow.send(call('status', 'get_execution_status', { execution_id: executionId }));
          return toolAnswer(await follow.nextJson()).result;
        },
        (result) => result.status !== 'approved',
      );
      expect(outcome).toMatchObject({ status: 'succeeded', execution_id: executionId, result: { vendor_id: 'V-100' } });
      expect(erp.callsFor(executionId)).toBe(1);
      expect((await store.get(executionId))?.origin?.request_id).toBe('pcc-request-dropped');
      follow.call.end();
      await follow.ended;
    },
  );
});
