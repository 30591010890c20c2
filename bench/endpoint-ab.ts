// `npx tsx bench/endpoint-ab.ts [--rounds N] [--calls N]`: the MCP endpoint alone, in this process,
// answering the bench's direct call (a purchase order of 250, run at once) through the plain
// tools/call path and through the SDK's per-request server, in interleaved rounds over the same
// services: the demo organization with its limits raised, the demo ERP on loopback, the in-memory
// execution store. No HTTP front and no embedded store, so what differs between the two is the
// endpoint's own work, measured as this thread's CPU time per call (the ERP's side included, the
// same for both), with the difference round by round. The full bench's own-cost section judges
// the whole path; this tells one change of the endpoint from the noise of the store.
import { parseArgs } from 'node:util';
import { startDemoErp } from '../examples/erp/server.js';
import { loadSnapshotFromFile } from '../infra/local/config-files.js';
import { AesSealer } from '../shared/adapters/aes-sealer.js';
import { HttpSystemClient } from '../shared/adapters/http-system-client.js';
import { MemoryExecutionStore } from '../shared/adapters/memory/execution-store.js';
import type { AgentIdentity } from '../shared/auth/agent.js';
import { systemClock } from '../shared/clock.js';
import { formatProblem } from '../shared/config/resolved.js';
import { uuidV7Ids } from '../shared/ids.js';
import { RequestGate } from '../shared/limits/request-gate.js';
import { createMcpEndpoint, type McpEndpoint } from '../shared/mcp/endpoint.js';
import type { McpServices } from '../shared/mcp/server.js';
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
    const one = async (endpoint: McpEndpoint): Promise<void> => {
      const response = await endpoint.handle(
        new Request('http://127.0.0.1/mcp', { method: 'POST', headers }),
        agent,
        body,
      );
      const text = await response.text();
      if (!text.includes('"status":"succeeded"')) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
    };
    // Untimed: the JIT's warm-up, for both.
    for (const variant of variants) for (let call = 0; call < 1500; call += 1) await one(variant.endpoint);
    erp.reset();
    const cpu = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
    for (let round = 0; round < rounds; round += 1) {
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
        const before = process.threadCpuUsage();
        for (let call = 0; call < calls; call += 1) await one(variant.endpoint);
        const used = process.threadCpuUsage(before);
        cpu.get(variant.name)?.push((used.user + used.system) / 1000 / calls);
        erp.reset();
      }
    }
    const plain = cpu.get('plain') ?? [];
    const sdk = cpu.get('SDK') ?? [];
    const differences = sdk.map((value, index) => value - (plain[index] ?? Number.NaN));
    process.stdout.write(
      `MCP endpoint alone, ${rounds} interleaved rounds × ${calls} direct calls, CPU per call (median of rounds):\n` +
        `   plain tools/call ${ms(median(plain), 3)}, through the SDK's server ${ms(median(sdk), 3)}\n` +
        `   SDK − plain, round by round: ${differences.map((value) => signedMs(value)).join(' ')}; ` +
        `median ${signedMs(median(differences), 3)}\n`,
    );
  } finally {
    for (const endpoint of endpoints) await endpoint.close();
    await org.remove();
    await erp.close();
  }
};

await main();
