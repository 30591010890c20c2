// Decisions racing the approval time, and the reconciler's pass over whatever was lost: the whole
// local runtime in this process (its real store, the ASL on the local Step Functions endpoint, the
// held-call steps function), with the demo ERP counting what was sent.
//
// Long: each race needs its own arrangement of the clock and the runtime.
import { createHash } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Client } from '@modelcontextprotocol/client';
import { v7 } from 'uuid';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { createHeldCallStepsFunction } from '../../functions/held-call-steps.js';
import { lambdaContext } from '../../infra/local/http-front.js';
import { LocalOptions } from '../../infra/local/options.js';
import { type LocalRuntime, startLocalRuntime } from '../../infra/local/runtime.js';
import type { Approver } from '../../shared/approvals/approver.js';
import type { Execution } from '../../shared/executions/execution.js';
import { unrecordedGraceMs, uuidV7Ids } from '../../shared/ids.js';
import { ResultObject } from '../../shared/result.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { RecordNotYetWritten } from '../../shared/use-cases/held-call-steps.js';
import { type RecoveryReport, recoverOpenExecutions } from '../../shared/use-cases/recovery.js';
import { type ApprovalOrg, approvalOrg, eventually } from '../support/approval-org.js';
import { ManualClock } from '../support/clock.js';
import { anExecution, humanStep } from '../support/executions.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens } from '../support/runtime-process.js';

const financeApprover: Approver = { id: 'finance-approver', name: null, groups: ['finance'] };
const bigOrder = { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description: 'Desks' };

let erp: DemoErp;
let org: ApprovalOrg;

beforeAll(async () => {
  erp = await startDemoErp();
  org = await approvalOrg();
});
afterAll(async () => {
  await erp?.close();
  await org?.remove();
});

const startRuntime = async (approvalTime: string): Promise<LocalRuntime> =>
  startLocalRuntime(
    LocalOptions.parse({
      port: '0',
      grpcPort: '0',
      memory: true,
      demoErp: false,
      demoToolsPort: '0',
      config: await org.configWith({ approvalTime, name: `races-${approvalTime}.yaml` }),
    }),
    { variables: { DEMO_ERP_URL: erp.url, DEMO_MCP_URL: 'http://127.0.0.1:9/mcp' }, logLevel: 'ERROR' },
  );

const connect = (runtime: LocalRuntime) => connectAgent(runtime.mcpUrl, demoTokens.procurement);

/** How many orders were held: each is another order (an identical one still waiting would join it). */
let orders = 0;

const hold = async (client: Client): Promise<string> => {
  orders += 1;
  const order = { ...bigOrder, description: `Desks, order ${orders}` };
  const answer = await client.callTool({ name: 'erp.purchase_orders.create', arguments: order });
  const result = ResultObject.parse(answer.structuredContent);
  expect(result.status).toBe('pending_approval');
  return result.execution_id ?? '';
};

const terminal = (runtime: LocalRuntime, executionId: string) =>
  eventually(
    () => runtime.store.get(executionId),
    (execution) => execution !== undefined && !['pending_approval', 'approved'].includes(execution.status),
    60_000,
  );

describe('a decision racing the approval time', () => {
  let runtime: LocalRuntime;
  let client: Client;

  beforeAll(async () => {
    runtime = await startRuntime('1s');
    client = await connect(runtime);
  });
  afterAll(async () => {
    await client?.close();
    await runtime?.stop();
  });

  it(verifies(
    'approvals.decision-vs-expiry',
    'ends in one call or in expired with none, over sixty trials at the boundary',
  ), async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      const ids = await Promise.all(Array.from({ length: 20 }, () => hold(client)));
      const records = await Promise.all(ids.map(async (id) => (await runtime.store.get(id)) as Execution));
      // Each approval lands within 60 ms either side of the moment the call expires.
      const decisions = await Promise.all(
        records.map(async (record, index) => {
          const at = Date.parse(record.expires_at ?? '') - 60 + ((index * 6) % 120);
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
          return decide(runtime.approvals, financeApprover, {
            execution_id: record.execution_id,
            outcome: 'approve',
            arguments_hash: record.arguments_hash ?? '',
          });
        }),
      );
      for (const [index, id] of ids.entries()) {
        const final = await terminal(runtime, id);
        const decision = decisions[index];
        if (final?.status === 'succeeded') {
          expect(decision?.kind).toBe('decided');
          expect(erp.callsFor(id)).toBe(1);
        } else {
          expect(final?.status).toBe('expired');
          expect(decision).toMatchObject({ kind: 'refused' });
          expect(erp.callsFor(id)).toBe(0);
        }
        outcomes.push(final?.status ?? 'missing');
      }
    }
    expect(outcomes).toHaveLength(60);
    expect(outcomes.every((status) => status === 'succeeded' || status === 'expired')).toBe(true);
  }, 180_000);

  it(
    verifies('approvals.decision-pushed', 'a decision reaches its waiting approval run at once: no timer, no poll'),
    async () => {
      const id = await hold(client);
      const record = await eventually(
        () => runtime.store.get(id),
        (execution) => execution?.task_token !== null,
      );
      const decided = await decide(runtime.approvals, financeApprover, {
        execution_id: id,
        outcome: 'approve',
        arguments_hash: record?.arguments_hash ?? '',
      });
      expect(decided.kind).toBe('decided');
      const final = await terminal(runtime, id);
      expect(final?.status).toBe('succeeded');
      // The approval run went from the wait straight on (it did not expire and run from there).
      expect(runtime.stepFunctions.statesEntered(id)).toEqual(['AwaitDecision', 'Decided', 'Execute']);
    },
  );
});

