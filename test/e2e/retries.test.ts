// Safe retries end to end, under `npm start`'s entry point as a real process: an agent sends the
// same tools/call again (its connection dropped, its client retried) over MCP (the official client),
// gRPC, and /tool/call-tool (WebSocket and POST), and the demo ERP's own log of the requests it
// received proves each write was sent once. A small forwarder in front of the ERP can hold its next
// answer, so a test drops the agent's connection after the request was sent and before the answer.
//
// Long: one runtime for the whole file (CI time), and the same journeys over four transports.
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type * as grpc from '@grpc/grpc-js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import * as z from 'zod';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { type Listening, listen } from '../../infra/local/net.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { ResultObject } from '../../shared/result.js';
import { decodeFrame, type Frame } from '../../shared/wire/call-tool-frame.js';
import {
  type ApprovalOrg,
  approvalOrg,
  approvers,
  eventually,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/approval-org.js';
import { type ConsoleSession, signedIn } from '../support/console.js';
import { checkHealth, type GatewayStream, openStream } from '../support/grpc-client.js';
import { quietLog } from '../support/logs.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

/** Where a tools/call's params carry the agent's idempotency key. */
const keyField = 'approval-gateway/idempotency-key';
const keyed = (key: string): Record<string, unknown> => ({ [keyField]: key });

/**
 * A loopback forwarder in front of the ERP. `holdNext()` makes it keep the ERP's answer to the next
 * POST (the ERP has received and applied it by then) until the test releases it.
 */
interface AnswerGate extends Listening<Server> {
  readonly url: string;
  holdNext(): { readonly arrived: Promise<void>; release(): void };
}

const startAnswerGate = async (target: () => string): Promise<AnswerGate> => {
  let armed: { arrived(): void; released: Promise<void> } | null = null;
  const server = createServer((incoming, outgoing) => {
    const hold = incoming.method === 'POST' ? armed : null;
    if (hold !== null) armed = null;
    const upstream = request(
      new URL(incoming.url ?? '/', target()),
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        const pass = () => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        };
        if (hold === null) return pass();
        hold.arrived();
        void hold.released.then(pass);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    ...listening,
    url: `http://127.0.0.1:${listening.port}`,
    holdNext: () => {
      const arrival = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      armed = { arrived: () => arrival.resolve(), released: release.promise };
      return { arrived: arrival.promise, release: () => release.resolve() };
    },
  };
};

let erp: DemoErp;
let gate: AnswerGate;
let org: ApprovalOrg;
let webhooks: WebhookReceiver;
let runtime: RuntimeProcess;
let store: DynamoDbExecutionStore;
/** The official MCP client on each revision: 2025-11-25 (what it negotiates by default) and 2026-07-28. */
let mcp: Client;
let mcpStateless: Client;
let finance: ConsoleSession;
const grpcClients: grpc.Client[] = [];

/** The demo organization with webhooks to a local receiver, and limits no test here reaches. */
const writeConfig = async () => {
  const file = await org.configWith({ webhookUrl: webhooks.url });
  const text = await readFile(file, 'utf8');
  await writeFile(
    file,
    text.replace('settings:\n', 'settings:\n  limits:\n    requests_per_second: 1000\n    burst: 1000\n'),
  );
  return file;
};

beforeAll(async () => {
  erp = await startDemoErp({ port: 0 });
  gate = await startAnswerGate(() => erp.url);
  org = await approvalOrg();
  webhooks = await startWebhookReceiver();
  runtime = await startRuntimeProcess(['--memory', '--no-demo-erp', '--config', await writeConfig()], {
    DEMO_ERP_URL: gate.url,
  });
  store = new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );
  mcp = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
  mcpStateless = new Client(
    { name: 'retries-e2e', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await mcpStateless.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${demoTokens.procurement}` } },
    }),
  );
  expect([mcp.getNegotiatedProtocolVersion(), mcpStateless.getNegotiatedProtocolVersion()]).toEqual([
    '2025-11-25',
    '2026-07-28',
  ]);
  finance = await signedIn(runtime.baseUrl, approvers.finance.id, approvers.finance.password);
}, 180_000);

afterAll(async () => {
  await mcp?.close();
  await mcpStateless?.close();
  for (const client of grpcClients.splice(0)) client.close();
  await runtime?.stop();
  await gate?.close();
  await erp?.close();
  await webhooks?.close();
  await org?.remove();
});

beforeEach(() => erp.reset());

type Args = Record<string, unknown>;
type Meta = Record<string, unknown> | undefined;

const paramsOf = (name: string, args: Args, meta: Meta) => ({
  name,
  arguments: args,
  ...(meta === undefined ? {} : { _meta: meta }),
});

const resultOfFrame = (frame: Frame): ResultObject => {
  if (frame.kind !== 'result') throw new Error(`expected a result frame, got ${JSON.stringify(frame)}`);
  return ResultObject.parse(frame.result.structuredContent);
};

/** A JSON-RPC answer to tools/call, as the gRPC stream carries it. */
const ToolCallAnswer = z.object({ result: z.object({ structuredContent: ResultObject }) });

/** A gRPC stream, connected and past the Connect handshake. */
const grpcStream = async (): Promise<GatewayStream> => {
  const stream = openStream(runtime.grpcAddress, { authorization: `Bearer ${demoTokens.procurement}` }, grpcClients);
  stream.connect({ server_id: 'erp' });
  expect(await stream.next()).toEqual({ response: 'connected', connected: {} });
  return stream;
};

const overGrpc = async (name: string, args: Args, meta: Meta): Promise<ResultObject> => {
  const stream = await grpcStream();
  stream.send({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: paramsOf(name, args, meta) });
  const answer = ToolCallAnswer.parse(await stream.nextJson());
  stream.call.end();
  return answer.result.structuredContent;
};

/** The tool channel's WebSocket address, as the start banner prints it. */
const channelWsUrl = () => {
  const printed = /Tool channel\s+(\S+)/.exec(runtime.output())?.[1];
  if (printed === undefined) throw new Error('the banner names no tool channel');
  return printed;
};

const openChannel = () =>
  new WebSocket(channelWsUrl(), { headers: { authorization: `Bearer ${demoTokens.procurement}` } });

const overWebSocket = (name: string, args: Args, meta: Meta): Promise<ResultObject> =>
  new Promise((resolve, reject) => {
    const ws = openChannel();
    ws.on('open', () => ws.send(JSON.stringify(paramsOf(name, args, meta))));
    ws.on('message', (data) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(String(data));
      try {
        resolve(resultOfFrame(decodeFrame(new Uint8Array(bytes))));
      } catch (error) {
        reject(error);
      }
    });
    ws.on('error', reject);
    ws.on('close', (code) => reject(new Error(`the channel closed ${code} without an answer`)));
  });

const overPost = async (name: string, args: Args, meta: Meta): Promise<ResultObject> => {
  const response = await fetch(`${runtime.baseUrl}/tool/call-tool`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${demoTokens.procurement}` },
    body: JSON.stringify(paramsOf(name, args, meta)),
  });
  expect(response.status).toBe(200);
  return resultOfFrame(decodeFrame(new Uint8Array(await response.arrayBuffer())));
};

const overMcp = async (name: string, args: Args, meta: Meta): Promise<ResultObject> =>
  ResultObject.parse((await mcp.callTool(paramsOf(name, args, meta))).structuredContent);

const overMcpStateless = async (name: string, args: Args, meta: Meta): Promise<ResultObject> =>
  ResultObject.parse((await mcpStateless.callTool(paramsOf(name, args, meta))).structuredContent);

const transports = [
  { name: 'MCP 2025-11-25', call: overMcp },
  { name: 'MCP 2026-07-28', call: overMcpStateless },
  { name: 'gRPC', call: overGrpc },
  { name: 'WebSocket', call: overWebSocket },
  { name: 'HTTP POST', call: overPost },
] as const;

/** Each transport with the next one in the list, where its retry is sent. */
const transportPairs = transports.map((first, index) => ({
  name: first.name,
  /** A printable character no other transport's test uses as a whole key (keys outlive a test). */
  mark: String.fromCharCode(0x7e - index),
  call: first.call,
  other: transports[(index + 1) % transports.length] ?? first,
}));

const create = 'erp.purchase_orders.create';
/** An order the demo policy runs at once (below 1000), told apart from others by its description. */
const smallOrder = (description = randomUUID()) => ({
  vendor_id: 'V-100',
  amount: '120',
  currency: 'EUR',
  description,
});
/** An order the demo policy holds for finance (1000 and above). */
const largeOrder = (description = randomUUID()) => ({ ...smallOrder(description), amount: '1500' });

/** The purchase orders the ERP received (its own log), since the test began. */
const ordersSent = () => erp.calls().filter((call) => call.method === 'POST' && call.route === '/purchase-orders');

/** The agent's records of one order, found by its description. */
const recordsOf = async (description: string) =>
  (await store.listByAgent('procurement-agent', { limit: 1000 })).items.filter((item) =>
    (item.arguments_json ?? '').includes(description),
  );

/** The approval notices of one order, found by its description in their summary of the arguments. */
const noticesOf = (description: string) =>
  webhooks.received.filter((body) => JSON.stringify(body).includes(description));

const outcomeOf = (executionId: string) =>
  eventually(
    () => store.get(executionId),
    (record) => record?.status !== 'pending_approval' && record?.status !== 'approved',
  );

const approve = async (executionId: string) => {
  const form = await finance.decisionForm(executionId);
  expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
  expect((await outcomeOf(executionId))?.status).toBe('succeeded');
};

describe.each(transportPairs)('a retried write with a key over $name', ({ name, mark, call, other }) => {
  it(
    verifies(
      ['retries.every-transport', 'retries.same-key-same-call'],
      `sends once and answers the first execution and result (${name})`,
    ),
    async () => {
      const key = randomUUID();
      const order = smallOrder();
      const first = await call(create, order, keyed(key));
      expect(first).toMatchObject({ status: 'succeeded', code: null, result: { id: 'PO-1001' } });
      expect(await call(create, order, keyed(key))).toEqual(first);
      expect(await other.call(create, order, keyed(key))).toEqual(first);
      expect(ordersSent()).toHaveLength(1);
      expect(ordersSent()[0]?.requestId).toBe(first.execution_id);
      expect(await recordsOf(order.description)).toHaveLength(1);
    },
  );

  it(
    verifies(
      ['retries.every-transport', 'retries.key-reused'],
      `refuses another body under the same key and sends nothing (${name})`,
    ),
    async () => {
      const key = randomUUID();
      const first = await call(create, smallOrder(), keyed(key));
      expect(first.status).toBe('succeeded');
      const changed = smallOrder();
      const reused = await call(create, { ...changed, amount: '130' }, keyed(key));
      expect(reused).toMatchObject({ status: 'denied', code: 'idempotency_key_reused', result: null });
      expect(reused.execution_id).not.toBe(first.execution_id);
      // Another tool under the same key is refused the same way.
      const lookup = await other.call('erp.purchase_orders.get', { purchase_order_id: 'PO-1001' }, keyed(key));
      expect(lookup).toMatchObject({ status: 'denied', code: 'idempotency_key_reused' });
      expect(ordersSent()).toHaveLength(1);
      expect(erp.calls()).toHaveLength(1);
    },
  );

  it(
    verifies(
      ['retries.every-transport', 'retries.key-format'],
      `refuses a malformed key as invalid_arguments, naming the key (${name})`,
    ),
    async () => {
      for (const bad of ['', 'x'.repeat(256), 'ключ', 'line\nbreak', 42]) {
        const refused = await call(create, smallOrder(), { [keyField]: bad });
        expect(refused, JSON.stringify(bad)).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
        expect(JSON.stringify(refused), JSON.stringify(bad)).toContain('idempotency-key');
      }
      // The bounds themselves are keys: one printable character, and 255 of them.
      expect((await call(create, smallOrder(), keyed(mark))).status).toBe('succeeded');
      expect((await call(create, smallOrder(), keyed(`${' '.repeat(254)}${mark}`))).status).toBe('succeeded');
      expect(ordersSent()).toHaveLength(2);
    },
  );

  it(
    verifies(
      ['retries.every-transport', 'retries.held-once'],
      `holds a retried held call once, and runs it once when approved (${name})`,
    ),
    async () => {
      const key = randomUUID();
      const order = largeOrder();
      const held = await call(create, order, keyed(key));
      expect(held.status).toBe('pending_approval');
      const executionId = held.execution_id ?? '';
      expect(await call(create, order, keyed(key))).toEqual(held);
      expect(await other.call(create, order, keyed(key))).toEqual(held);
      expect(await recordsOf(order.description)).toHaveLength(1);
      await webhooks.waitFor((body) => body.execution_id === executionId);
      await approve(executionId);
      const after = await other.call(create, order, keyed(key));
      expect(after).toMatchObject({ status: 'succeeded', execution_id: executionId, result: { id: 'PO-1001' } });
      expect(ordersSent()).toHaveLength(1);
      expect(await recordsOf(order.description)).toHaveLength(1);
      expect(noticesOf(order.description)).toHaveLength(1);
    },
  );

  it(
    verifies(
      ['retries.every-transport', 'held.join-pending'],
      `joins a held call asked for again without a key (${name})`,
    ),
    async () => {
      const order = largeOrder();
      const held = await call(create, order, undefined);
      expect(held.status).toBe('pending_approval');
      const executionId = held.execution_id ?? '';
      expect(await call(create, order, undefined)).toEqual(held);
      expect(await other.call(create, order, undefined)).toEqual(held);
      expect(await recordsOf(order.description)).toHaveLength(1);
      await webhooks.waitFor((body) => body.execution_id === executionId);
      await approve(executionId);
      expect(ordersSent()).toHaveLength(1);
      expect(ordersSent()[0]?.requestId).toBe(executionId);
      expect(noticesOf(order.description)).toHaveLength(1);
    },
  );
});

/**
 * One more round trip to the gateway, over a connection of its own: by its answer the gateway has
 * read what reached it before (a request, a closed connection).
 */
const gatewayRoundTrip = async () => {
  expect((await fetch(`${runtime.baseUrl}/.well-known/oauth-protected-resource`)).status).toBe(200);
};

describe('retries across transports', () => {
  it(
    verifies(
      ['retries.every-transport', 'retries.concurrent-wait'],
      'twenty concurrent duplicates with one key send once and answer one execution',
    ),
    async () => {
      const key = randomUUID();
      const order = smallOrder();
      // The ERP's answer to the first is held, so the others arrive while it is still running.
      const held = gate.holdNext();
      let answered = 0;
      const all = Promise.all(
        Array.from({ length: 20 }, async (_, index) => {
          const answer = await (transports[index % transports.length] ?? transports[0]).call(create, order, keyed(key));
          answered += 1;
          return answer;
        }),
      );
      await held.arrived;
      await gatewayRoundTrip();
      expect(answered).toBe(0);
      held.release();
      const answers = await all;
      const first = answers[0];
      expect(first).toMatchObject({ status: 'succeeded', result: { id: 'PO-1001' } });
      for (const answer of answers) expect(answer).toEqual(first);
      expect(ordersSent()).toHaveLength(1);
      expect(await recordsOf(order.description)).toHaveLength(1);
    },
  );

  it(
    verifies(
      ['retries.every-transport', 'retries.same-key-same-call'],
      "a key is the agent's own: another agent's equal key is another call",
    ),
    async () => {
      const key = randomUUID();
      const track = { tracking_number: `1Z${randomUUID().slice(0, 8)}` };
      const support = await connectAgent(runtime.mcpUrl, demoTokens.support);
      try {
        const mine = await overGrpc('erp.shipments.track', track, keyed(key));
        const theirs = ResultObject.parse(
          (await support.callTool(paramsOf('erp.shipments.track', track, keyed(key)))).structuredContent,
        );
        expect([mine.status, theirs.status]).toEqual(['succeeded', 'succeeded']);
        expect(theirs.execution_id).not.toBe(mine.execution_id);
        // Nor is another tool under my key refused for them: the key was never theirs.
        const other = randomUUID();
        expect((await overPost('erp.shipments.track', track, keyed(other))).status).toBe('succeeded');
        const lookup = await support.callTool(
          paramsOf('erp.purchase_orders.get', { purchase_order_id: 'PO-1' }, keyed(other)),
        );
        expect(ResultObject.parse(lookup.structuredContent).code).not.toBe('idempotency_key_reused');
      } finally {
        await support.close();
      }
      expect(erp.calls().filter((call) => call.route === '/shipments/{tracking_number}')).toHaveLength(3);
    },
  );

  it(
    verifies(
      ['retries.every-transport', 'held.join-pending'],
      'a direct write retried without a key runs again, as before',
    ),
    async () => {
      const order = smallOrder();
      const first = await overMcp(create, order, undefined);
      const again = await overPost(create, order, undefined);
      expect([first.status, again.status]).toEqual(['succeeded', 'succeeded']);
      expect(again.execution_id).not.toBe(first.execution_id);
      expect(ordersSent()).toHaveLength(2);
    },
  );
});

/** Waits until the ERP has received the call, drops the agent's connection, then lets the ERP answer. */
const dropMidCall = async (send: () => void, drop: () => Promise<void>) => {
  const held = gate.holdNext();
  send();
  await held.arrived;
  await drop();
  held.release();
  const [sent] = ordersSent();
  expect(ordersSent()).toHaveLength(1);
  return sent?.requestId ?? '';
};

/** After a drop: the call completed and was recorded, and the same call with its key answers it everywhere. */
const findsItsCall = async (executionId: string, order: Args, key: string) => {
  const record = await eventually(
    () => store.get(executionId),
    (found) => found?.status === 'succeeded',
  );
  expect(record).toMatchObject({ status: 'succeeded', tool: create, agent_id: 'procurement-agent' });
  for (const { name, call } of transports) {
    const answer = await call(create, order, keyed(key));
    expect(answer, name).toMatchObject({ status: 'succeeded', execution_id: executionId, result: { id: 'PO-1001' } });
  }
  expect(ordersSent()).toHaveLength(1);
};

describe('a caller whose connection dropped mid-call', () => {
  it(
    verifies(
      ['retries.dropped-connection', 'retries.same-key-same-call'],
      'a gRPC stream cancelled after sending: the call completes and is found',
    ),
    async () => {
      const key = randomUUID();
      const order = smallOrder();
      const stream = await grpcStream();
      const executionId = await dropMidCall(
        () =>
          stream.send({
            jsonrpc: '2.0',
            id: 'call',
            method: 'tools/call',
            params: paramsOf(create, order, keyed(key)),
          }),
        async () => {
          stream.call.cancel();
          expect((await stream.ended).details).toMatch(/cancel/i);
          // One more round trip to the gateway, so it has read the cancellation before the ERP answers.
          expect(await checkHealth(runtime.grpcAddress)).toBe('SERVING');
        },
      );
      await findsItsCall(executionId, order, key);
    },
  );

  it(
    verifies(
      ['retries.dropped-connection', 'retries.same-key-same-call'],
      'a WebSocket cut after sending: the call completes and is found',
    ),
    async () => {
      const key = randomUUID();
      const order = smallOrder();
      const ws = openChannel();
      const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
      ws.on('error', () => undefined);
      await new Promise<void>((resolve) => ws.on('open', () => resolve()));
      let answered = false;
      ws.on('message', () => {
        answered = true;
      });
      const executionId = await dropMidCall(
        () => ws.send(JSON.stringify(paramsOf(create, order, keyed(key)))),
        async () => {
          ws.terminate();
          await closed;
          await gatewayRoundTrip();
        },
      );
      expect(answered).toBe(false);
      await findsItsCall(executionId, order, key);
    },
  );
});
