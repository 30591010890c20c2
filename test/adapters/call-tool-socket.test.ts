// The /tool/call-tool WebSocket function end to end in process: API Gateway's $connect and
// $default events as it sends them, the demo organization on dynalite with its ERP on loopback,
// and the real management client posting frames to a loopback stand-in of the @connections API.
//
// Long: one connection per case, each with its own frame, claim and close to check.
import { Logger } from '@aws-lambda-powertools/logger';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannelSocketFunction } from '../../functions/call-tool-socket.js';
import { callerContext } from '../../functions/commons/caller-context.js';
import { maxSocketFrameBytes } from '../../functions/commons/socket-message.js';
import { lambdaContext } from '../../infra/local/http-front.js';
import { connectionClaimKey } from '../../shared/adapters/dynamodb/connection-claims.js';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { maxChannelParamsBytes } from '../../shared/edge/call-tool/serve.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { ResultObject } from '../../shared/result.js';
import { decodeFrame, type Frame } from '../../shared/wire/call-tool-frame.js';
import {
  type ChannelBed,
  type ManagementApi,
  procurement,
  startChannelBed,
  startManagementApi,
  support,
} from '../support/channel-aws.js';
import { verifies } from '../support/requirements.js';

let bed: ChannelBed;
let management: ManagementApi;
let socket: ReturnType<typeof createChannelSocketFunction>;
const logger = new Logger({ serviceName: 'call-tool-socket-test', logLevel: 'SILENT' });

beforeAll(async () => {
  bed = await startChannelBed();
  management = await startManagementApi();
  socket = createChannelSocketFunction({
    services: bed.services,
    logger,
    connections: management.connections,
    claims: bed.claims,
    gate: new RequestGate(bed.services.clock),
  });
}, 60_000);

afterAll(async () => {
  await management?.close();
  await bed?.close();
});

let connections = 0;
const newConnectionId = () => {
  connections += 1;
  return `Vx1cD${connections}AbIAMCJ5A=`;
};

const requestContext = (connectionId: string, eventType: 'CONNECT' | 'MESSAGE', agent: AgentIdentity | null) => ({
  routeKey: eventType === 'CONNECT' ? '$connect' : '$default',
  eventType,
  messageId: eventType === 'MESSAGE' ? 'Vx1cFe1FIAMCJ5A=' : undefined,
  extendedRequestId: 'Vx1cDFbXIAMFpbw=',
  requestTime: '01/Dec/2026:06:00:00 +0000',
  messageDirection: 'IN',
  stage: 'live',
  connectedAt: Date.now(),
  requestTimeEpoch: Date.now(),
  identity: { sourceIp: '192.0.2.10' },
  requestId: 'Vx1cDFbXIAMFpbw=',
  domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
  connectionId,
  apiId: 'abc123',
  // API Gateway adds the principal and the authorizer's latency to the context it returned.
  ...(agent === null
    ? {}
    : {
        authorizer: {
          ...callerContext({ kind: 'listed', agentId: agent.id }),
          principalId: agent.id,
          integrationLatency: 61,
        },
      }),
});

interface MessageOptions {
  /** The agent the authorizer put in the connection's context; null for none. */
  readonly agent?: AgentIdentity | null;
  /** Whether API Gateway marked the body as base64. */
  readonly base64?: boolean;
}

const message = (connectionId: string, body: string, { agent = procurement, base64 = false }: MessageOptions = {}) =>
  socket(
    { requestContext: requestContext(connectionId, 'MESSAGE', agent), body, isBase64Encoded: base64 },
    lambdaContext('call-tool-socket', 30_000),
  );

const requestsFor = (connectionId: string) =>
  management.requests.filter((request) => request.path === `/live/@connections/${encodeURIComponent(connectionId)}`);

