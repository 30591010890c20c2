// The gRPC front in process, over a real gRPC connection (@grpc/grpc-js as the client), on the
// use-case bench: the stream's state machine, its bounds, the JSON-RPC faults, the system scope of
// server_id and the trace that reaches the system. The same gateway under `npm start` is
// test/e2e/grpc-gateway.test.ts.
//
// Long: one stream state machine with each of its bounds and faults tested on its own stream.
import type * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { loadSnapshot } from '../../shared/control-plane/snapshot.js';
import { type GrpcGateway, startGrpcGateway } from '../../shared/edge/grpc/gateway.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { type GrpcCaps, transportCaps } from '../../shared/limits/transport-caps.js';
import { ResultObject } from '../../shared/result.js';
import { checkHealth, type GatewayStream, openStream } from '../support/grpc-client.js';
import { verifies } from '../support/requirements.js';
import { procurementAgent, tools, type UseCaseBed, useCaseBed } from '../support/use-case-bed.js';

const token = 'bench-token';
const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
let gateway: GrpcGateway | undefined;
const clients: grpc.Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await gateway?.close();
  gateway = undefined;
});

const start = async (caps: Partial<GrpcCaps> = {}, bed?: UseCaseBed, requestGate?: RequestGate) => {
  const bench = bed ?? (await useCaseBed());
  gateway = await startGrpcGateway({
    ...(requestGate === undefined ? {} : { requestGate }),
    host: '127.0.0.1',
    port: 0,
    services: bench.deps,
    authenticate: async (presented): Promise<AgentIdentity | null> => {
      if (presented === 'while-the-issuer-is-down') throw new Error('connect ECONNREFUSED');
      return presented === token ? procurementAgent : null;
    },
    caps,
    log: bench.deps.log,
  });
  return { bed: bench, address: `127.0.0.1:${gateway.port}` };
};

const open = (address: string, metadata: Record<string, string> = { authorization: `Bearer ${token}` }) =>
  openStream(address, metadata, clients);

const connected = async (address: string, serverId = '*'): Promise<GatewayStream> => {
  const stream = open(address);
  stream.connect({
    server_id: serverId,
    request_id: 'req-1',
    trace_context: { trace_id: traceId, span_id: '00f067aa0ba902b7' },
  });
  expect(await stream.next()).toMatchObject({ response: 'connected' });
  return stream;
};

/** The bench's ERP and a second system, a CRM, both readable by procurement. */
const twoSystems = async () => {
  const outcome = await loadSnapshot({
    text: [
      'systems:',
      '  - key: erp',
      '    base_url: http://erp.test',
      '    operations:',
      '      - { id: orders.list, method: GET, path: /orders, description: Lists orders., input_schema: { type: object, properties: { vendor: { type: string } } } }',
      '      - { id: orders.create, method: POST, path: /orders, description: Creates an order., input_schema: { type: object, properties: { vendor: { type: string } } } }',
      '  - key: crm',
      '    base_url: http://crm.test',
      '    operations:',
      '      - { id: contacts.get, method: GET, path: /contacts, description: Reads contacts., input_schema: { type: object } }',
      'policies:',
      '  - policies.cedar',
      '',
    ].join('\n'),
    file: 'gateway.config.yaml',
    environment: {},
    files: {
      read: async () => 'permit (principal in Group::"procurement", action, resource);',
    },
  });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
  return outcome.snapshot;
};

