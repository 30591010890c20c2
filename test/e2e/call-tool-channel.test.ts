// /tool/call-tool under `npm start`, over a real WebSocket (the ws client) and a real HTTP POST:
// one params message in, one frame out, every documented answer and close, the attacks a caller
// could make, and the executions read back from the store. The process is still serving at the end.
//
// Long: two transports, each through the same list of answers (success, held, denied, unknown,
// refused params, size, silence, identity), side by side so they can be compared.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { maxChannelParamsBytes } from '../../shared/edge/call-tool/serve.js';
import { ResultObject } from '../../shared/result.js';
import { decodeFrame, type Frame } from '../../shared/wire/call-tool-frame.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

let erp: DemoErp;
let runtime: RuntimeProcess;
let store: DynamoDbExecutionStore;
/** The wait for params, short here so a silent client is answered quickly. */
const waitMs = 400;

beforeAll(async () => {
  erp = await startDemoErp({ port: 0 });
  runtime = await startRuntimeProcess(['--memory', '--no-demo-erp'], {
    DEMO_ERP_URL: erp.url,
    GATEWAY_CHANNEL_PARAMS_WAIT_MS: String(waitMs),
    POWERTOOLS_LOG_LEVEL: 'INFO',
  });
  store = new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
  );
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
  await erp?.close();
});

beforeEach(() => erp.reset());

const channelUrl = () => `${runtime.baseUrl}/tool/call-tool`;
/** The WebSocket address as the start banner prints it. */
const wsUrl = () => {
  const printed = /Tool channel\s+(\S+)/.exec(runtime.output())?.[1];
  if (printed === undefined) throw new Error('the banner names no tool channel');
  return printed;
};

interface WsOutcome {
  /** Binary messages received, in order. */
  readonly frames: Uint8Array[];
  /** Text messages received (the channel sends none). */
  readonly texts: string[];
  readonly code: number;
  readonly reason: string;
}

interface Refused {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** Opens the channel, sends `messages` at once (none: stays silent), and collects what comes until the close. */
const overWebSocket = (
  messages: readonly (string | Uint8Array)[],
  options: { readonly token?: string | null; readonly headers?: Record<string, string> } = {},
): Promise<WsOutcome | Refused> =>
  new Promise((resolve, reject) => {
    const token = options.token === undefined ? demoTokens.procurement : options.token;
    const ws = new WebSocket(wsUrl(), {
      headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers },
      maxPayload: 1024 * 1024,
    });
    const frames: Uint8Array[] = [];
    const texts: string[] = [];
    ws.on('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    ws.on('open', () => {
      for (const message of messages) ws.send(message, { binary: typeof message !== 'string' });
    });
    ws.on('message', (data, isBinary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      if (isBinary) frames.push(new Uint8Array(bytes));
      else texts.push(bytes.toString('utf8'));
    });
    // A send cut short by the server's close is expected in some cases; the close says what happened.
    ws.on('error', () => undefined);
    ws.on('close', (code, reason) => resolve({ frames, texts, code, reason: reason.toString('utf8') }));
    setTimeout(() => reject(new Error('the channel never closed')), 30_000).unref();
  });

const opened = (outcome: WsOutcome | Refused): WsOutcome => {
  if ('status' in outcome) throw new Error(`the upgrade was refused: ${outcome.status} ${outcome.body}`);
  return outcome;
};

const refusedUpgrade = (outcome: WsOutcome | Refused): Refused => {
  if (!('status' in outcome)) throw new Error(`the upgrade was taken: closed ${outcome.code}`);
  return outcome;
};

/** The one frame of a connection that answered and closed normally. */
const oneFrame = (outcome: WsOutcome | Refused, code = 1000): Frame => {
  const { frames, texts, code: closed } = opened(outcome);
  expect(texts).toEqual([]);
  expect(frames).toHaveLength(1);
  expect(closed).toBe(code);
  return decodeFrame(frames[0] ?? new Uint8Array());
};

