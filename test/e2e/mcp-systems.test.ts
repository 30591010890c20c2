// MCP servers as systems, end to end against `npm start`'s entry point: the demo's reference server
// (server-everything, started by the runtime) offers its tools to the procurement agent, a read runs
// at once and a write runs once after operations approves; and a server the test controls is down
// at start, comes back on its own, receives the system's credentials and never the agent's token.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { ResultObject } from '../../shared/result.js';
import { signedIn } from '../support/console.js';
import { untilStatus } from '../support/demo-gateways.js';
import { connectAgent } from '../support/mcp-client.js';
import { type FaultServer, startEverythingServer, startFaultServer } from '../support/mcp-servers.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

const callTool = async (client: Client, name: string, args: Record<string, unknown>) =>
  ResultObject.parse((await client.callTool({ name, arguments: args })).structuredContent);

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

/** Lists tools until the predicate holds (half a minute at most: a bound for a server that never comes). */
const untilTools = async (client: Client, holds: (names: string[]) => boolean): Promise<string[]> => {
  const deadline = Date.now() + 30_000;
  let names = await toolNames(client);
  while (!holds(names) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    names = await toolNames(client);
  }
  return names;
};

describe('the demo MCP server', () => {
  let runtime: RuntimeProcess;
  let procurement: Client;
  let support: Client;
  beforeAll(async () => {
    runtime = await startRuntimeProcess(['--memory', '--no-demo-erp', '--config', 'examples/gateway.config.yaml'], {
      DEMO_ERP_URL: 'http://127.0.0.1:9',
    });
    procurement = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
    support = await connectAgent(runtime.mcpUrl, demoTokens.support);
  });
  afterAll(async () => {
    await procurement?.close();
    await support?.close();
    await runtime?.stop();
  });

  it(
    verifies(
      ['systems.mcp-discovery', 'systems.mcp-credentials'],
      'offers a few of its tools to procurement, never get-env',
    ),
    async () => {
      expect(runtime.output()).toMatch(/Demo MCP server\s+http:\/\/127\.0\.0\.1:\d+\/mcp/);
      const names = await toolNames(procurement);
      expect(names.filter((name) => name.startsWith('reference.'))).toEqual([
        'reference.echo',
        'reference.get-annotated-message',
        'reference.get-structured-content',
        'reference.get-sum',
        'reference.get-tiny-image',
        'reference.toggle-simulated-logging',
      ]);
      expect((await toolNames(support)).some((name) => name.startsWith('reference.'))).toBe(false);
      expect(await callTool(procurement, 'reference.get-env', {})).toMatchObject({
        status: 'denied',
        code: 'unknown_tool',
      });
    },
  );

  it(verifies('systems.mcp-call-outcomes', 'runs a read at once'), async () => {
    const result = await callTool(procurement, 'reference.get-sum', { a: 2, b: 40 });
    expect(result).toMatchObject({ status: 'succeeded', code: null });
    expect(JSON.stringify(result.result)).toContain('42');
  });

  it(verifies('systems.mcp-call-outcomes', 'holds a write for operations, then runs it once'), async () => {
    const held = await callTool(procurement, 'reference.toggle-simulated-logging', {});
    expect(held).toMatchObject({ status: 'pending_approval' });
    const executionId = held.execution_id ?? '';
    const operations = await signedIn(runtime.baseUrl, 'operations-approver', 'demo-operations-password');
    const form = await operations.decisionForm(executionId);
    expect((await operations.decide(executionId, form, 'approve')).status).toBe(303);
    const done = await untilStatus(
      () => callTool(procurement, 'get_execution_status', { execution_id: executionId }),
      'succeeded',
    );
    expect(done).toMatchObject({ status: 'succeeded', code: null });
    expect(JSON.stringify(done.result)).toContain('simulated');
  });
});

