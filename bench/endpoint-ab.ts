// `npx tsx bench/endpoint-ab.ts [--rounds N] [--calls N]`: the MCP endpoint alone, in this process,
// answering the bench's direct call (a purchase order of 250, run at once) through the plain
// tools/call path and through the SDK's per-request server, and the MCP function (its middleware,
// the API Gateway event in, the Lambda result out) over the plain path, in interleaved rounds over
// the same services: the demo organization with its limits raised, the demo ERP on loopback, the
// in-memory execution store. No HTTP front and no embedded store, so what differs is the
// gateway's own work, measured as this thread's CPU time per call (the ERP's side included, the
// same for all), with the differences round by round. The full bench's own-cost section judges
// the whole path; this tells one change from the noise of the store, which there moves the figure
// more from one run to the next than most changes do.

import { parseArgs } from 'node:util';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { startDemoErp } from '../examples/erp/server.js';
import { createMcpFunction } from '../functions/mcp.js';
import { loadSnapshotFromFile } from '../infra/local/config-files.js';
import { lambdaContext } from '../infra/local/http-front.js';
import { AesSealer } from '../shared/adapters/aes-sealer.js';
import { HttpSystemClient } from '../shared/adapters/http-system-client.js';
import { MemoryExecutionStore } from '../shared/adapters/memory/execution-store.js';
import type { AgentIdentity } from '../shared/auth/agent.js';
import { systemClock } from '../shared/clock.js';
import { formatProblem } from '../shared/config/resolved.js';
import { createMcpEndpoint, type McpEndpoint } from '../shared/edge/mcp/endpoint.js';
import type { McpServices } from '../shared/edge/mcp/server.js';
import { uuidV7Ids } from '../shared/ids.js';
import { RequestGate } from '../shared/limits/request-gate.js';
import { directAmount, toolCall, unlimitedDemo } from './bed.js';
import { median, ms, signedMs } from './stats.js';

