// The /tool/call-tool channel client against a real WebSocket proxy on 127.0.0.1 whose behaviour
// each test sets: what it sends (upgrade headers, the one params message), what every kind of
// answer becomes, and that nothing is retried and no connection is left open.
//
// Long: each way a proxy can answer or misbehave is its own short case here.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../../infra/local/net.js';
import { CallToolChannelClient, channelUrl } from '../../shared/adapters/call-tool-channel-client.js';
import type { ResolvedCallToolSystem } from '../../shared/config/resolved.js';
import type { ToolServerRequest } from '../../shared/invoke/tool-server.js';
import { encodeFrame } from '../../shared/wire/call-tool-frame.js';
import { type CallToolProxy, startCallToolProxy, upstreamProse } from '../support/call-tool-proxy.js';
import { verifies } from '../support/requirements.js';
import { aCallToolSystem as aCallToolSystemOf } from '../support/systems.js';

let proxy: CallToolProxy;
beforeAll(async () => {
  proxy = await startCallToolProxy();
});
afterAll(async () => {
  await proxy?.close();
});
beforeEach(() => proxy.reset());

const aCallToolSystem = (overrides: Partial<ResolvedCallToolSystem> = {}): ResolvedCallToolSystem =>
  aCallToolSystemOf({
    key: 'tools',
    url: proxy.url,
    tools: [{ name: 'echo', description: 'Echoes', input_schema: { type: 'object' }, access: 'read' }],
    timeout: 5_000,
    max_response_size: 64 * 1024,
    ...overrides,
  });

const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const aRequest = (overrides: Partial<ToolServerRequest> = {}): ToolServerRequest => ({
  system: aCallToolSystem(),
  name: 'echo',
  argumentsJson: '{"message":"hello"}',
  executionId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  traceparent,
  deadlineMs: 5_000,
  maxResponseBytes: 64 * 1024,
  ...overrides,
});

const client = new CallToolChannelClient();

/** Calls once and waits until the proxy saw the connection end: nothing may stay open. */
const callOnce = async (request: ToolServerRequest = aRequest()) => {
  const answer = await client.call(request);
  await proxy.ended(proxy.connections.length);
  return answer;
};

