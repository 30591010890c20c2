// The probe kit of `npm run test:deployed`: the same probes it runs against a deployed stack pass
// against the local runtime (the demo organization, the procurement agent's demo token) and leave
// no held call for approvers; against a gateway that is wrong they fail, naming what, and the
// command exits non-zero without printing the agent's secret or token.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { delimiter, join } from 'node:path';
import type { FetchLike } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, listen } from '../../infra/local/net.js';
import { LocalOptions } from '../../infra/local/options.js';
import { type LocalRuntime, startLocalRuntime } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
import { runProbes } from '../../scripts/deployed-probes.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

const allProbes = [
  'refused-token',
  'metadata',
  'connect',
  'tools-list',
  'direct-read',
  'held-call',
  'held-status',
  'withdraw',
];

let runtime: LocalRuntime;

beforeAll(async () => {
  runtime = await startLocalRuntime(
    LocalOptions.parse({
      port: '0',
      grpcPort: '0',
      erpPort: '0',
      demoToolsPort: '0',
      memory: true,
      config: projectPath('examples/gateway.config.yaml'),
    }),
    // The demo MCP server is not needed: the probes call the ERP.
    { variables: { DEMO_MCP_URL: 'http://127.0.0.1:9/mcp' }, logLevel: 'ERROR' },
  );
});
afterAll(async () => {
  await runtime?.stop();
});

describe('the probes against the local runtime', () => {
  it(verifies('deploy.probe-kit', 'pass, and withdraw the call they held'), async () => {
    const results = await runProbes({
      mcpUrl: runtime.mcpUrl,
      token: demoTokens.procurement,
      authorizationServers: false,
    });
    expect(results.filter((result) => result.outcome !== 'pass')).toEqual([]);
    expect(results.map((result) => result.name)).toEqual(allProbes);
    // Nothing is left for approvers: the call it held is rejected, withdrawn by its agent.
    const { items } = await runtime.store.listByAgent('procurement-agent', { limit: 10 });
    expect(items.map((execution) => [execution.tool, execution.status, execution.code])).toEqual([
      ['erp.purchase_orders.create', 'rejected', 'withdrawn'],
      ['erp.shipments.track', 'succeeded', null],
    ]);
  });

  it(verifies('deploy.probe-kit-failures', 'fail on a gateway that serves no metadata document'), async () => {
    // The same gateway with its /.well-known/ routes gone, as a stack missing that route would be.
    const withoutMetadata: FetchLike = (url, init) =>
      new URL(url).pathname.startsWith('/.well-known/')
        ? Promise.resolve(new Response('Not Found', { status: 404 }))
        : fetch(url, init);
    const results = await runProbes({
      mcpUrl: runtime.mcpUrl,
      token: demoTokens.procurement,
      authorizationServers: false,
      fetch: withoutMetadata,
    });
    const metadata = results.find((result) => result.name === 'metadata');
    expect(metadata?.outcome).toBe('fail');
    expect(metadata?.detail).toMatch(/\/\.well-known\/oauth-protected-resource\/mcp answered 404$/);
    expect(results.filter((result) => result.outcome !== 'pass').map((result) => result.name)).toEqual(['metadata']);
  });
});