const call = (id: string | number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('the gRPC gateway: stream life', () => {
  it(
    verifies('grpc.proto', 'answers the standard health check SERVING, and NOT_FOUND for a service it does not serve'),
    async () => {
      const { address } = await start();
      expect(await checkHealth(address)).toBe('SERVING');
      expect(await checkHealth(address, 'pcc.toolgateway.v1.PccToolGateway')).toBe('SERVING');
      await expect(checkHealth(address, 'other.Service')).rejects.toMatchObject({ code: 5 });
    },
  );

  it(
    verifies('grpc.connect-first', 'ends a stream whose first message is a request_body with FAILED_PRECONDITION'),
    async () => {
      const { address } = await start();
      const stream = open(address);
      stream.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(await stream.ended).toMatchObject({ code: 9 });
    },
  );

  it(
    verifies('grpc.connect-first', 'ends a stream that sends Connect twice, or half-closes before Connect'),
    async () => {
      const { address } = await start();
      const twice = await connected(address);
      twice.connect({ server_id: '*' });
      expect(await twice.ended).toMatchObject({ code: 9 });
      const silent = open(address);
      silent.call.end();
      expect(await silent.ended).toMatchObject({ code: 9 });
    },
  );

  it(
    verifies('grpc.identity', 'refuses a stream without a token, or with another scheme, with UNAUTHENTICATED'),
    async () => {
      const { address } = await start();
      const refused: Record<string, string>[] = [
        {},
        { authorization: `Basic ${token}` },
        { authorization: 'Bearer wrong' },
      ];
      for (const metadata of refused) {
        const stream = open(address, metadata);
        stream.connect({ server_id: '*' });
        expect(await stream.ended).toMatchObject({ code: 16 });
      }
    },
  );

  it(
    verifies('grpc.jwt-identity', 'ends a stream UNAVAILABLE, with a log line, when its token cannot be checked now'),
    async () => {
      const { address, bed } = await start();
      const stream = open(address, { authorization: 'Bearer while-the-issuer-is-down' });
      stream.connect({ server_id: '*' });
      expect(await stream.ended).toMatchObject({ code: 14 });
      expect(bed.warnings).toContain("an agent's token could not be checked now");
    },
  );

  it(
    verifies('grpc.server-id', 'serves one system by its key and refuses an unknown server_id with NOT_FOUND'),
    async () => {
      const { address, bed } = await start();
      const scoped = await connected(address, 'erp');
      scoped.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const listed = (await scoped.nextJson()).result as { tools: { name: string }[] };
      expect(listed.tools.map((tool) => tool.name)).toContain(tools.list);
      const unknown = open(address);
      unknown.connect({ server_id: 'crm' });
      expect(await unknown.ended).toMatchObject({ code: 5 });
      const empty = open(address);
      empty.connect({ server_id: '' });
      expect(await empty.ended).toMatchObject({ code: 5 });
      expect(bed.sent).toHaveLength(0);
    },
  );
});

describe('the gRPC gateway: JSON-RPC on the stream', () => {
  it(
    verifies('grpc.messages', 'answers protocol faults with JSON-RPC errors and keeps the stream usable'),
    async () => {
      const { address } = await start();
      const stream = await connected(address);
      stream.sendRaw('{"jsonrpc": "2.0", "id": 1, "method": ');
      expect(await stream.nextJson()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.any(String) },
      });
      stream.sendRaw('[]');
      expect(await stream.nextJson()).toMatchObject({ id: null, error: { code: -32600 } });
      stream.send({ jsonrpc: '2.0', id: 2, method: 'resources/list' });
      expect(await stream.nextJson()).toMatchObject({ id: 2, error: { code: -32601 } });
      stream.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } });
      expect(await stream.nextJson()).toMatchObject({ id: 3, error: { code: -32602 } });
      stream.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: tools.list, arguments: [] } });
      expect(await stream.nextJson()).toMatchObject({ id: 4, error: { code: -32602 } });
      stream.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      stream.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
      expect(await stream.nextJson()).toEqual({ jsonrpc: '2.0', id: 5, result: {} });
    },
  );

  it(
    verifies(
      ['grpc.server-id', 'grpc.messages'],
      'answers another system’s tool like one that does not exist, with structuredContent',
    ),
    async () => {
      const { address, bed } = await start({}, await useCaseBed({ snapshot: await twoSystems() }));
      const crm = await connected(address, 'crm');
      crm.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
      const listed = (await crm.nextJson()).result as { tools: { name: string }[] };
      expect(listed.tools.map((tool) => tool.name)).toEqual(['get_execution_status', 'crm.contacts.get']);
      crm.send(call('x', tools.list, { vendor: 'acme' }));
      const answer = (await crm.nextJson()) as { id: string; result: Record<string, unknown> };
      expect(answer.id).toBe('x');
      expect(ResultObject.parse(answer.result.structuredContent)).toMatchObject({
        status: 'denied',
        code: 'unknown_tool',
      });
      expect(answer.result.isError).toBe(true);
      expect(bed.sent).toHaveLength(0);
      const whole = await connected(address, '*');
      whole.send({ jsonrpc: '2.0', id: 'all', method: 'tools/list' });
      const all = (await whole.nextJson()).result as { tools: { name: string }[] };
      expect(all.tools.map((tool) => tool.name).sort()).toEqual(
        ['crm.contacts.get', 'erp.orders.create', 'erp.orders.list', 'get_execution_status'].sort(),
      );
    },
  );

  it(
    verifies('grpc.metadata-recorded', 'continues the Connect’s trace into each system call with a new span per call'),
    async () => {
      const { address, bed } = await start();
      const stream = await connected(address);
      stream.send(call(1, tools.list, { vendor: 'acme' }));
      stream.send(call(2, tools.list, { vendor: 'acme' }));
      const answers = [await stream.nextJson(), await stream.nextJson()];
      expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2]);
      const parents = bed.sent.map((request) => request.headers.traceparent ?? '');
      expect(parents).toHaveLength(2);
      for (const parent of parents) expect(parent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      const spans = parents.map((parent) => parent.split('-')[2]);
      expect(new Set([...spans, '00f067aa0ba902b7']).size).toBe(3);
    },
  );
});

