// Nothing lost under a store fault: the runtime (a real process) is killed inside the embedded
// store, after a sent write's call has left the index of open calls and before its record says
// so. The demo ERP runs in this process, so it outlives the gateway and its log of calls is the
// system's own account of what was sent.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { projectPath } from '../../infra/paths.js';
import { ResultObject } from '../../shared/result.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

let erp: DemoErp;
let folder: Awaited<ReturnType<typeof temporaryFolder>>;
beforeAll(async () => {
  erp = await startDemoErp();
  folder = await temporaryFolder('gateway-store-faults-');
});
afterAll(async () => {
  await erp?.close();
  await folder?.remove();
});

const startGateway = (dataDir: string, env: Record<string, string> = {}) =>
  startRuntimeProcess(
    ['--data-dir', dataDir, '--no-demo-erp', '--config', projectPath('examples/gateway.config.yaml')],
    { DEMO_ERP_URL: erp.url, POWERTOOLS_LOG_LEVEL: 'INFO', ...env },
  );

describe('a gateway killed between a record and its index entry', () => {
  it(
    verifies(
      'local.recovery-from-records',
      'settles a sent write the index no longer lists as unknown, never sending it again',
    ),
    async () => {
      const dataDir = join(folder.path, 'data');
      const doomed = await startGateway(dataDir, { GATEWAY_CRASH_AT: 'between-index-and-record' });
      const agent = await connectAgent(doomed.mcpUrl, demoTokens.procurement);
      await expect(
        agent.callTool({
          name: 'erp.purchase_orders.create',
          arguments: { vendor_id: 'V-100', amount: '10', currency: 'EUR' },
        }),
      ).rejects.toThrow();
      const exited = await doomed.stop();
      expect(exited.code).not.toBe(0);
      // The ERP did the write once; the gateway died recording its outcome.
      const [sent] = erp.calls();
      expect(erp.calls()).toHaveLength(1);
      const executionId = sent?.requestId ?? '';
      expect(executionId).not.toBe('');

      const revived = await startGateway(dataDir);
      try {
        // Recovery at start found the call from its record and settled it at once.
        expect(revived.output()).toMatch(/open calls recovered.*"settled":1/);
        const status = await connectAgent(revived.mcpUrl, demoTokens.procurement);
        const answer = ResultObject.parse(
          (await status.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } }))
            .structuredContent,
        );
        await status.close();
        expect(answer).toMatchObject({ status: 'unknown', code: 'interrupted', execution_id: executionId });
        expect(erp.callsFor(executionId)).toBe(1);
        expect(erp.calls()).toHaveLength(1);
      } finally {
        await revived.stop();
      }
    },
  );
});