const refused = (what: string) => async (): Promise<never> => {
  throw new Error(`the endpoint bench makes no ${what}`);
};

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '12' }, calls: { type: 'string', default: '500' } },
  });
  const rounds = Number(values.rounds);
  const calls = Number(values.calls);
  if (!(rounds >= 2) || !(calls >= 1)) throw new Error('--rounds takes 2 or more, --calls 1 or more');
  const erp = await startDemoErp({ host: '127.0.0.1', port: 0 });
  const org = await unlimitedDemo();
  const endpoints: McpEndpoint[] = [];
  try {
    const loaded = await loadSnapshotFromFile(org.config, {
      DEMO_ERP_URL: erp.url,
      DEMO_CALL_TOOL_URL: 'http://127.0.0.1:9',
      DEMO_MCP_URL: 'http://127.0.0.1:9/mcp',
    });
    if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
    const { snapshot } = loaded;
    const services: McpServices = {
      store: new MemoryExecutionStore(),
      ids: uuidV7Ids,
      clock: systemClock,
      controlPlane: { current: async () => ({ kind: 'active', snapshot }) },
      sealer: new AesSealer(Buffer.alloc(32, 7)),
      systems: new HttpSystemClient(),
      toolServers: { call: refused('tool-server call') },
      log: { info: () => undefined, warn: () => undefined },
      approvalRuns: { start: refused('held call'), signal: refused('held call') },
      customerUrl: (id) => `http://127.0.0.1/customer/calls/${id}`,
    };
    const options = { allowedHostnames: null, allowedOrigins: [] };
    const variants = [
      {
        name: 'plain',
        endpoint: createMcpEndpoint(services, { ...options, requestGate: new RequestGate(systemClock) }),
      },
      {
        name: 'SDK',
        endpoint: createMcpEndpoint(services, {
          ...options,
          requestGate: new RequestGate(systemClock),
          plainToolCalls: false,
        }),
      },
    ] as const;
    endpoints.push(...variants.map((variant) => variant.endpoint));
    const agent: AgentIdentity = { id: 'procurement-agent', groups: ['procurement'], customerId: null };
    const { body, headers } = toolCall(directAmount);
    const checked = (text: string): void => {
      if (!text.includes('"status":"succeeded"')) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
    };
    const viaEndpoint = (endpoint: McpEndpoint) => async (): Promise<void> => {
      const response = await endpoint.handle(
        new Request('http://127.0.0.1/mcp', { method: 'POST', headers }),
        agent,
        body,
      );
      checked(await response.text());
    };
    // The MCP function as Lambda runs it, with the caller the agent authorizer passes on (here the
    // demo agent's entry, as the local front names it).
    const mcp = createMcpFunction({
      services,
      logger: new Logger({ serviceName: 'endpoint-ab', logLevel: 'SILENT' }),
      allowedHostnames: null,
      allowedOrigins: [],
      publicUrl: null,
      requestGate: new RequestGate(systemClock),
    });
    const authorizer = {
      authorizer: { lambda: { agentId: agent.id } },
    };
    const viaFunction = async (): Promise<void> => {
      const event: APIGatewayProxyEventV2 = {
        version: '2.0',
        routeKey: 'ANY /mcp',
        rawPath: '/mcp',
        rawQueryString: '',
        headers: { ...headers, host: '127.0.0.1', 'content-length': String(Buffer.byteLength(body)) },
        body,
        isBase64Encoded: false,
        requestContext: {
          accountId: '000000000000',
          apiId: 'local',
          domainName: '127.0.0.1',
          domainPrefix: 'localhost',
          http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: '' },
          requestId: 'endpoint-ab',
          routeKey: 'ANY /mcp',
          stage: '$default',
          time: new Date().toUTCString(),
          timeEpoch: Date.now(),
          ...authorizer,
        },
      };
      checked(String((await mcp(event, lambdaContext('mcp', 30_000))).body));
    };
    const runs = [
      { name: 'function', one: viaFunction },
      ...variants.map((variant) => ({ name: variant.name, one: viaEndpoint(variant.endpoint) })),
    ];
    // Untimed: the JIT's warm-up, for each.
    for (const run of runs) for (let call = 0; call < 1500; call += 1) await run.one();
    erp.reset();
    const cpu = new Map<string, number[]>(runs.map((run) => [run.name, []]));
    for (let round = 0; round < rounds; round += 1) {
      // Each round starts with the next one, so none always runs first.
      for (let turn = 0; turn < runs.length; turn += 1) {
        const run = runs[(turn + round) % runs.length];
        if (run === undefined) continue;
        const before = process.threadCpuUsage();
        for (let call = 0; call < calls; call += 1) await run.one();
        const used = process.threadCpuUsage(before);
        cpu.get(run.name)?.push((used.user + used.system) / 1000 / calls);
        erp.reset();
      }
    }
    const fn = cpu.get('function') ?? [];
    const plain = cpu.get('plain') ?? [];
    const sdk = cpu.get('SDK') ?? [];
    const differences = (of: number[], from: number[]) => of.map((value, index) => value - (from[index] ?? Number.NaN));
    const line = (what: string, values: number[]) =>
      `   ${what}, round by round: ${values.map((value) => signedMs(value)).join(' ')}; median ${signedMs(median(values), 3)}\n`;
    process.stdout.write(
      `MCP endpoint alone, ${rounds} interleaved rounds × ${calls} direct calls, CPU per call (median of rounds):\n` +
        `   the MCP function (event in, result out) ${ms(median(fn), 3)}; the endpoint, plain tools/call ` +
        `${ms(median(plain), 3)}, through the SDK's server ${ms(median(sdk), 3)}\n` +
        line('SDK − plain', differences(sdk, plain)) +
        line('function − plain endpoint', differences(fn, plain)),
    );
  } finally {
    for (const endpoint of endpoints) await endpoint.close();
    await org.remove();
    await erp.close();
  }
};

await main();