describe('the reconciler’s pass', () => {
  let runtime: LocalRuntime;
  let client: Client;

  beforeAll(async () => {
    runtime = await startRuntime('24h');
    client = await connect(runtime);
  });
  afterAll(async () => {
    await client?.close();
    await runtime?.stop();
  });
  beforeEach(() => erp.reset());

  /** A held call as the store would hold it, written directly (what a lost step leaves behind). */
  const stored = async (overrides: Partial<Execution>): Promise<Execution> => {
    const argumentsJson = JSON.stringify(bigOrder, Object.keys(bigOrder).sort());
    const execution = anExecution({
      execution_id: uuidV7Ids.next(),
      access: 'write',
      // The agent's groups when it asked: an approved call meets the policy again as that agent.
      agent_groups: ['procurement'],
      arguments_json: argumentsJson,
      arguments_hash: createHash('sha256').update(argumentsJson).digest('hex'),
      decision: {
        effect: 'allow',
        reason: null,
        determining: [{ name: 'large-purchase-orders', file: 'policies/demo.cedar', line: 12 }],
        step: humanStep({ staff: 'finance', customer: false }),
        config_version: 'test',
      },
      message: 'Waiting for approval by the organization.',
      ...overrides,
    });
    await runtime.store.create(execution);
    return execution;
  };

  const reconcileAt = async (offsetMs: number): Promise<RecoveryReport> => {
    const work: Promise<unknown>[] = [];
    const clock = new ManualClock(Date.now() + offsetMs);
    const report = await recoverOpenExecutions({ ...runtime.approvals, clock }, 'reconcile', (run) => work.push(run));
    await Promise.all(work);
    return report;
  };

  it(
    verifies(
      'approvals.reconciler',
      'hands a lost decision to its approval run, runs one whose workflow is gone, and settles what is overdue',
    ),
    async () => {
      const minuteAgo = new Date(Date.now() - 120_000).toISOString();
      const inADay = new Date(Date.now() + 86_400_000).toISOString();

      // A decision recorded, but its push never reached the waiting approval run.
      const lostSignal = await hold(client);
      const waiting = await eventually(
        () => runtime.store.get(lostSignal),
        (execution) => execution?.task_token !== null,
      );
      const approved = await runtime.store.transition(waiting as Execution, {
        from: 'pending_approval',
        to: 'approved',
        at: new Date().toISOString(),
        patch: { decided_by: 'finance-approver', decided_at: new Date().toISOString() },
      });
      expect(approved.kind).toBe('applied');
      // Approved, and its approval run gone (a token nothing waits on).
      const orphan = await stored({
        status: 'approved',
        task_token: 'a-token-nothing-waits-on',
        // Approved by finance: the approval it runs on (one approver, recorded before approvals were kept).
        decided_by: 'finance-approver',
        decided_at: minuteAgo,
        expires_at: inADay,
        history: [{ status: 'approved', at: minuteAgo }],
      });
      // Held, but its approval run never started.
      const unstarted = await stored({ created_at: minuteAgo, expires_at: inADay });
      // Held past its approval time.
      const overdue = await stored({ created_at: minuteAgo, expires_at: new Date(Date.now() - 10_000).toISOString() });
      // Claimed long ago and never settled.
      const abandoned = await stored({
        status: 'approved',
        claimed_at: minuteAgo,
        deadline_at: new Date(Date.now() - 60_000).toISOString(),
        decided_at: minuteAgo,
      });

      const report = await reconcileAt(61_000);
      expect(report).toMatchObject({ executed: 2, expired: 1, settled: 1, resumed: 1 });

      expect((await terminal(runtime, lostSignal))?.status).toBe('succeeded');
      expect(erp.callsFor(lostSignal)).toBe(1);
      expect(runtime.stepFunctions.statesEntered(lostSignal)).toEqual(['AwaitDecision', 'Decided', 'Execute']);
      expect((await terminal(runtime, orphan.execution_id))?.status).toBe('succeeded');
      expect(erp.callsFor(orphan.execution_id)).toBe(1);
      const started = await eventually(
        () => runtime.store.get(unstarted.execution_id),
        (execution) => execution?.task_token !== null && execution?.notified_at !== null,
      );
      expect(started?.status).toBe('pending_approval');
      expect(started?.task_token).not.toBeNull();
      expect(await runtime.store.get(overdue.execution_id)).toMatchObject({
        status: 'expired',
        code: 'approval_expired',
      });
      expect(await runtime.store.get(abandoned.execution_id)).toMatchObject({ status: 'unknown', code: 'interrupted' });
      expect(erp.callsFor(overdue.execution_id) + erp.callsFor(abandoned.execution_id)).toBe(0);

      // A second pass finds nothing left to do, and nothing runs twice.
      const again = await reconcileAt(61_000);
      expect(again).toEqual({ resumed: 0, restarted: 0, lost: 0, expired: 0, executed: 0, settled: 0 });
      expect(erp.callsFor(lostSignal) + erp.callsFor(orphan.execution_id)).toBe(2);
    },
  );

  it(
    verifies(
      ['approvals.expiry', 'invoke.at-most-once'],
      'the status tool settles on sight what is overdue, after the timers’ grace',
    ),
    async () => {
      const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
      const expiredLongAgo = await stored({ created_at: ago(60_000), expires_at: ago(6_000) });
      const justExpired = await stored({ created_at: ago(60_000), expires_at: ago(1_000) });
      const staleClaim = await stored({
        status: 'approved',
        claimed_at: ago(60_000),
        deadline_at: ago(6_000),
        decided_at: ago(60_000),
      });
      const status = async (id: string) =>
        ResultObject.parse(
          (await client.callTool({ name: 'get_execution_status', arguments: { execution_id: id } })).structuredContent,
        );
      expect(await status(expiredLongAgo.execution_id)).toMatchObject({ status: 'expired', code: 'approval_expired' });
      // Within the grace the approval run's own timer has the first word.
      expect((await status(justExpired.execution_id)).status).toBe('pending_approval');
      expect(await status(staleClaim.execution_id)).toMatchObject({ status: 'unknown', code: 'interrupted' });
      expect(erp.callsFor(staleClaim.execution_id)).toBe(0);
      // Closed here, so the next pass over this store does not find it.
      await runtime.store.transition(justExpired, {
        from: 'pending_approval',
        to: 'expired',
        at: new Date().toISOString(),
      });
    },
  );

  it(verifies('approvals.reconciler', 'leaves alone what is merely in progress'), async () => {
    const fresh = await stored({ expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    const justDecided = await stored({
      status: 'approved',
      decided_at: new Date().toISOString(),
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const report = await reconcileAt(0);
    expect(report).toEqual({ resumed: 0, restarted: 0, lost: 0, expired: 0, executed: 0, settled: 0 });
    expect((await runtime.store.get(fresh.execution_id))?.status).toBe('pending_approval');
    expect((await runtime.store.get(justDecided.execution_id))?.status).toBe('approved');
    expect(erp.callsFor(justDecided.execution_id)).toBe(0);
  });
});

describe('the held-call steps function', () => {
  let runtime: LocalRuntime;

  beforeAll(async () => {
    runtime = await startRuntime('24h');
  });
  afterAll(async () => {
    await runtime?.stop();
  });

  it(
    verifies(
      'workflow.task-input',
      'refuses a task it cannot read, naming the field, and ends one for an unknown execution',
    ),
    async () => {
      const workflow = createHeldCallStepsFunction({
        services: runtime.approvals,
        logger: new Logger({ serviceName: 'workflow-test', logLevel: 'CRITICAL' }),
      });
      const invoke = (task: unknown) => workflow(task, lambdaContext('workflow-test', 10_000));
      await expect(invoke({ action: 'execute', execution_id: 'not-a-uuid', agent_id: 'a' })).rejects.toThrow(
        /invalid at execution_id/,
      );
      await expect(invoke({ action: 'register', execution_id: uuidV7Ids.next(), agent_id: 'a' })).rejects.toThrow(
        /invalid at task_token/,
      );
      await expect(invoke({ action: 'approve', execution_id: uuidV7Ids.next(), agent_id: 'a' })).rejects.toThrow(
        /invalid at action/,
      );
      await expect(invoke(null)).rejects.toThrow(/invalid at \(root\)/);
      const missing = uuidV7Ids.next();
      await expect(invoke({ action: 'execute', execution_id: missing, agent_id: 'a' })).resolves.toEqual({
        status: 'missing',
      });
      await expect(invoke({ action: 'expire', execution_id: missing, agent_id: 'a' })).resolves.toEqual({
        status: 'missing',
      });
      // A register step retries while the record may still land (the record and the run start
      // together), and ends the run once it can no longer.
      const register = (executionId: string) =>
        invoke({
          action: 'register',
          execution_id: executionId,
          agent_id: 'a',
          task_token: 'token',
          timeout_seconds: 5,
        });
      await expect(register(missing)).rejects.toThrow(RecordNotYetWritten);
      const longMissing = v7({ msecs: Date.now() - unrecordedGraceMs - 1_000 });
      await expect(register(longMissing)).resolves.toEqual({ status: 'missing' });
      expect(await runtime.store.get(missing)).toBeUndefined();
      expect(await runtime.store.get(longMissing)).toBeUndefined();
    },
  );
});
