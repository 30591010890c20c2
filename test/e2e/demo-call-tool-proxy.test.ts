// The demo call-tool proxy on its own, in front of the real MCP example server (server-everything)
// over stdio: one params message in, one frame out, its documented refusals, a server that cannot
// be started or dies mid-call, and an environment that holds nothing of the process running it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type DemoCallToolProxy,
  demoCallToolToken,
  serverUnreachableCode,
  startDemoCallToolProxy,
} from '../../examples/call-tool-proxy/server.js';
import { decodeFrame, type Frame } from '../../shared/wire/call-tool-frame.js';
import { verifies } from '../support/requirements.js';

interface Exchange {
  /** The HTTP status of a refused upgrade. */
  readonly refused: number | null;
  readonly frames: Frame[];
  readonly closeCode: number | null;
}

/** Opens the channel, sends one message, and collects everything until the proxy closes. */
const exchange = (
  proxy: DemoCallToolProxy,
  text: string,
  { token = demoCallToolToken, path = '/tool/call-tool' }: { token?: string | null; path?: string } = {},
): Promise<Exchange> =>
  new Promise((resolve, reject) => {
    const frames: Frame[] = [];
    const socket = new WebSocket(`${proxy.url.replace('http', 'ws')}${path}`, {
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
    socket.on('unexpected-response', (_request, response) => {
      resolve({ refused: response.statusCode ?? null, frames, closeCode: null });
      response.destroy();
      socket.terminate();
    });
    socket.on('open', () => socket.send(text));
    socket.on('message', (data, isBinary) => {
      if (!isBinary) reject(new Error('the proxy answered a text message'));
      frames.push(decodeFrame(data as Buffer));
    });
    socket.on('close', (code) => resolve({ refused: null, frames, closeCode: code }));
    socket.on('error', () => undefined);
  });

const callText = (name: string, args: Record<string, unknown>) => JSON.stringify({ name, arguments: args });

describe('the demo call-tool proxy in front of server-everything', () => {
  let proxy: DemoCallToolProxy;
  const secret = 'gateway-secret-in-the-proxy-env-3f9b';
  beforeAll(async () => {
    // A secret of the process that runs the proxy: the MCP server it starts must not see it.
    process.env.DEMO_PROXY_TEST_SECRET = secret;
    proxy = await startDemoCallToolProxy();
  });
  afterAll(async () => {
    delete process.env.DEMO_PROXY_TEST_SECRET;
    await proxy?.close();
  });

  it(
    verifies('demo.call-tool-proxy', "answers a tool's CallToolResult as frame 0, then closes the connection"),
    async () => {
      const echoed = await exchange(proxy, callText('echo', { message: 'hello' }));
      expect(echoed.frames).toEqual([{ kind: 'result', result: { content: [{ type: 'text', text: 'Echo: hello' }] } }]);
      expect(echoed.closeCode).toBe(1000);
      const weather = await exchange(proxy, callText('get-structured-content', { location: 'Chicago' }));
      expect(weather.frames[0]).toMatchObject({
        kind: 'result',
        result: { structuredContent: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 } },
      });
    },
  );

  it(
    verifies('demo.call-tool-proxy', "relays server-everything's own answer to an unknown tool or wrong arguments"),
    async () => {
      // server-everything answers both as a failed tool (isError), not as a JSON-RPC error.
      const unknown = await exchange(proxy, callText('no-such-tool', {}));
      expect(unknown.frames).toEqual([
        {
          kind: 'result',
          result: {
            isError: true,
            content: [{ type: 'text', text: expect.stringContaining('no-such-tool not found') }],
          },
        },
      ]);
      const wrong = await exchange(proxy, callText('get-sum', { a: 'one' }));
      expect(wrong.frames[0]).toMatchObject({ kind: 'result', result: { isError: true } });
    },
  );

  it(
    verifies('demo.call-tool-proxy', 'answers frame 1 -32700 for params that are not JSON, -32602 for the wrong shape'),
    async () => {
      expect((await exchange(proxy, '{"name": "echo", ')).frames).toEqual([
        { kind: 'error', error: { code: -32700, message: expect.any(String) } },
      ]);
      for (const text of ['[]', '{"arguments":{}}', '{"name":"echo","arguments":[1]}', '"echo"']) {
        expect((await exchange(proxy, text)).frames).toEqual([
          { kind: 'error', error: { code: -32602, message: expect.any(String) } },
        ]);
      }
    },
  );

  it(
    verifies('demo.call-tool-proxy', 'serves nothing but /tool/call-tool, and only to callers with its credential'),
    async () => {
      expect((await exchange(proxy, callText('echo', { message: 'x' }), { token: null })).refused).toBe(401);
      expect((await exchange(proxy, callText('echo', { message: 'x' }), { token: 'wrong' })).refused).toBe(401);
      expect((await exchange(proxy, callText('echo', { message: 'x' }), { path: '/mcp' })).refused).toBe(404);
      expect((await fetch(`${proxy.url}/tool/call-tool`)).status).toBe(404);
    },
  );

  it(
    verifies('demo.call-tool-proxy', 'starts the MCP server with a minimal environment: none of its own is readable'),
    async () => {
      const printed = await exchange(proxy, callText('get-env', {}));
      const [frame] = printed.frames;
      if (frame?.kind !== 'result') throw new Error(`expected a result, got ${JSON.stringify(frame)}`);
      const text = JSON.stringify(frame.result);
      expect(text).toContain('PATH');
      expect(text).not.toContain(secret);
      expect(text).not.toContain('DEMO_PROXY_TEST_SECRET');
      expect(text).not.toContain('VITEST');
    },
  );
});

describe('the demo call-tool proxy when its MCP server fails', () => {
  it(verifies('demo.call-tool-proxy', 'answers frame 1 -32000 when the MCP server cannot be started'), async () => {
    const proxy = await startDemoCallToolProxy({
      server: { command: '/nonexistent/mcp-server', args: [], env: {}, stderr: 'ignore' },
    });
    try {
      const answer = await exchange(proxy, callText('echo', { message: 'x' }));
      expect(answer.frames).toEqual([
        { kind: 'error', error: { code: serverUnreachableCode, message: 'The MCP server could not be reached.' } },
      ]);
    } finally {
      await proxy.close();
    }
  });

  it(
    verifies('demo.call-tool-proxy', 'closes without a frame (1011) when the server dies after the call was sent'),
    async () => {
      // A server that completes the handshake, then exits on the first tools/call.
      const script = `
        const rl = require('node:readline').createInterface({ input: process.stdin });
        rl.on('line', (line) => {
          const message = JSON.parse(line);
          if (message.method === 'initialize') {
            process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {
              protocolVersion: message.params.protocolVersion, capabilities: { tools: {} },
              serverInfo: { name: 'dies', version: '1' } } }) + '\\n');
          }
          if (message.method === 'tools/call') process.exit(1);
        });`;
      const proxy = await startDemoCallToolProxy({
        server: { command: process.execPath, args: ['-e', script], env: {}, stderr: 'ignore' },
      });
      try {
        const answer = await exchange(proxy, callText('echo', { message: 'x' }));
        expect(answer.frames).toEqual([]);
        expect(answer.closeCode).toBe(1011);
      } finally {
        await proxy.close();
      }
    },
  );
});