/** The one frame posted to the connection, after which it was closed. */
const answered = (connectionId: string): Frame => {
  const requests = requestsFor(connectionId);
  expect(requests.map((request) => request.method)).toEqual(['POST', 'DELETE']);
  expect(requests.every((request) => request.signed)).toBe(true);
  return decodeFrame(new Uint8Array(requests[0]?.body ?? Buffer.alloc(0)));
};

const resultOf = (frame: Frame): ResultObject => {
  if (frame.kind !== 'result') throw new Error(`expected a result frame, got ${JSON.stringify(frame)}`);
  return ResultObject.parse(frame.result.structuredContent);
};

const recordOf = async (result: ResultObject) => {
  if (result.execution_id === null) throw new Error('the result names no execution');
  return bed.testStore.store.get(result.execution_id);
};

const order = (amount: string) =>
  JSON.stringify({
    name: 'erp.purchase_orders.create',
    arguments: { vendor_id: 'V-100', amount, currency: 'EUR', description: 'Toner' },
  });

describe('the /tool/call-tool WebSocket function', () => {
  it(verifies('aws.call-tool-socket', 'accepts a connection the authorizer let in, and posts nothing'), async () => {
    const id = newConnectionId();
    const connect = { requestContext: requestContext(id, 'CONNECT', procurement), isBase64Encoded: false };
    expect(await socket(connect, lambdaContext('call-tool-socket', 30_000))).toEqual({ statusCode: 200 });
    expect(requestsFor(id)).toEqual([]);
  });

  it(
    verifies('aws.call-tool-socket', 'runs the message as the agent, posts the result frame, then closes'),
    async () => {
      const id = newConnectionId();
      const before = bed.erp.calls().length;
      expect(await message(id, order('250'))).toEqual({ statusCode: 200 });
      const frame = answered(id);
      // The frame's bytes as posted: tag 0 then the CallToolResult JSON (valid UTF-8 throughout).
      expect(requestsFor(id)[0]?.body[0]).toBe(0);
      const result = resultOf(frame);
      expect(result).toMatchObject({ status: 'succeeded', code: null });
      expect(bed.erp.calls().length).toBe(before + 1);
      const record = await recordOf(result);
      expect(record).toMatchObject({ agent_id: procurement.id, status: 'succeeded' });
    },
  );

  it(
    verifies('aws.call-tool-socket', 'answers params that are not JSON with -32700 and wrong params with -32602'),
    async () => {
      const cases = [
        { body: '{"name": "erp.purchase_orders.create",', code: -32700 },
        { body: '{"arguments": {}}', code: -32602 },
        { body: '{"name": "erp.purchase_orders.create", "arguments": [1]}', code: -32602 },
      ];
      for (const { body, code } of cases) {
        const id = newConnectionId();
        await message(id, body);
        expect(answered(id), body).toMatchObject({ kind: 'error', error: { code } });
      }
    },
  );

  it(
    verifies(
      'aws.call-tool-socket',
      'answers -32600 for params beyond the cap, and -32700 for base64 bytes that are not UTF-8',
    ),
    async () => {
      const large = newConnectionId();
      await message(large, JSON.stringify({ name: 'x', arguments: { note: 'a'.repeat(maxChannelParamsBytes) } }));
      expect(answered(large)).toMatchObject({ kind: 'error', error: { code: -32600 } });
      const garbage = newConnectionId();
      await message(garbage, Buffer.from([0xff, 0xfe, 0x00, 0x7b]).toString('base64'), { base64: true });
      expect(answered(garbage)).toMatchObject({ kind: 'error', error: { code: -32700 } });
      // Base64 text that is JSON is read like a text message.
      const encoded = newConnectionId();
      await message(encoded, Buffer.from('{"arguments": {}}').toString('base64'), { base64: true });
      expect(answered(encoded)).toMatchObject({ kind: 'error', error: { code: -32602 } });
    },
  );

  it(verifies('aws.call-tool-socket', 'answers a held call with its pending_approval result'), async () => {
    const id = newConnectionId();
    const before = bed.erp.calls().length;
    await message(id, order('5000'));
    const result = resultOf(answered(id));
    expect(result).toMatchObject({ status: 'pending_approval', code: null });
    expect(bed.started.map((start) => start.execution_id)).toContain(result.execution_id);
    expect(bed.erp.calls().length).toBe(before);
  });

  it(
    verifies(
      'aws.call-tool-socket',
      "takes the agent from the authorizer's context only: another agent's execution id answers not_found",
    ),
    async () => {
      const first = newConnectionId();
      await message(first, order('5000'));
      const held = resultOf(answered(first)).execution_id;
      const other = newConnectionId();
      const status = JSON.stringify({
        name: 'get_execution_status',
        arguments: { execution_id: held },
        _meta: { agent: procurement.id },
      });
      await message(other, status, { agent: support });
      expect(resultOf(answered(other))).toMatchObject({ status: 'unknown', code: 'not_found' });
      const own = newConnectionId();
      await message(own, status);
      expect(resultOf(answered(own))).toMatchObject({ status: 'pending_approval', execution_id: held });
      // A connection without an agent in its context runs nothing.
      const anonymous = newConnectionId();
      await message(anonymous, order('250'), { agent: null });
      expect(answered(anonymous)).toMatchObject({ kind: 'error', error: { code: -32600 } });
    },
  );

  it(
    verifies('aws.call-tool-one-call', 'runs one call when a connection sends two messages at once, and none after'),
    async () => {
      const id = newConnectionId();
      const before = bed.erp.calls().length;
      await Promise.all([message(id, order('250')), message(id, order('260'))]);
      resultOf(answered(id));
      expect(bed.erp.calls().length).toBe(before + 1);
      await message(id, order('270'));
      expect(requestsFor(id)).toHaveLength(2);
      expect(bed.erp.calls().length).toBe(before + 1);
      // The claim is an item of its own: no index attribute, gone a day later.
      const claim = await bed.testStore.dynamodb.documents.send(
        new GetCommand({ TableName: 'executions', Key: connectionClaimKey(id, procurement.id) }),
      );
      expect(Object.keys(claim.Item ?? {}).sort()).toEqual(['agent_id', 'execution_id', 'retain_until']);
      expect(Number(claim.Item?.retain_until)).toBeGreaterThan(Date.now() / 1000 + 23 * 3600);
    },
  );

  it(
    verifies(
      'aws.call-tool-socket',
      "replaces an answer beyond API Gateway's 128 KB message limit by a -32603 frame naming the recorded execution",
    ),
    async () => {
      bed.erp.addFault({ route: '/shipments/{tracking_number}', fault: { kind: 'huge', bytes: 150_000 }, times: 1 });
      const id = newConnectionId();
      await message(
        id,
        JSON.stringify({ name: 'erp.shipments.track', arguments: { tracking_number: '1Z999AA10123456784' } }),
      );
      expect(requestsFor(id)[0]?.body.length).toBeLessThanOrEqual(maxSocketFrameBytes);
      const frame = answered(id);
      if (frame.kind !== 'error') throw new Error('expected an error frame');
      expect(frame.error).toMatchObject({ code: -32603, data: { execution_id: expect.any(String) } });
      const data = frame.error.data;
      const executionId =
        typeof data === 'object' && data !== null && 'execution_id' in data ? String(data.execution_id) : '';
      expect(await bed.testStore.store.get(executionId)).toMatchObject({ status: 'succeeded' });
    },
  );

  it(
    verifies('aws.call-tool-socket', 'records the call when the client left before its frame, and still closes'),
    async () => {
      const id = newConnectionId();
      management.gone.add(id);
      expect(await message(id, order('250'))).toEqual({ statusCode: 200 });
      expect(requestsFor(id).map((request) => request.method)).toEqual(['POST', 'DELETE']);
      const frame = decodeFrame(new Uint8Array(requestsFor(id)[0]?.body ?? Buffer.alloc(0)));
      const record = await recordOf(resultOf(frame));
      expect(record).toMatchObject({ status: 'succeeded' });
    },
  );
});
