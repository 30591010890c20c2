// The plain 2026-07-28 tools/call against the SDK's own serving of the same request: two endpoints
// over the same services (the demo organization, the demo ERP on loopback, the real store), one
// answering plain calls itself, the other sending every request through the SDK. Request by
// request the two answer alike (status, media type, the JSON-RPC message; ids, order numbers and
// times aside), and every request that is not plain is left to the SDK.
//
// Long: each kind of answer is compared, and the variants that must not be plain are listed.
import { PROTOCOL_VERSION_META_KEY, Server } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMcpEndpoint, type McpEndpoint } from '../../shared/edge/mcp/endpoint.js';
import { plainToolCallOf } from '../../shared/edge/mcp/plain-tool-call.js';
import { requestHeadOf } from '../../shared/edge/mcp/request-head.js';
import type { McpServices } from '../../shared/edge/mcp/server.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { AgentLimits } from '../../shared/limits/agent-limits.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { anAgent } from '../support/agents.js';
import { type ChannelBed, startChannelBed } from '../support/channel-aws.js';
import { verifies } from '../support/requirements.js';

const procurement = anAgent('procurement-agent', ['procurement']);
const revision = '2026-07-28';

let bed: ChannelBed;
const endpoints: McpEndpoint[] = [];

const endpointsOver = (services: McpServices, limits?: RequestGate[]) => {
  const [plainGate, sdkGate] = limits ?? [new RequestGate(services.clock), new RequestGate(services.clock)];
  const options = { allowedHostnames: null, allowedOrigins: [] };
  const plain = createMcpEndpoint(services, { ...options, requestGate: plainGate as RequestGate });
  const sdk = createMcpEndpoint(services, { ...options, requestGate: sdkGate as RequestGate, plainToolCalls: false });
  endpoints.push(plain, sdk);
  return { plain, sdk };
};

beforeAll(async () => {
  bed = await startChannelBed();
});

afterAll(async () => {
  for (const endpoint of endpoints) await endpoint.close();
  await bed?.close();
});

interface Sent {
  readonly headers: Record<string, string>;
  readonly body: Record<string, unknown>;
}

const envelope = (capabilities: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  [PROTOCOL_VERSION_META_KEY]: revision,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  ...extra,
});

/** A plain tools/call as a current client sends it. */
const call = (name: string, args: Record<string, unknown> | undefined, id: string | number = 1): Sent => ({
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': revision,
    'mcp-method': 'tools/call',
    'mcp-name': name,
  },
  body: {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, ...(args === undefined ? {} : { arguments: args }), _meta: envelope() },
  },
});

const withParams = (sent: Sent, params: Record<string, unknown>): Sent => ({
  ...sent,
  body: { ...sent.body, params: { ...(sent.body.params as object), ...params } },
});

const requestOf = (sent: Sent): Request =>
  new Request('http://127.0.0.1/mcp', { method: 'POST', headers: sent.headers, body: JSON.stringify(sent.body) });

const headOf = (sent: Sent) => requestHeadOf(requestOf(sent));