describe('npm run test:deployed', () => {
  const clientSecret = 'probe-client-secret-81f2c7';
  const issuedToken = 'probe-issued-token-4d0b9e';
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let permissive: Listening<ReturnType<typeof createServer>>;
  const tokenRequests: string[] = [];

  beforeAll(async () => {
    folder = await temporaryFolder('gateway-probes-');
    // A gateway that lets any token in (and serves no metadata), with a token endpoint that
    // checks the client's credentials as Cognito's does.
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/oauth2/token') {
          tokenRequests.push(`${request.headers.authorization} ${Buffer.concat(chunks).toString('utf8')}`);
          const basic = `Basic ${Buffer.from(`probe-agent:${clientSecret}`).toString('base64')}`;
          response.writeHead(request.headers.authorization === basic ? 200 : 401, {
            'content-type': 'application/json',
          });
          response.end(JSON.stringify({ access_token: issuedToken, token_type: 'Bearer', expires_in: 3600 }));
          return;
        }
        if (request.url !== '/mcp') {
          response.writeHead(404).end();
          return;
        }
        // Whatever is asked, an empty result for its id.
        const asked: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        const id = typeof asked === 'object' && asked !== null && 'id' in asked ? asked.id : null;
        response.writeHead(id === null ? 202 : 200, { 'content-type': 'application/json' });
        response.end(id === null ? undefined : JSON.stringify({ jsonrpc: '2.0', id, result: {} }));
      });
    });
    permissive = await listen(server, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await permissive?.close();
    await folder?.remove();
  });

  const kit = (args: string[], env: Record<string, string> = {}) =>
    runProcess(process.execPath, ['--import', 'tsx', projectPath('scripts/test-deployed.ts'), ...args], {
      cwd: projectPath(),
      env: { ...process.env, GATEWAY_PROBE_CLIENT_SECRET: clientSecret, ...env },
      timeoutMs: 60_000,
    });

  it(
    verifies('deploy.probe-kit-failures', 'exits 1 on a gateway that lets any token in, printing no secret'),
    async () => {
      const base = `http://127.0.0.1:${permissive.port}`;
      // No AWS account here: the AWS CLI is played by a script that answers DescribeStacks.
      const described = {
        Stacks: [
          {
            Outputs: [
              { OutputKey: 'McpUrl', OutputValue: `${base}/mcp` },
              { OutputKey: 'AgentTokenUrl', OutputValue: `${base}/oauth2/token` },
              { OutputKey: 'AgentScope', OutputValue: 'approval-gateway/invoke' },
            ],
          },
        ],
      };
      const bin = join(folder.path, 'bin');
      await mkdir(bin);
      await writeFile(join(folder.path, 'described.json'), JSON.stringify(described));
      await writeFile(
        join(bin, 'aws'),
        `#!/bin/sh\necho "$@" > "${folder.path}/aws-args"\ncat "${folder.path}/described.json"\n`,
        { mode: 0o755 },
      );
      const run = await kit(['--stack', 'ProbeStack', '--client-id', 'probe-agent'], {
        PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      });
      expect(await readFile(join(folder.path, 'aws-args'), 'utf8')).toBe(
        'cloudformation describe-stacks --stack-name ProbeStack --output json\n',
      );
      expect(run.code, run.output).toBe(1);
      const lines = run.stdout.split('\n');
      expect(lines).toContain(
        `PASS  token          client probe-agent got a token for approval-gateway/invoke from ${base}/oauth2/token`,
      );
      expect(lines).toContain('FAIL  refused-token  a token no issuer signed was answered 200, not 401');
      expect(lines).toContain('SKIP  metadata       no challenge named the document');
      expect(lines.at(-2)).toMatch(/^\d+ of 9 probes did not pass\.$/);
      expect(tokenRequests).toEqual([
        `Basic ${Buffer.from(`probe-agent:${clientSecret}`).toString('base64')} grant_type=client_credentials&scope=approval-gateway%2Finvoke`,
      ]);
      expect(run.output).not.toContain(clientSecret);
      expect(run.output).not.toContain(issuedToken);
    },
  );

  it(verifies('deploy.probe-kit-failures', 'names a missing stack output and exits 2'), async () => {
    const outputs = join(folder.path, 'no-mcp-url.json');
    await writeFile(outputs, JSON.stringify({ ApprovalGateway: { AgentScope: 'approval-gateway/invoke' } }));
    const run = await kit(['--outputs', outputs, '--client-id', 'probe-agent']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^The stack's output McpUrl is missing\n/);
    expect(run.output).not.toContain(clientSecret);
  });
});
