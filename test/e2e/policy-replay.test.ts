// policy:replay over the history the local runtime recorded: the demo's agent makes calls through
// `npm start`'s entry point, then an admin replays them, through the running gateway's store, with
// a proposal that holds the demo echo tool for operations; the counts printed are the calls made.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../infra/paths.js';
import { ResultObject } from '../../shared/result.js';
import { demoAddresses } from '../support/demo-environment.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';
import { runProcess } from '../support/spawn.js';

describe('npm run policy:replay on the local runtime', () => {
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let runtime: RuntimeProcess;
  let procurement: Client;

  beforeAll(async () => {
    folder = await temporaryFolder('gateway-policy-replay-e2e-');
    runtime = await startRuntimeProcess(['--data-dir', join(folder.path, 'data')]);
    procurement = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
  });
  afterAll(async () => {
    await procurement?.close();
    await runtime?.stop();
    await folder?.remove();
  });

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = ResultObject.parse((await procurement.callTool({ name, arguments: args })).structuredContent);
    expect(result.status, JSON.stringify(result)).toBe('succeeded');
    return result.execution_id ?? '';
  };

  it(
    verifies('replay.local-runtime', 'a proposal that holds the echo tool moves exactly the echo calls made'),
    async () => {
      const first = await call('everything.echo', { message: 'one' });
      const second = await call('everything.echo', { message: 'two' });
      await call('erp.purchase_orders.create', {
        vendor_id: 'V-100',
        amount: '200',
        currency: 'EUR',
        description: 'Pens',
      });
      const demo = await readFile(projectPath('examples/policies/demo.cedar'), 'utf8');
      const held = demo.replace(
        '@id("demo-tools")\n',
        '@id("demo-tools")\n@approval("staff")\n@approvers("operations")\n',
      );
      expect(held).not.toBe(demo);
      const proposal = join(folder.path, 'proposed.cedar');
      await writeFile(proposal, held);

      const run = await runProcess(
        process.execPath,
        ['--import', 'tsx', projectPath('scripts/policy-replay.ts'), '--policies', proposal, '--offline'],
        {
          cwd: projectPath(),
          env: { ...process.env, ...demoAddresses, GATEWAY_DATA_DIR: join(folder.path, 'data') },
        },
      );
      expect(run.code, run.output).toBe(0);
      expect(run.stdout).toContain("the running gateway's store");
      expect(run.stdout).toMatch(/3 calls recorded, 3 decided again \(1 unchanged\), 0 not replayable/);
      expect(run.stdout).toContain('  everything.echo: 2 decided again, 0 unchanged\n');
      expect(run.stdout).toMatch(new RegExp(`^ {4}run → held +2 {2}e\\.g\\. ${second}, ${first}$`, 'm'));
      expect(run.stdout).not.toContain('erp.purchase_orders.create:');
      expect(run.stdout).toMatch(/^ {2}operations +0 +0\.29$/m);
    },
  );
});