const overHttp = async (
  body: string | Uint8Array,
  options: {
    readonly token?: string | null;
    readonly contentType?: string;
    readonly headers?: Record<string, string>;
  } = {},
) => {
  const token = options.token === undefined ? demoTokens.procurement : options.token;
  const response = await fetch(channelUrl(), {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...options.headers,
    },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
};

/** The frame of a 200 answer. */
const httpFrame = async (body: string | Uint8Array, options: Parameters<typeof overHttp>[1] = {}): Promise<Frame> => {
  const { response, bytes } = await overHttp(body, options);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/octet-stream');
  return decodeFrame(bytes);
};

const resultOf = (frame: Frame): ResultObject => {
  if (frame.kind !== 'result') throw new Error(`expected a result frame, got ${JSON.stringify(frame)}`);
  const object = ResultObject.parse(frame.result.structuredContent);
  expect(frame.result.content).toEqual([{ type: 'text', text: JSON.stringify(object) }]);
  expect(frame.result.isError).toBe(['denied', 'failed', 'unknown', 'rejected', 'expired'].includes(object.status));
  return object;
};

const errorOf = (frame: Frame) => {
  if (frame.kind !== 'error') throw new Error(`expected an error frame, got ${JSON.stringify(frame)}`);
  return frame.error;
};

const params = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });
const track = params('erp.shipments.track', { tracking_number: '1Z999AA10123456784' });
const order = (amount: string) => params('erp.purchase_orders.create', { vendor_id: 'V-100', amount, currency: 'EUR' });

/** Both transports, as one function from params to the frame answered. */
const transports = [
  { name: 'WebSocket', call: async (text: string, token?: string) => oneFrame(await overWebSocket([text], { token })) },
  { name: 'HTTP POST', call: (text: string, token?: string) => httpFrame(text, { token }) },
] as const;

const recordsOfProcurement = async () => (await store.listByAgent('procurement-agent', { limit: 1000 })).items.length;

