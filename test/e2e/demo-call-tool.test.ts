// `npm start` with the demo configuration runs the demo call-tool proxy and offers its tools: the
// banner names it, the agents see the everything.* tools policy gives them, a call runs through the
// proxy and the MCP example server, a held one waits for operations, get-env is never offered, and
// the gateway's own environment cannot be read through the demo.
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { demoCallToolToken } from '../../examples/call-tool-proxy/server.js';
import { ResultObject } from '../../shared/result.js';
import { decodeFrame } from '../../shared/wire/call-tool-frame.js';
import { eventually } from '../support/approval-org.js';
import { signedIn } from '../support/console.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

/** A secret in the gateway's own environment; nothing reachable through the demo may show it. */
const gatewaySecret = 'gateway-env-secret-a71c';

const call = async (client: Awaited<ReturnType<typeof connectAgent>>, name: string, args: Record<string, unknown>) =>
  ResultObject.parse((await client.callTool({ name, arguments: args })).structuredContent);

describe('npm start with the demo call-tool system', () => {
  let runtime: RuntimeProcess;
  let demoToolsUrl: string;
  beforeAll(async () => {
    runtime = await startRuntimeProcess(['--memory'], { GATEWAY_SIGNING_SECRET_PROBE: gatewaySecret });
    demoToolsUrl = /Demo tools\s+(\S+)\/tool\/call-tool/.exec(runtime.output())?.[1] ?? '';
  }, 120_000);
  afterAll(async () => {
    await runtime?.stop();
  });

  it(
    verifies(
      ['demo.call-tool-system', 'systems.call-tool-end-to-end'],
      'names the proxy in the banner and runs a demo tool through it',
    ),
    async () => {
      expect(demoToolsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const procurement = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
      const support = await connectAgent(runtime.mcpUrl, demoTokens.support);
      try {
        const names = (await procurement.listTools()).tools.map((tool) => tool.name);
        expect(names.filter((name) => name.startsWith('everything.'))).toEqual([
          'everything.echo',
          'everything.get-structured-content',
          'everything.get-sum',
        ]);
        const supportNames = (await support.listTools()).tools.map((tool) => tool.name);
        expect(supportNames.filter((name) => name.startsWith('everything.'))).toEqual([
          'everything.echo',
          'everything.get-structured-content',
        ]);
        expect(await call(procurement, 'everything.echo', { message: 'hello from the demo' })).toMatchObject({
          status: 'succeeded',
          result: [{ type: 'text', text: 'Echo: hello from the demo' }],
        });
        expect(await call(support, 'everything.get-structured-content', { location: 'Los Angeles' })).toMatchObject({
          status: 'succeeded',
          result: { temperature: 73, conditions: 'Sunny / Clear', humidity: 48 },
        });
      } finally {
        await procurement.close();
        await support.close();
      }
    },
  );

  it(verifies('demo.call-tool-system', 'holds a sum for operations and runs it once approved'), async () => {
    const procurement = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
    try {
      const held = await call(procurement, 'everything.get-sum', { a: 2, b: 40 });
      expect(held.status).toBe('pending_approval');
      const executionId = held.execution_id ?? '';
      const operations = await signedIn(runtime.baseUrl, 'operations-approver', 'demo-operations-password');
      const form = await operations.decisionForm(executionId);
      expect((await operations.decide(executionId, form, 'approve')).status).toBe(303);
      const settled = await eventually(
        () => call(procurement, 'get_execution_status', { execution_id: executionId }),
        (result) => result.status !== 'pending_approval' && result.status !== 'approved',
      );
      expect(settled).toMatchObject({
        status: 'succeeded',
        result: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }],
      });
    } finally {
      await procurement.close();
    }
  });

  it(
    verifies(
      'demo.call-tool-system',
      "never offers get-env, and the gateway's environment is not readable through the demo",
    ),
    async () => {
      const procurement = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
      try {
        expect(await call(procurement, 'everything.get-env', {})).toMatchObject({
          status: 'denied',
          code: 'unknown_tool',
        });
      } finally {
        await procurement.close();
      }
      // Even asked directly, with the demo credential, the server's environment is its own.
      const text = await new Promise<string>((resolve, reject) => {
        const socket = new WebSocket(`${demoToolsUrl.replace('http', 'ws')}/tool/call-tool`, {
          headers: { authorization: `Bearer ${demoCallToolToken}` },
        });
        socket.on('open', () => socket.send(JSON.stringify({ name: 'get-env', arguments: {} })));
        socket.on('message', (data) => resolve(JSON.stringify(decodeFrame(data as Buffer))));
        socket.on('error', reject);
      });
      expect(text).toContain('PATH');
      expect(text).not.toContain(gatewaySecret);
      expect(text).not.toContain('GATEWAY_');
      expect(runtime.output()).not.toContain(gatewaySecret);
    },
  );
});

describe('npm start --no-demo-tools', () => {
  it(verifies(
    'demo.call-tool-system',
    'starts no proxy and takes DEMO_CALL_TOOL_URL from the environment',
  ), async () => {
    const runtime = await startRuntimeProcess(['--memory', '--no-demo-tools'], {
      DEMO_CALL_TOOL_URL: 'http://127.0.0.1:9',
    });
    try {
      expect(runtime.output()).not.toContain('Demo tools');
      const procurement = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
      try {
        // Nothing listens there: the read fails, nothing was sent.
        expect(await call(procurement, 'everything.echo', { message: 'x' })).toMatchObject({
          status: 'failed',
          code: 'connection_failed',
        });
      } finally {
        await procurement.close();
      }
    } finally {
      await runtime.stop();
    }
  }, 120_000);
});

/** Whether a TCP connection to host:port is taken (true) or refused (false). */
const reachable = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('npm start --host 0.0.0.0', () => {
  it(verifies(
    'demo.loopback-only',
    'keeps the demo proxy on 127.0.0.1 while the gateway listens on every interface',
  ), async () => {
    const runtime = await startRuntimeProcess(['--memory', '--host', '0.0.0.0']);
    try {
      const url = /Demo tools\s+(\S+)\/tool\/call-tool/.exec(runtime.output())?.[1] ?? '';
      const port = Number(new URL(url).port);
      expect(await reachable('127.0.0.1', port)).toBe(true);
      // Another loopback address, and this machine's own addresses: the proxy answers on none of them.
      const elsewhere = [
        '127.0.0.2',
        ...Object.values(networkInterfaces())
          .flat()
          .flatMap((address) =>
            address !== undefined && !address.internal && address.family === 'IPv4' ? [address.address] : [],
          ),
      ];
      for (const host of elsewhere) expect(await reachable(host, port), host).toBe(false);
      // The gateway itself still runs the demo tools through it.
      const procurement = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
      try {
        expect(await call(procurement, 'everything.echo', { message: 'still here' })).toMatchObject({
          status: 'succeeded',
        });
      } finally {
        await procurement.close();
      }
    } finally {
      await runtime.stop();
    }
  }, 120_000);
});