/** What varies between two runs of the same call: execution ids, the ERP's order numbers, times. */
const normalized = (text: string): string =>
  text
    .replaceAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replaceAll(/PO-\d+/g, 'PO-<n>')
    .replaceAll(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');

interface Answer {
  readonly status: number;
  readonly headers: [string, string][];
  readonly message: unknown;
  /** How many SDK servers were connected to serve it (the SDK's path: one; the plain path: none). */
  readonly sdkServers: number;
}

const answerOf = async (endpoint: McpEndpoint, sent: Sent): Promise<Answer> => {
  const connect = vi.spyOn(Server.prototype, 'connect');
  try {
    const response = await endpoint.handle(requestOf(sent), procurement, JSON.stringify(sent.body));
    return {
      status: response.status,
      headers: [...response.headers.entries()],
      message: JSON.parse(normalized(await response.text())),
      sdkServers: connect.mock.calls.length,
    };
  } finally {
    connect.mockRestore();
  }
};

/**
 * Sends the request to both endpoints (the SDK's first) and expects the same answer from each:
 * for a plain request, the reference's from an SDK server and the plain endpoint's without one.
 */
const bothAlike = async (pair: { plain: McpEndpoint; sdk: McpEndpoint }, sent: Sent): Promise<Answer> => {
  const reference = await answerOf(pair.sdk, sent);
  const answer = await answerOf(pair.plain, sent);
  expect({ ...answer, sdkServers: 0 }).toEqual({ ...reference, sdkServers: 0 });
  if (plainToolCallOf(headOf(sent), sent.body) === null) {
    expect(answer.sdkServers).toBe(reference.sdkServers);
  } else {
    expect([reference.sdkServers, answer.sdkServers]).toEqual([1, 0]);
  }
  return answer;
};

const structuredOf = (answer: Answer): Record<string, unknown> => {
  const message = answer.message as { result?: { structuredContent?: Record<string, unknown> } };
  return message.result?.structuredContent ?? {};
};

describe('a plain 2026-07-28 tools/call, answered without the SDK’s server', () => {
  it(
    verifies(
      'perf.plain-tool-call',
      'answers as the SDK does: a direct write, a read, a held call, refusals, the status tool',
    ),
    async () => {
      const pair = endpointsOver(bed.services);
      // Each request with the status and code its result object ends with.
      const direct = call('erp.purchase_orders.create', { vendor_id: 'V-100', amount: '250', currency: 'EUR' });
      const held = call('erp.purchase_orders.create', { vendor_id: 'V-100', amount: '1500', currency: 'EUR' }, 0);
      const cases: [Sent, string][] = [
        [direct, 'succeeded null'],
        [call('erp.shipments.track', { tracking_number: '1Z999AA10123456784' }, 'a-string-id'), 'succeeded null'],
        [held, 'pending_approval null'],
        [call('erp.purchase_orders.create', { vendor_id: 'V-100', currency: 'EUR' }), 'denied invalid_arguments'],
        [call('erp.no_such_tool', {}), 'denied unknown_tool'],
        [call('erp.refunds.create', { order_id: 'PO-1', amount: '10.00', reason: 'x' }), 'denied unknown_tool'],
        [call('erp.shipments.track', undefined), 'denied invalid_arguments'],
      ];
      for (const [sent, status] of cases) {
        expect(plainToolCallOf(headOf(sent), sent.body)).not.toBeNull();
        const answer = await bothAlike(pair, sent);
        expect(answer.status).toBe(200);
        expect(`${String(structuredOf(answer).status)} ${String(structuredOf(answer).code)}`).toBe(status);
      }
      // The status tool, for a call both endpoints can see; the held calls started their approval runs.
      const response = await pair.sdk.handle(requestOf(direct), procurement, JSON.stringify(direct.body));
      const { result } = (await response.json()) as { result: { structuredContent: { execution_id: string } } };
      const status = call('get_execution_status', { execution_id: result.structuredContent.execution_id });
      expect(plainToolCallOf(headOf(status), status.body)).not.toBeNull();
      expect(structuredOf(await bothAlike(pair, status)).status).toBe('succeeded');
      expect(bed.started.length).toBeGreaterThan(0);
    },
  );

  it(
    verifies('perf.plain-tool-call', 'a call refused by the agent’s limit is answered as the SDK does, and not run'),
    async () => {
      // A gate whose agent may make no call at all: every request is refused before it runs.
      const refusing = () => {
        const gate = new RequestGate(bed.services.clock);
        const none: AgentLimits = {
          concurrentRequests: 0,
          requestsPerSecond: 0,
          burst: 0,
          pendingCalls: 0,
          requestBytesPerSecond: 0,
          requestBytesPerDay: 0,
        };
        return new Proxy(gate, {
          get: (target, key, receiver) =>
            key === 'admit' ? (agentId: string) => target.admit(agentId, none) : Reflect.get(target, key, receiver),
        });
      };
      const pair = endpointsOver(bed.services, [refusing(), refusing()]);
      const before = bed.erp.calls().length;
      const answer = await bothAlike(
        pair,
        call('erp.purchase_orders.create', { vendor_id: 'V-100', amount: '250', currency: 'EUR' }),
      );
      expect(structuredOf(answer).status).toBe('denied');
      expect(bed.erp.calls().length).toBe(before);
    },
  );

  it(
    verifies(
      'perf.plain-tool-call',
      'a fault is the SDK’s internal error, in the gateway’s words, with nothing of the store’s',
    ),
    async () => {
      const failing: ExecutionStore = new Proxy(bed.services.store, {
        get: (target, key, receiver) =>
          key === 'create'
            ? async () => {
                throw new Error('store refused: secret-token-123');
              }
            : Reflect.get(target, key, receiver),
      });
      const pair = endpointsOver({ ...bed.services, store: failing });
      const answer = await bothAlike(
        pair,
        call('erp.purchase_orders.create', { vendor_id: 'V-100', amount: '250', currency: 'EUR' }, 7),
      );
      expect(answer.message).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32603 } });
      expect(JSON.stringify(answer.message)).not.toContain('secret-token-123');
    },
  );
});