describe.each(transports)('calls over $name', ({ name, call }) => {
  it(
    verifies(
      ['channel.same-call', 'channel.websocket', 'channel.http'],
      `runs a read and a small order at once (${name})`,
    ),
    async () => {
      const read = resultOf(await call(track));
      expect(read).toMatchObject({ status: 'succeeded', result: { carrier: 'DHL', status: 'in_transit' } });
      const placed = resultOf(await call(order('120')));
      expect(placed).toMatchObject({ status: 'succeeded', code: null });
      const record = await store.get(placed.execution_id ?? '');
      expect(record).toMatchObject({
        agent_id: 'procurement-agent',
        tool: 'erp.purchase_orders.create',
        status: 'succeeded',
      });
      expect(erp.callsFor(placed.execution_id ?? '')).toBe(1);
    },
  );

  it(
    verifies(
      'channel.same-call',
      `holds a large order and follows it with get_execution_status, the agent's own only (${name})`,
    ),
    async () => {
      const held = resultOf(await call(order('1500')));
      expect(held).toMatchObject({ status: 'pending_approval', code: null });
      const executionId = held.execution_id ?? '';
      expect((await store.get(executionId))?.status).toBe('pending_approval');
      const status = resultOf(await call(params('get_execution_status', { execution_id: executionId })));
      expect(status).toMatchObject({ status: 'pending_approval', execution_id: executionId });
      // Another agent asking for it is answered exactly as for an id that does not exist.
      const foreign = await call(params('get_execution_status', { execution_id: executionId }), demoTokens.support);
      const missing = await call(
        params('get_execution_status', { execution_id: '01890a5d-ac96-774b-bcce-b302099a8057' }),
        demoTokens.support,
      );
      expect(resultOf(foreign)).toMatchObject({ status: 'unknown', code: 'not_found' });
      expect(foreign).toEqual(missing);
      expect(erp.calls()).toHaveLength(0);
    },
  );

  it(verifies('channel.same-call', `answers refusals and unknown tools as result objects (${name})`), async () => {
    expect(resultOf(await call(order('0')))).toMatchObject({ status: 'denied', code: 'policy_denied' });
    // Support may not create purchase orders, and nobody may delete vendors: neither tool exists for them.
    expect(resultOf(await call(order('10'), demoTokens.support))).toMatchObject({
      status: 'denied',
      code: 'unknown_tool',
    });
    expect(resultOf(await call(params('erp.vendors.delete', { vendor_id: 'V-100' })))).toMatchObject({
      code: 'unknown_tool',
    });
    expect(resultOf(await call(params('erp.nothing.here', {})))).toMatchObject({
      status: 'denied',
      code: 'unknown_tool',
    });
    const duplicate = resultOf(
      await call(`{"name":"erp.shipments.track","arguments":{"tracking_number":"1Z1","tracking_number":"1Z2"}}`),
    );
    expect(duplicate).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
    expect(erp.calls()).toHaveLength(0);
  });

  it(verifies('channel.same-call', `redacts secrets in the frame, as MCP does (${name})`), async () => {
    const vendor = await call(params('erp.vendors.get', { vendor_id: 'V-100' }));
    const text = JSON.stringify(vendor);
    expect(resultOf(vendor)).toMatchObject({ status: 'succeeded', result: { api_key: '[REDACTED]' } });
    expect(text).not.toContain('acme-portal-key-51f0c2d9');
    expect(text).not.toContain('Acme!Portal#2026');
    const granted = await call(
      params('erp.vendors.grant_portal_access', {
        vendor_id: 'V-100',
        contact_email: 'ops@acme.example',
        initial_password: 'Initial-Secret-2026!',
      }),
    );
    expect(resultOf(granted).status).toBe('succeeded');
    expect(JSON.stringify(granted)).not.toContain('Initial-Secret-2026!');
    expect(runtime.output()).not.toContain('Initial-Secret-2026!');
  });

  it(verifies('channel.params', `answers params it cannot take with frame 1 (${name})`), async () => {
    const before = await recordsOfProcurement();
    expect(errorOf(await call('not json')).code).toBe(-32700);
    expect(errorOf(await call('{"name":42}')).code).toBe(-32602);
    expect(errorOf(await call('{"name":"erp.shipments.track","arguments":[1]}')).code).toBe(-32602);
    expect(await recordsOfProcurement()).toBe(before);
  });
});

describe('the WebSocket front', () => {
  it(
    verifies(['channel.websocket', 'channel.params'], 'reads a binary message as UTF-8 params, and garbage as -32700'),
    async () => {
      const binary = resultOf(oneFrame(await overWebSocket([new TextEncoder().encode(track)])));
      expect(binary.status).toBe('succeeded');
      const garbage = new Uint8Array([0xff, 0xfe, 0x00, 0x01, 0xc0, 0xaf, 0x7b]);
      expect(errorOf(oneFrame(await overWebSocket([garbage])))).toMatchObject({ code: -32700 });
      // A text frame that is not UTF-8 is read the same way (the text is checked by the gateway).
      expect(errorOf(oneFrame(await overWebSocket([new Uint8Array([0x7b, 0xed, 0xa0, 0x80, 0x7d])])))).toMatchObject({
        code: -32700,
      });
    },
  );

  it(
    verifies('channel.websocket', 'answers the first of two messages and closes 1008, never running the second'),
    async () => {
      const before = await recordsOfProcurement();
      const outcome = opened(await overWebSocket([order('11'), order('12')]));
      expect(outcome.code).toBe(1008);
      expect(outcome.frames).toHaveLength(1);
      const first = resultOf(decodeFrame(outcome.frames[0] ?? new Uint8Array()));
      expect(first.status).toBe('succeeded');
      expect(await recordsOfProcurement()).toBe(before + 1);
      expect(erp.calls()).toHaveLength(1);
    },
  );

  it(
    verifies('channel.websocket', 'answers a message just over 256 KiB with -32600 and cuts a huge one with 1009'),
    async () => {
      const over = `{"name":"erp.shipments.track","arguments":{"tracking_number":"${'x'.repeat(maxChannelParamsBytes)}"}}`;
      expect(errorOf(oneFrame(await overWebSocket([over])))).toMatchObject({ code: -32600 });
      const huge = opened(await overWebSocket([new Uint8Array(600 * 1024)]));
      expect(huge.frames).toHaveLength(0);
      expect(huge.code).toBe(1009);
    },
  );

  it(
    verifies('channel.websocket', 'answers a client that sends nothing with the params-missing frame, then closes'),
    async () => {
      const error = errorOf(oneFrame(await overWebSocket([])));
      expect(error).toEqual({
        code: -32600,
        message: `No params arrived within ${waitMs / 1000} s: send the tools/call params as the first message.`,
      });
    },
  );

  it(verifies('channel.websocket', "continues the upgrade request's traceparent"), async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traced = opened(
      await overWebSocket([track], { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } }),
    );
    const result = resultOf(decodeFrame(traced.frames[0] ?? new Uint8Array()));
    expect((await store.get(result.execution_id ?? ''))?.trace_id).toBe(traceId);
    expect(erp.calls()[0]?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });
});