describe('an MCP server down at start', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let server: FaultServer;
  let runtime: RuntimeProcess;
  let client: Client;
  const agentToken = 'agent-token-7d1e9b';
  beforeAll(async () => {
    folder = await temporaryFolder('gateway-mcp-');
    server = await startFaultServer();
    await server.stop();
    const config = join(folder.path, 'gateway.config.yaml');
    await writeFile(
      config,
      [
        'systems:',
        '  - kind: mcp',
        '    key: tools',
        `    url: ${server.url}`,
        '    refresh: 1s',
        '    credentials: { type: bearer, token: upstream-secret-42 }',
        'agents:',
        '  - id: tools-agent',
        `    token: ${agentToken}`,
        '    groups: [staff]',
        'approvers:',
        '  - id: ops-approver',
        '    password: ops-password-1',
        '    groups: [ops]',
        'policies: [policies.cedar]',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(folder.path, 'policies.cedar'),
      [
        'permit (principal in Group::"staff", action in Action::"tools", resource) when { action in Action::"read" };',
        '@approval("staff")',
        '@approvers("ops")',
        'permit (principal in Group::"staff", action in Action::"tools", resource) when { action in Action::"write" };',
        '',
      ].join('\n'),
    );
    runtime = await startRuntimeProcess(['--memory', '--no-demo-erp', '--no-demo-mcp', '--config', config]);
    client = await connectAgent(runtime.mcpUrl, agentToken);
  });
  afterAll(async () => {
    await client?.close();
    await runtime?.stop();
    await server?.close();
    await folder?.remove();
  });

  it(
    verifies(['systems.mcp-staleness', 'systems.mcp-credentials'], 'offers nothing until it answers, then its tools'),
    async () => {
      expect(await toolNames(client)).toEqual(['get_execution_status']);
      expect(runtime.output()).toContain('MCP server did not answer tools/list');
      await server.restart();
      const names = await untilTools(client, (listed) => listed.includes('tools.lookup'));
      expect(names).toEqual(['get_execution_status', 'tools.lookup', 'tools.update']);
      const result = await callTool(client, 'tools.lookup', { query: 'stock' });
      expect(result).toMatchObject({ status: 'succeeded' });
      const call = server.requests.find((request) => request.headers['x-request-id'] === result.execution_id);
      expect(call?.headers.authorization).toBe('Bearer upstream-secret-42');
      expect(call?.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      // The agent's token never goes upstream, in any request.
      for (const request of server.requests) expect(JSON.stringify(request)).not.toContain(agentToken);
    },
  );

  it(
    verifies(['systems.mcp-call-outcomes', 'systems.mcp-connection'], 'sends a held write once, after its approval'),
    async () => {
      // Runs after the server came back (the test above).
      const held = await callTool(client, 'tools.update', { value: 'v2' });
      expect(held).toMatchObject({ status: 'pending_approval' });
      const executionId = held.execution_id ?? '';
      const sentFor = () =>
        server.requests.filter(
          (request) => request.headers['x-request-id'] === executionId && request.body.includes('"tools/call"'),
        );
      expect(sentFor()).toHaveLength(0);
      const ops = await signedIn(runtime.baseUrl, 'ops-approver', 'ops-password-1');
      const form = await ops.decisionForm(executionId);
      expect((await ops.decide(executionId, form, 'approve')).status).toBe(303);
      const done = await untilStatus(
        () => callTool(client, 'get_execution_status', { execution_id: executionId }),
        'succeeded',
      );
      expect(done).toMatchObject({ status: 'succeeded' });
      expect(sentFor()).toHaveLength(1);
      expect(sentFor()[0]?.body).toContain('"arguments":{"value":"v2"}');
    },
  );
});

describe('npm run config:check with MCP servers', () => {
  it(verifies('systems.mcp-config-tools', 'lists what the MCP server offers: read or write, turned off'), async () => {
    const reference = await startEverythingServer();
    try {
      const result = await runProcess(
        process.execPath,
        ['--import', 'tsx', projectPath('scripts/config-check.ts'), 'examples/gateway.config.yaml', '--list-tools'],
        { cwd: projectPath(), env: { ...process.env, DEMO_ERP_URL: '', DEMO_MCP_URL: reference.url } },
      );
      expect(result.code, result.output).toBe(0);
      expect(result.stdout).toContain('17 tools (erp: 8, everything: 3, reference: 6)');
      expect(result.stdout).toMatch(/ {2}reference: \d+ tools listed/);
      expect(result.stdout).toContain('    reference.get-sum  [read]');
      expect(result.stdout).toContain('    reference.toggle-simulated-logging  [write]');
      expect(result.stdout).toContain('      reference.get-env  [read] (turned off)');
    } finally {
      await reference.close();
    }
  });
});
