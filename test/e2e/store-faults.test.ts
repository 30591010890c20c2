// Nothing lost under a store fault: the runtime (a real process) is killed inside the embedded
// store, after a sent write's call has left the index of open calls and before its record says
// so; and a data folder that refuses writes (made immutable) refuses calls for a while, without
// ending the gateway. The demo ERP runs in this process, so it outlives the gateway and its log of calls is the
// system's own account of what was sent.
import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { projectPath } from '../../infra/paths.js';
import { storeUnavailableMessage } from '../../shared/errors.js';
import { ResultObject } from '../../shared/result.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

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
      ['local.recovery-from-records', 'settle.cli', 'settle.agent-answer', 'settle.audit'],
      'settles a sent write the index no longer lists as unknown, never sending it again; the operator settles it while the gateway runs, and the agent and the audit read it settled',
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
        await settledThroughTheRunningGateway(revived, dataDir, executionId);
      } finally {
        await revived.stop();
      }
    },
  );
});

const executionsCommand = (args: readonly string[]) =>
  runProcess(process.execPath, ['--import', 'tsx', projectPath('scripts/executions.ts'), ...args], {
    cwd: projectPath(),
  });

/**
 * The operator found the order in the ERP and settles the call while the gateway runs (the command
 * goes through its store): the agent reads it as settled, the audit keeps its history and who did it.
 */
const settledThroughTheRunningGateway = async (
  runtime: Awaited<ReturnType<typeof startGateway>>,
  dataDir: string,
  executionId: string,
): Promise<void> => {
  const reason = `the order of ${executionId} is in the ERP`;
  const settle = await executionsCommand([
    'settle',
    executionId,
    '--data-dir',
    dataDir,
    '--outcome',
    'succeeded',
    '--reason',
    reason,
  ]);
  expect(settle.code, settle.output).toBe(0);
  const agent = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
  const read = await agent.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } });
  await agent.close();
  expect(ResultObject.parse(read.structuredContent)).toMatchObject({ status: 'succeeded', execution_id: executionId });
  // The operator's words are for the audit, never for the agent.
  expect(JSON.stringify(read)).not.toContain(reason);
  const listed = await executionsCommand(['--data-dir', dataDir, '--json', '--agent', 'procurement-agent']);
  expect(listed.code, listed.output).toBe(0);
  const line = listed.stdout
    .split('\n')
    .filter((text) => text.includes(executionId))
    .map((text) => JSON.parse(text))[0];
  expect(line).toMatchObject({
    status: 'succeeded',
    settlement: { outcome: 'succeeded', by: userInfo().username, reason, unknown_code: 'interrupted' },
  });
  expect(line.history.map((change: { status: string }) => change.status)).toEqual(['approved', 'unknown', 'succeeded']);
  // Settled, not sent again.
  expect(erp.callsFor(executionId)).toBe(1);
};

/** Whether this machine lets the test make a folder immutable (chattr +i: root, and a file system that has the flag). */
const canMakeImmutable = ((): boolean => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('chattr', ['-i', projectPath('package.json')], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const immutable = (folder: string, on: boolean) => execFileSync('chattr', ['-R', on ? '+i' : '-i', folder]);

describe('a data folder that refuses writes', () => {
  it.skipIf(!canMakeImmutable)(
    verifies(
      'local.store-faults-answered',
      'refuses calls with a temporary error and nothing sent, keeps answering reads, and works again by itself',
    ),
    async () => {
      const dataDir = join(folder.path, 'immutable');
      const runtime = await startGateway(dataDir);
      const agent = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
      const order = {
        name: 'erp.purchase_orders.create',
        arguments: { vendor_id: 'V-100', amount: '10', currency: 'EUR' },
      };
      const sentBefore = erp.calls().length;
      const first = ResultObject.parse((await agent.callTool(order)).structuredContent);
      expect(first.status).toBe('succeeded');
      try {
        immutable(join(dataDir, 'dynamodb'), true);
        await expect(agent.callTool(order)).rejects.toThrow(storeUnavailableMessage);
        expect(erp.calls()).toHaveLength(sentBefore + 1);
        const status = await agent.callTool({
          name: 'get_execution_status',
          arguments: { execution_id: first.execution_id ?? '' },
        });
        expect(ResultObject.parse(status.structuredContent).status).toBe('succeeded');
        expect(runtime.output()).toContain('the local store cannot read or write its data folder');
      } finally {
        immutable(join(dataDir, 'dynamodb'), false);
      }
      const after = ResultObject.parse((await agent.callTool(order)).structuredContent);
      expect(after.status).toBe('succeeded');
      expect(runtime.output()).toContain('the local store works again');
      await agent.close();
      const stopped = await runtime.stop('SIGTERM');
      expect(stopped.code, stopped.output).toBe(0);
    },
  );
});