describe('what the channel client sends', () => {
  it(
    verifies(
      'systems.call-tool-request',
      'opens <url>/tool/call-tool and sends one message: the name and the arguments text exactly as given',
    ),
    async () => {
      proxy.behave({ kind: 'result', result: { content: [{ type: 'text', text: 'ok' }] } });
      const argumentsJson = '{"id":123456789012345678901234567890,"amount":"1500","nested":{"x":[1,2.5e3]}}';
      await callOnce(aRequest({ name: 'get-sum', argumentsJson }));
      expect(proxy.connections).toHaveLength(1);
      const [connection] = proxy.connections;
      expect(connection?.path).toBe('/tool/call-tool');
      expect(connection?.messages).toEqual([`{"name":"get-sum","arguments":${argumentsJson}}`]);
      expect(connection?.binary).toEqual([false]);
      expect(connection?.headers['x-request-id']).toBe('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
      expect(connection?.headers.traceparent).toBe(traceparent);
      expect(connection?.headers.authorization).toBeUndefined();
    },
  );

  it(verifies('receipts.tool-server-meta', "sends an approved call's receipt in the params' _meta"), async () => {
    proxy.behave({ kind: 'result', result: { content: [{ type: 'text', text: 'ok' }] } });
    await callOnce(aRequest({ receipt: 'header.claims.signature' }));
    expect(proxy.connections[0]?.messages).toEqual([
      '{"name":"echo","arguments":{"message":"hello"},"_meta":{"approval-gateway/receipt":"header.claims.signature"}}',
    ]);
  });

  it(verifies('systems.call-tool-request', 'turns http into ws and https into wss, keeping a base path'), () => {
    expect(channelUrl('http://127.0.0.1:9000')).toBe('ws://127.0.0.1:9000/tool/call-tool');
    expect(channelUrl('https://tools.example.com/base')).toBe('wss://tools.example.com/base/tool/call-tool');
    expect(channelUrl('ws://127.0.0.1:9000/')).toBe('ws://127.0.0.1:9000/tool/call-tool');
    expect(channelUrl('wss://tools.example.com')).toBe('wss://tools.example.com/tool/call-tool');
  });

  it(
    verifies('systems.call-tool-request', "sends the system's bearer, api_key or basic credential on the upgrade"),
    async () => {
      proxy.behave({ kind: 'result', result: { content: [] } });
      const bearer = aCallToolSystem({ credentials: { type: 'bearer', token: 'proxy-token-1' } });
      const apiKey = aCallToolSystem({ credentials: { type: 'api_key', header: 'X-Proxy-Key', value: 'key-2' } });
      const basic = aCallToolSystem({ credentials: { type: 'basic', username: 'gateway', password: 'pw-3' } });
      for (const system of [bearer, apiKey, basic]) await callOnce(aRequest({ system }));
      const headers = proxy.connections.map((connection) => connection.headers);
      expect(headers[0]?.authorization).toBe('Bearer proxy-token-1');
      expect(headers[1]?.['x-proxy-key']).toBe('key-2');
      expect(headers[1]?.authorization).toBeUndefined();
      expect(headers[2]?.authorization).toBe(`Basic ${Buffer.from('gateway:pw-3').toString('base64')}`);
    },
  );
});

describe('what each answer becomes', () => {
  it(verifies('systems.call-tool-answers', 'frame 0 is the CallToolResult, as the proxy sent it'), async () => {
    const result = { content: [{ type: 'text', text: 'Echo: hello' }], structuredContent: { echoed: 'hello' } };
    proxy.behave({ kind: 'result', result });
    expect(await callOnce()).toEqual({ kind: 'result', result });
  });

  it(
    verifies('systems.call-tool-answers', 'frame 1 keeps only the JSON-RPC code: -32602, -32601, a server code'),
    async () => {
      for (const code of [-32602, -32601, -32000]) {
        proxy.behave({ kind: 'error', error: { code, message: upstreamProse, data: { secret: upstreamProse } } });
        const answer = await callOnce();
        expect(answer).toEqual({ kind: 'error', code });
        expect(JSON.stringify(answer)).not.toContain('hunter2');
      }
    },
  );

  it(
    verifies(
      'systems.call-tool-faults',
      'an unknown tag, an empty message, a body that is not JSON, a code beyond 32 bits or a text message is unreadable',
    ),
    async () => {
      const answers = [];
      for (const bytes of [
        Uint8Array.from([7, ...Buffer.from('{"content":[]}')]),
        new Uint8Array(0),
        Uint8Array.from([0, ...Buffer.from('<html>not json</html>')]),
        Uint8Array.from([1, ...Buffer.from('{"message":"no code"}')]),
        // A code too large to be recorded as mcp_<code>.
        Uint8Array.from([1, ...Buffer.from('{"code":1e21,"message":"huge"}')]),
        Uint8Array.from([1, ...Buffer.from('{"code":-9007199254740993,"message":"huge"}')]),
      ]) {
        proxy.behave({ kind: 'bytes', bytes });
        answers.push(await callOnce());
      }
      proxy.behave({ kind: 'text', text: `\u0000${JSON.stringify({ content: [] })}` });
      answers.push(await callOnce());
      expect(answers).toEqual(Array(7).fill({ kind: 'unreadable' }));
    },
  );

  it(
    verifies(
      'systems.call-tool-faults',
      'bytes that are not WebSocket framing, once the params were sent, are unreadable',
    ),
    async () => {
      proxy.behave({ kind: 'not-websocket' });
      expect(await callOnce()).toEqual({ kind: 'unreadable' });
    },
  );

  it(
    verifies('systems.call-tool-faults', 'a message beyond the size cap is too_large, and a frame at the cap is read'),
    async () => {
      proxy.behave({ kind: 'huge', bytes: 4097 });
      expect(await callOnce(aRequest({ maxResponseBytes: 4096 }))).toEqual({ kind: 'too_large' });
      proxy.behave({ kind: 'huge', bytes: 4096 });
      expect(await callOnce(aRequest({ maxResponseBytes: 4096 }))).toEqual({
        kind: 'result',
        result: { content: [] },
      });
      // A frame announcing far more than the cap is refused from its header, before its body arrives.
      proxy.behave({ kind: 'huge', bytes: 8 * 1024 * 1024 });
      expect(await callOnce(aRequest({ maxResponseBytes: 1024 }))).toEqual({ kind: 'too_large' });
    },
  );

  it(
    verifies('systems.call-tool-faults', 'a drop or a close before the answer is connection_failed, sent'),
    async () => {
      proxy.behave({ kind: 'drop' });
      expect(await callOnce()).toMatchObject({ kind: 'connection_failed', sent: true });
      proxy.behave({ kind: 'close' });
      expect(await callOnce()).toMatchObject({ kind: 'connection_failed', sent: true });
      expect(proxy.connections.map((connection) => connection.messages.length)).toEqual([1, 1]);
    },
  );

  it(
    verifies(
      'systems.call-tool-faults',
      'no answer, an endless frame or a late one within the deadline is timeout, sent; the late answer is ignored',
    ),
    async () => {
      for (const behaviour of [
        { kind: 'hang' },
        { kind: 'endless' },
        { kind: 'late', answer: { kind: 'result', result: { content: [] } } },
      ] as const) {
        proxy.behave(behaviour);
        expect(await callOnce(aRequest({ deadlineMs: 200 }))).toEqual({ kind: 'timeout', sent: true });
      }
      // The held answer finds the connection gone: nothing reads it.
      proxy.release();
      expect(proxy.connections).toHaveLength(3);
    },
  );

  it(
    verifies(
      'systems.call-tool-faults',
      'a refused upgrade (401, 404, 503, a redirect) is connection_failed, not sent',
    ),
    async () => {
      for (const status of [401, 404, 503, 302]) {
        proxy.behave({ kind: 'refuse', status });
        expect(await callOnce()).toMatchObject({ kind: 'connection_failed', sent: false });
      }
      expect(proxy.connections.every((connection) => connection.messages.length === 0)).toBe(true);
    },
  );

  it(
    verifies('systems.call-tool-faults', 'a wrong path is refused like any upgrade; nothing listening is not sent'),
    async () => {
      proxy.behave({ kind: 'result', result: { content: [] } });
      const elsewhere = aCallToolSystem({ url: `${proxy.url}/nested` });
      expect(await callOnce(aRequest({ system: elsewhere }))).toMatchObject({ kind: 'connection_failed', sent: false });
      expect(proxy.connections[0]?.path).toBe('/nested/tool/call-tool');
      // A port that was just freed: the connection is refused.
      const server: Server = createServer();
      const freed = await listen(server, '127.0.0.1', 0);
      await freed.close();
      const nobody = aCallToolSystem({ url: `ws://127.0.0.1:${freed.port}` });
      expect(await client.call(aRequest({ system: nobody }))).toMatchObject({
        kind: 'connection_failed',
        sent: false,
        cause: expect.stringMatching(/ECONNREFUSED/),
      });
    },
  );

  it(
    verifies(
      'systems.call-tool-faults',
      'a server that accepts the connection but never upgrades is timeout, not sent',
    ),
    async () => {
      const sockets = new Set<import('node:net').Socket>();
      const silent: Server = createServer(() => undefined);
      silent.on('connection', (socket) => sockets.add(socket));
      const listening = await listen(silent, '127.0.0.1', 0);
      try {
        const system = aCallToolSystem({ url: `http://127.0.0.1:${listening.port}` });
        expect(await client.call(aRequest({ system, deadlineMs: 200 }))).toEqual({ kind: 'timeout', sent: false });
      } finally {
        for (const socket of sockets) socket.destroy();
        await listening.close();
      }
    },
  );

  it(verifies('systems.call-tool-faults', 'a second frame after the first changes nothing'), async () => {
    const first = encodeFrame({ kind: 'result', result: { content: [{ type: 'text', text: 'first' }] } });
    const second = encodeFrame({ kind: 'error', error: { code: -32603, message: upstreamProse } });
    proxy.behave({ kind: 'frames', frames: [first, second] });
    expect(await callOnce()).toEqual({ kind: 'result', result: { content: [{ type: 'text', text: 'first' }] } });
  });
});