describe('the gRPC gateway: bounds', () => {
  it(verifies('grpc.bounds', 'ends a stream past its message count with RESOURCE_EXHAUSTED'), async () => {
    const { address } = await start({ maxMessagesPerStream: 3 });
    const stream = await connected(address);
    stream.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    stream.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    stream.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(await stream.ended).toMatchObject({ code: 8 });
  });

  it(
    verifies('grpc.bounds', 'refuses an agent’s stream beyond its open streams, and takes one again once one ends'),
    async () => {
      const { address } = await start({ maxStreamsPerAgent: 1 });
      const first = await connected(address);
      const second = open(address);
      second.connect({ server_id: '*' });
      expect(await second.ended).toMatchObject({ code: 8 });
      first.call.end();
      expect(await first.ended).toMatchObject({ code: 0 });
      await connected(address);
    },
  );

  it(
    verifies('limits.caps-as-data', 'applies the open streams per agent of shared/limits/ when started with no others'),
    async () => {
      const { address } = await start();
      const cap = transportCaps.grpc.maxStreamsPerAgent;
      for (let opened = 0; opened < cap; opened += 1) await connected(address);
      const beyond = open(address);
      beyond.connect({ server_id: '*' });
      expect(await beyond.ended).toMatchObject({
        code: 8,
        details: `An agent may have at most ${cap} streams open at once.`,
      });
    },
  );

  it(verifies('grpc.bounds', 'refuses a message over the size limit'), async () => {
    const { address } = await start({ maxMessageBytes: 1024 });
    const stream = await connected(address);
    stream.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2048) } }));
    expect(await stream.ended).toMatchObject({ code: 8 });
  });

  it(verifies('grpc.bounds', 'ends an idle stream with DEADLINE_EXCEEDED'), async () => {
    const { address } = await start({ idleTimeoutMs: 200 });
    const stream = await connected(address);
    expect(await stream.ended).toMatchObject({ code: 4 });
  });

  it(verifies('grpc.bounds', 'answers the calls in flight when the client half-closes, then ends OK'), async () => {
    const bed = await useCaseBed();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const send = bed.deps.systems.send.bind(bed.deps.systems);
    const slowBed: UseCaseBed = {
      ...bed,
      deps: {
        ...bed.deps,
        systems: {
          send: async (request) => {
            await gate;
            return send(request);
          },
        },
      },
    };
    const { address } = await start({}, slowBed);
    const stream = await connected(address);
    stream.send(call('slow', tools.list, { vendor: 'acme' }));
    stream.call.end();
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    const answer = (await stream.nextJson()) as { id: string; result: { structuredContent: unknown } };
    expect(answer.id).toBe('slow');
    expect(ResultObject.parse(answer.result.structuredContent).status).toBe('succeeded');
    expect(await stream.ended).toMatchObject({ code: 0 });
  });

  it(
    verifies(
      ['grpc.bounds', 'limits.rate', 'limits.refusal-result'],
      'counts each request against the agent’s rate limit, as HTTP does',
    ),
    async () => {
      const bed = await useCaseBed();
      const { address } = await start({}, bed, new RequestGate(bed.clock));
      const stream = await connected(address);
      // The default burst is 100 and the bench's clock stands still: the 101st request is refused.
      for (let id = 1; id <= 100; id += 1) stream.send({ jsonrpc: '2.0', id, method: 'ping' });
      for (let id = 1; id <= 100; id += 1) expect(await stream.nextJson()).toMatchObject({ result: {} });
      stream.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
      expect(await stream.nextJson()).toMatchObject({ id: 'list', error: { code: -32000 } });
      stream.send(call('refused', tools.list, { vendor: 'acme' }));
      const answer = (await stream.nextJson()) as { result: { structuredContent: unknown; isError: boolean } };
      expect(ResultObject.parse(answer.result.structuredContent)).toMatchObject({
        status: 'denied',
        code: 'rate_limited',
        execution_id: null,
      });
      expect(answer.result.isError).toBe(true);
      expect(bed.sent).toHaveLength(0);
    },
  );
});