describe('the HTTP POST front', () => {
  it(
    verifies(['channel.http', 'channel.params'], 'takes the params as UTF-8 bytes in an octet-stream body'),
    async () => {
      const frame = await httpFrame(new TextEncoder().encode(track), { contentType: 'application/octet-stream' });
      expect(resultOf(frame).status).toBe('succeeded');
      const garbage = await httpFrame(new Uint8Array([0xff, 0x00, 0xfe]), { contentType: 'application/octet-stream' });
      expect(errorOf(garbage).code).toBe(-32700);
    },
  );

  it(verifies('channel.http', 'answers 415, 413 and 405 as documented'), async () => {
    const plain = await overHttp(track, { contentType: 'text/plain' });
    expect(plain.response.status).toBe(415);
    expect(errorOf(decodeFrame(plain.bytes)).code).toBe(-32600);
    const over = await overHttp(`{"name":"x","arguments":{"s":"${'x'.repeat(maxChannelParamsBytes)}"}}`);
    expect(over.response.status).toBe(413);
    expect(errorOf(decodeFrame(over.bytes)).code).toBe(-32600);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await fetch(channelUrl(), {
        method,
        headers: { authorization: `Bearer ${demoTokens.procurement}` },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });

  it(verifies('channel.http', 'answers a body that never arrives with 408 and the params-missing frame'), async () => {
    const { request } = await import('node:http');
    const answer = await new Promise<{ status: number; bytes: Buffer }>((resolve, reject) => {
      const sent = request(channelUrl(), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${demoTokens.procurement}`,
          'content-type': 'application/json',
          'content-length': '100',
        },
      });
      sent.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
      });
      sent.on('error', reject);
      sent.write('{"name":');
    });
    expect(answer.status).toBe(408);
    expect(errorOf(decodeFrame(answer.bytes))).toMatchObject({ code: -32600 });
  });
});

describe('identity and origin', () => {
  it(
    verifies('channel.identity', 'refuses no token and a wrong token with the same 401 challenge as /mcp'),
    async () => {
      for (const token of [null, 'not-a-token']) {
        const mcp = await fetch(runtime.mcpUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          },
          body: '{}',
        });
        const challenge = mcp.headers.get('www-authenticate');
        expect(mcp.status).toBe(401);
        const upgrade = refusedUpgrade(await overWebSocket([track], { token }));
        expect(upgrade.status).toBe(401);
        expect(upgrade.headers['www-authenticate']).toBe(challenge);
        const post = await overHttp(track, { token });
        expect(post.response.status).toBe(401);
        expect(post.response.headers.get('www-authenticate')).toBe(challenge);
      }
      expect(erp.calls()).toHaveLength(0);
    },
  );

  it(verifies('channel.identity', 'refuses a foreign Host and a browser Origin as /mcp does'), async () => {
    const port = new URL(runtime.baseUrl).port;
    const cases: Record<string, string>[] = [
      { host: `rebound.example:${port}` },
      { origin: 'http://evil.example' },
      { origin: 'null' },
    ];
    for (const headers of cases) {
      expect(refusedUpgrade(await overWebSocket([track], { headers })).status).toBe(403);
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        const sent = request(channelUrl(), {
          method: 'POST',
          headers: {
            authorization: `Bearer ${demoTokens.procurement}`,
            'content-type': 'application/json',
            ...headers,
          },
        });
        sent.on('response', (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        sent.on('error', reject);
        sent.end(track);
      });
      expect(status).toBe(403);
    }
    // A page served from the gateway's own loopback name is no stranger.
    expect(resultOf(oneFrame(await overWebSocket([track], { headers: { origin: runtime.baseUrl } }))).status).toBe(
      'succeeded',
    );
    expect(erp.calls()).toHaveLength(1);
  });
});

describe('after all of it', () => {
  it(
    verifies(['channel.robust', 'channel.identity'], 'still serves /mcp and logs each call without its arguments'),
    async () => {
      const secretish = 'TRACK-ONLY-IN-ARGUMENTS-42';
      await overWebSocket([params('erp.shipments.track', { tracking_number: secretish })]);
      const client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
      try {
        const answer = await client.callTool({ name: 'erp.shipments.track', arguments: { tracking_number: '1Z1' } });
        expect(ResultObject.parse(answer.structuredContent).status).toBe('succeeded');
      } finally {
        await client.close();
      }
      const lines = runtime
        .output()
        .split('\n')
        .filter((line) => line.includes('tools/call over /tool/call-tool'));
      expect(lines.length).toBeGreaterThan(20);
      expect(lines.some((line) => line.includes('"transport":"websocket"'))).toBe(true);
      expect(lines.some((line) => line.includes('"transport":"http"'))).toBe(true);
      expect(runtime.output()).not.toContain(secretish);
      expect(runtime.child.exitCode).toBeNull();
    },
  );
});

describe('one gate for /mcp and the channel', () => {
  it(verifies(
    'channel.limits',
    "counts the channel's calls and /mcp's requests against the same per-agent allowance",
  ), async () => {
    const folder = await temporaryFolder('gateway-channel-limits-');
    const org = join(folder.path, 'org');
    await cp(projectPath('examples'), org, { recursive: true });
    const configFile = join(org, 'gateway.config.yaml');
    const text = await readFile(configFile, 'utf8');
    // Refilled one request per 1000 s: within the test, exactly the burst gets through.
    await writeFile(
      configFile,
      text.replace(
        'allowed_staleness: 15m\n',
        'allowed_staleness: 15m\n  limits:\n    agents:\n      procurement-agent: { requests_per_second: 0.001, burst: 3 }\n',
      ),
    );
    const limited = await startRuntimeProcess(['--memory', '--no-demo-erp', '--config', configFile], {
      DEMO_ERP_URL: erp.url,
    });
    try {
      const mcp = () =>
        fetch(limited.mcpUrl, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${demoTokens.procurement}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: '{}',
        });
      const post = (token: string) =>
        fetch(`${limited.baseUrl}/tool/call-tool`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: track,
        }).then(async (response) => resultOf(decodeFrame(new Uint8Array(await response.arrayBuffer()))));
      // Two requests on /mcp and one call on the channel spend the burst of three...
      expect((await mcp()).status).not.toBe(429);
      expect((await mcp()).status).not.toBe(429);
      expect((await post(demoTokens.procurement)).status).toBe('succeeded');
      // ...so the channel is refused, and /mcp too: one allowance.
      expect(await post(demoTokens.procurement)).toMatchObject({ status: 'denied', code: 'rate_limited' });
      expect((await mcp()).status).toBe(429);
      // Another agent's allowance is its own.
      expect((await post(demoTokens.support)).status).toBe('succeeded');
    } finally {
      await limited.stop();
      await folder.remove();
    }
  }, 180_000);
});
