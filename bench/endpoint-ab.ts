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
import { directAmount, toolCall } from './bed.js';
import { unlimitedDemo } from './demo-runtime.js';
import { median, ms, signedMs } from './stats.js';

const refused = (what: string) => async (): Promise<never> => {
  throw new Error(`the endpoint bench makes no ${what}`);
};

/** `--rounds` and `--calls`, checked. */
const roundsAndCalls = (): { rounds: number; calls: number } => {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '12' }, calls: { type: 'string', default: '500' } },
  });
  const rounds = Number(values.rounds);
  const calls = Number(values.calls);
  if (!(rounds >= 2) || !(calls >= 1)) throw new Error('--rounds takes 2 or more, --calls 1 or more');
  return { rounds, calls };
};

/** The demo organization's configuration against the ERP on loopback, with the in-memory store. */
const benchServices = async (config: string, erpUrl: string): Promise<McpServices> => {
  const loaded = await loadSnapshotFromFile(config, {
    DEMO_ERP_URL: erpUrl,
    DEMO_CALL_TOOL_URL: 'http://127.0.0.1:9',
    DEMO_MCP_URL: 'http://127.0.0.1:9/mcp',
  });
  if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
  const { snapshot } = loaded;
  const log = { info: () => undefined, warn: () => undefined };
  return {
    store: new MemoryExecutionStore(log),
    ids: uuidV7Ids,
    clock: systemClock,
    controlPlane: { current: async () => ({ kind: 'active', snapshot }) },
    sealer: new AesSealer(Buffer.alloc(32, 7)),
    systems: new HttpSystemClient(),
    toolServers: { call: refused('tool-server call') },
    log,
    approvalRuns: { start: refused('held call'), signal: refused('held call') },
    customerUrl: (id) => `http://127.0.0.1/customer/calls/${id}`,
  };
};

/** The endpoint over the plain tools/call path, and through the SDK's per-request server. */
const endpointVariants = (services: McpServices) => {
  const options = { allowedHostnames: null, allowedOrigins: [] };
  return [
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
};

const agent: AgentIdentity = { id: 'procurement-agent', groups: ['procurement'], customerId: null };

const checked = (text: string): void => {
  if (!text.includes('"status":"succeeded"')) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
};

/** What the agent authorizer passes on to the MCP function. */
const authorizer = { authorizer: { lambda: { agentId: agent.id } } };

/** The API Gateway event of the direct call, with the caller the agent authorizer passes on. */
const functionEvent = (headers: Record<string, string>, body: string): APIGatewayProxyEventV2 => ({
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
});

/**
 * The three ways of answering the direct call: the MCP function as Lambda runs it (here the demo
 * agent's entry, as the local front names it), and the endpoint's two paths.
 */
const directCallRuns = (services: McpServices, variants: ReturnType<typeof endpointVariants>) => {
  const { body, headers } = toolCall(directAmount);
  const viaEndpoint = (endpoint: McpEndpoint) => async (): Promise<void> => {
    const response = await endpoint.handle(
      new Request('http://127.0.0.1/mcp', { method: 'POST', headers }),
      agent,
      body,
    );
    checked(await response.text());
  };
  const mcp = createMcpFunction({
    services,
    logger: new Logger({ serviceName: 'endpoint-ab', logLevel: 'SILENT' }),
    allowedHostnames: null,
    allowedOrigins: [],
    publicUrl: null,
    requestGate: new RequestGate(systemClock),
  });
  const viaFunction = async (): Promise<void> => {
    checked(String((await mcp(functionEvent(headers, body), lambdaContext('mcp', 30_000))).body));
  };
  return [
    { name: 'function', one: viaFunction },
    ...variants.map((variant) => ({ name: variant.name, one: viaEndpoint(variant.endpoint) })),
  ];
};

/** Each run's CPU per call, round by round, after an untimed warm-up; the ERP reset between turns. */
const cpuPerCall = async (
  runs: readonly { name: string; one: () => Promise<void> }[],
  { rounds, calls }: { rounds: number; calls: number },
  erp: { reset(): void },
): Promise<Map<string, number[]>> => {
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
  return cpu;
};

const report = (cpu: Map<string, number[]>, { rounds, calls }: { rounds: number; calls: number }): string => {
  const fn = cpu.get('function') ?? [];
  const plain = cpu.get('plain') ?? [];
  const sdk = cpu.get('SDK') ?? [];
  const differences = (of: number[], from: number[]) => of.map((value, index) => value - (from[index] ?? Number.NaN));
  const line = (what: string, values: number[]) =>
    `   ${what}, round by round: ${values.map((value) => signedMs(value)).join(' ')}; median ${signedMs(median(values), 3)}\n`;
  return (
    `MCP endpoint alone, ${rounds} interleaved rounds × ${calls} direct calls, CPU per call (median of rounds):\n` +
    `   the MCP function (event in, result out) ${ms(median(fn), 3)}; the endpoint, plain tools/call ` +
    `${ms(median(plain), 3)}, through the SDK's server ${ms(median(sdk), 3)}\n` +
    line('SDK − plain', differences(sdk, plain)) +
    line('function − plain endpoint', differences(fn, plain))
  );
};

const main = async (): Promise<void> => {
  const counts = roundsAndCalls();
  const erp = await startDemoErp({ host: '127.0.0.1', port: 0 });
  const org = await unlimitedDemo();
  const endpoints: McpEndpoint[] = [];
  try {
    const services = await benchServices(org.config, erp.url);
    const variants = endpointVariants(services);
    endpoints.push(...variants.map((variant) => variant.endpoint));
    const cpu = await cpuPerCall(directCallRuns(services, variants), counts, erp);
    process.stdout.write(report(cpu, counts));
  } finally {
    for (const endpoint of endpoints) await endpoint.close();
    await org.remove();
    await erp.close();
  }
};

await main();
