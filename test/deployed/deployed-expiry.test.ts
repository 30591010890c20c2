// The expiry flow through the synthesized stack: a held call nobody decides ends expired when its
// approval time runs out. The state machine's TimeoutSecondsPath is real time on the local Step
// Functions, so the configuration gives a short approval time (2s; the schema allows 1s to 14d), on a
// stack of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifies } from '../support/requirements.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { type Assembly, deployedAssembly } from './assembly.js';
import {
  agentAuthorization,
  type Ledger,
  ledgerKey,
  mcpSender,
  pushConfiguration,
  startLedger,
  structured,
  writeOrganization,
} from './organization.js';
import { checkCalls, grantsOfRole, roleOf } from './permissions.js';
import { type DeployedStack, functionId, startDeployedStack } from './stack.js';
import { runtimeActions } from './unused-grants.js';

describe('the synthesized stack, a held call nobody decides', () => {
  let assembly: Assembly;
  let stack: DeployedStack;
  let ledger: Ledger;
  let folder: Awaited<ReturnType<typeof temporaryFolder>>;
  let authorization: Record<string, string>;

  const call = async (name: string, args: Record<string, unknown>) =>
    structured(await mcpSender(stack)('tools/call', { name, arguments: args }, authorization));

  beforeAll(async () => {
    assembly = await deployedAssembly();
    ledger = await startLedger();
    stack = await startDeployedStack(assembly);
    folder = await temporaryFolder('gateway-deployed-expiry-');
    const secretsPrefix = stack.functions.get(functionId(stack, 'Mcp'))?.spec.environment.SECRETS_PREFIX ?? '';
    stack.secrets.put(`${secretsPrefix}ledger-key`, ledgerKey);
    await pushConfiguration(stack, await writeOrganization(folder.path, ledger.url, '${secret:ledger-key}', '2s'));
    authorization = await agentAuthorization(stack);
  });

  afterAll(async () => {
    await stack?.close();
    await ledger?.close();
    await folder?.remove();
  });

  it(
    verifies(
      ['deployed.expiry-flow', 'deployed.permissions-match-calls'],
      'ends a held call expired when its approval time runs out, sending nothing, within its roles',
    ),
    async () => {
      const held = await call('ledger.transfers.create', { to: 'B-2', amount: '900.00' });
      expect(held.status).toBe('pending_approval');
      // The approval run waits out the approval time, then its Expire step ends the call.
      await stack.settled();
      const status = await call('get_execution_status', { execution_id: String(held.execution_id) });
      expect(status.status, stack.functions.get(functionId(stack, 'ApprovalsHeldCallSteps'))?.logs()).toBe('expired');
      expect(ledger.requests.filter((request) => request.method === 'POST')).toEqual([]);

      const grants = new Map(
        [...stack.functions.keys()].map((id) => [id, grantsOfRole(assembly, roleOf(assembly, id), stack.resolve)]),
      );
      expect(checkCalls(stack.calls, grants, runtimeActions).denied).toEqual([]);
    },
  );
});