describe('every other request is left to the SDK', () => {
  const base = call('erp.shipments.track', { tracking_number: '1Z999AA10123456784' });
  const notPlain: [string, Sent][] = [
    ['task-augmented', withParams(base, { task: { ttl: 60_000 } })],
    ['a requestState', withParams(base, { requestState: 'abc' })],
    ['inputResponses', withParams(base, { inputResponses: {} })],
    ['URL elicitation declared', withParams(base, { _meta: envelope({ elicitation: { url: {} } }) })],
    [
      'the tasks extension declared',
      withParams(base, { _meta: envelope({ extensions: { 'io.modelcontextprotocol/tasks': {} } }) }),
    ],
    ['an envelope key besides the plain ones', withParams(base, { _meta: envelope({}, { traceparent: '00-x' }) })],
    [
      'a 2025 revision claimed',
      withParams(base, { _meta: { ...envelope(), [PROTOCOL_VERSION_META_KEY]: '2025-11-25' } }),
    ],
    ['an invalid envelope', withParams(base, { _meta: { [PROTOCOL_VERSION_META_KEY]: revision } })],
    ['Mcp-Name naming another tool', { ...base, headers: { ...base.headers, 'mcp-name': 'erp.vendors.get' } }],
    ['no Mcp-Method', { ...base, headers: { ...base.headers, 'mcp-method': '' } }],
    ['an encoded name', { ...base, headers: { ...base.headers, 'mcp-name': '=?base64?ZXJw?=' } }],
    ['arguments that are not an object', withParams(base, { arguments: [1] })],
    ['a null id', { ...base, body: { ...base.body, id: null } }],
    ['another method', { ...base, body: { ...base.body, method: 'tools/list' } }],
  ];
  it(
    verifies('perf.plain-tool-call', 'task, handover, capability, envelope and header variants all go to the SDK'),
    async () => {
      const pair = endpointsOver(bed.services);
      for (const [what, sent] of notPlain) {
        expect(plainToolCallOf(headOf(sent), sent.body), what).toBeNull();
      }
      // Through the SDK, a mismatched header is refused as ever (HTTP 400, the header mismatch code).
      const mismatched = notPlain[8]?.[1] as Sent;
      const answer = await bothAlike(pair, mismatched);
      expect(answer.status).toBe(400);
    },
  );

  it(
    verifies(
      'perf.plain-tool-call',
      'an envelope read before keeps the SDK’s verdict, and the headers are checked on every call',
    ),
    () => {
      // The classifier's verdict is remembered per envelope text (docs/adr/0093-the-per-call-levers.md).
      const invalid = notPlain[7]?.[1] as Sent;
      for (let round = 0; round < 3; round += 1) expect(plainToolCallOf(headOf(invalid), invalid.body)).toBeNull();
      for (let round = 0; round < 3; round += 1) expect(plainToolCallOf(headOf(base), base.body)).not.toBeNull();
      // The same envelope, once accepted, does not carry a call whose headers disagree with it.
      const mismatched = notPlain[8]?.[1] as Sent;
      expect(plainToolCallOf(headOf(mismatched), mismatched.body)).toBeNull();
      const other = { ...base, body: { ...base.body, id: 'another' } };
      expect(plainToolCallOf(headOf(other), other.body)).not.toBeNull();
    },
  );

  it(
    verifies(
      'perf.plain-tool-call',
      'a closed endpoint runs no plain call: the SDK’s entry refuses it, and the ERP hears nothing',
    ),
    async () => {
      const { plain } = endpointsOver(bed.services);
      await plain.close();
      const before = bed.erp.calls().length;
      const sent = call('erp.purchase_orders.create', { vendor_id: 'V-100', amount: '250', currency: 'EUR' });
      await expect(plain.handle(requestOf(sent), procurement, JSON.stringify(sent.body))).rejects.toThrow(/closed/);
      expect(bed.erp.calls().length).toBe(before);
    },
  );

  it(
    verifies(
      'perf.plain-tool-call',
      'whatever a request is made of, one the plain path takes is answered as the SDK answers it',
    ),
    async () => {
      const pair = endpointsOver(bed.services);
      const headerValue = fc.constantFrom(
        revision,
        '2025-11-25',
        'tools/call',
        'tools/list',
        'erp.shipments.track',
        '',
      );
      // Each part left as a current client sends it three times in four, so that a good share of the
      // runs (about one in thirteen, and the first example always) is taken by the plain path.
      const changed = <T>(values: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
        fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: values, weight: 1 });
      const mutation = fc.record({
        protocolHeader: changed(headerValue),
        methodHeader: changed(headerValue),
        nameHeader: changed(headerValue),
        id: changed(fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null))),
        extraParam: changed(fc.constantFrom('task', 'requestState', 'cursor')),
        metaVersion: changed(fc.constantFrom(revision, '2025-11-25', 1)),
        capabilities: changed(fc.constantFrom({}, { roots: {} }, { elicitation: { url: {} } }, null)),
        clientInfo: changed(fc.constantFrom({ name: 'agent', version: '1.0' }, { name: 1 }, 'x')),
        logLevel: changed(fc.constantFrom('debug', 'error', 'loud', 3)),
      });
      let plainTaken = 0;
      await fc.assert(
        fc.asyncProperty(mutation, async (change) => {
          const headers = { ...base.headers };
          if (change.protocolHeader !== undefined) headers['mcp-protocol-version'] = change.protocolHeader;
          if (change.methodHeader !== undefined) headers['mcp-method'] = change.methodHeader;
          if (change.nameHeader !== undefined) headers['mcp-name'] = change.nameHeader;
          const params = { ...(base.body.params as Record<string, unknown>) };
          if (change.extraParam !== undefined) params[change.extraParam] = {};
          const meta: Record<string, unknown> = { ...envelope() };
          if (change.metaVersion !== undefined) meta[PROTOCOL_VERSION_META_KEY] = change.metaVersion;
          if (change.capabilities !== undefined)
            meta['io.modelcontextprotocol/clientCapabilities'] = change.capabilities;
          params._meta = meta;
          const body = { ...base.body, params, ...(change.id === undefined ? {} : { id: change.id }) };
          const sent = { headers, body };
          if (plainToolCallOf(headOf(sent), body) === null) return;
          plainTaken += 1;
          await bothAlike(pair, sent);
        }),
        {
          numRuns: 200,
          examples: [
            [
              {
                protocolHeader: undefined,
                methodHeader: undefined,
                nameHeader: undefined,
                id: undefined,
                extraParam: undefined,
                metaVersion: undefined,
                capabilities: undefined,
                clientInfo: undefined,
                logLevel: undefined,
              },
            ],
          ],
        },
      );
      expect(plainTaken).toBeGreaterThan(1);
    },
  );
});
