// Recovery as a use-case, in both modes: the local runtime's restart (no approval run survived, no
// one else is sending) and the AWS reconciler's pass (runs may be alive; only what is overdue or
// lost is acted on). Crashes are made the way they happen: a system call that never answers.
import { describe, expect, it } from 'vitest';
import { newExecutionRecord } from '../../shared/executions/execution.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { registerApproval } from '../../shared/use-cases/held-call-steps.js';
import {
  maxApprovalRunRestarts,
  recoverOpenExecutions,
  registerGraceMs,
  signalGraceMs,
} from '../../shared/use-cases/recovery.js';
import { claimGraceMs } from '../../shared/use-cases/run-once.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  financeApprover,
  holdLargeOrder,
  procurementAgent,
  systemTimeoutMs,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

/** Recovery's background work, kept so the test can wait for it. */
const backgroundOf = () => {
  const work: Promise<unknown>[] = [];
  return { run: (promise: Promise<unknown>) => void work.push(promise), settled: () => Promise.all(work) };
};

const approveHeld = async (bed: UseCaseBed, executionId: string, hash: string | null) => {
  const decided = await decide(bed.deps, financeApprover, {
    execution_id: executionId,
    outcome: 'approve',
    arguments_hash: hash ?? '',
  });
  if (decided.kind === 'refused') throw new Error(`expected the approval to hold: ${decided.reason}`);
};

/** A direct write whose system call never answers: the gateway stops with the claim recorded. */
const abandonedWrite = async (bed: UseCaseBed): Promise<string> => {
  bed.behaviour = { kind: 'hang' };
  void callTool(bed.deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme', amount: '10' }));
  // Wait (a bounded number of turns) until the claim is recorded and the request is out.
  for (let turn = 0; bed.sent.length === 0; turn += 1) {
    if (turn > 100) throw new Error('the write was never sent');
    await new Promise((resolve) => setImmediate(resolve));
  }
  bed.behaviour = { kind: 'answer', result: { kind: 'timeout', sent: true } };
  return bed.sent[0]?.headers['x-request-id'] ?? '';
};

describe('recovery after a restart', () => {
  it(
    verifies(
      'approvals.restart-resumes',
      'resumes pending calls with their remaining time and expires the overdue ones',
    ),
    async () => {
      const bed = await useCaseBed();
      const overdue = await holdLargeOrder(bed);
      bed.clock.advance(approvalMs / 2);
      const waiting = await holdLargeOrder(bed, '1600');
      bed.clock.advance(approvalMs / 2);
      bed.started.length = 0;

      const report = await recoverOpenExecutions(bed.deps, 'restart');

      expect(report).toEqual({ resumed: 1, restarted: 0, lost: 0, expired: 1, executed: 0, settled: 0 });
      expect(await bed.record(overdue.execution_id)).toMatchObject({ status: 'expired', code: 'approval_expired' });
      expect(bed.started).toEqual([
        {
          execution_id: waiting.execution_id,
          agent_id: procurementAgent.id,
          timeout_seconds: approvalMs / 2000,
          restarts: 0,
        },
      ]);
      expect(bed.sent).toEqual([]);
    },
  );

  it(verifies('approvals.restart-resumes', 'runs an approved call not yet claimed, once'), async () => {
    const bed = await useCaseBed();
    const held = await holdLargeOrder(bed);
    await approveHeld(bed, held.execution_id, held.arguments_hash);
    const background = backgroundOf();

    const report = await recoverOpenExecutions(bed.deps, 'restart', background.run);
    await background.settled();

    expect(report).toEqual({ resumed: 0, restarted: 0, lost: 0, expired: 0, executed: 1, settled: 0 });
    expect(await bed.record(held.execution_id)).toMatchObject({ status: 'succeeded' });
    expect(bed.sentFor(held.execution_id)).toHaveLength(1);
    // A second restart finds nothing open.
    expect(await recoverOpenExecutions(bed.deps, 'restart', background.run)).toEqual({
      resumed: 0,
      restarted: 0,
      lost: 0,
      expired: 0,
      executed: 0,
      settled: 0,
    });
    expect(bed.sent).toHaveLength(1);
  });

  it(
    verifies(
      'invoke.at-most-once',
      'settles an abandoned claim at once, never sending again: unknown for a write, failed for a read',
    ),
    async () => {
      const bed = await useCaseBed();
      const write = await abandonedWrite(bed);
      // A held read approved and claimed when the gateway stopped.
      const read = newExecutionRecord({
        execution_id: bed.deps.ids.next(),
        agent_id: procurementAgent.id,
        customer_id: null,
        tool: tools.list,
        access: 'read',
        status: 'approved',
        created_at: new Date(bed.clock.now()).toISOString(),
        claimed_at: new Date(bed.clock.now()).toISOString(),
        deadline_at: new Date(bed.clock.now() + systemTimeoutMs).toISOString(),
      });
      await bed.store.create(read);

      const report = await recoverOpenExecutions(bed.deps, 'restart');

      expect(report).toEqual({ resumed: 0, restarted: 0, lost: 0, expired: 0, executed: 0, settled: 2 });
      expect(await bed.record(write)).toMatchObject({ status: 'unknown', code: 'interrupted' });
      expect(await bed.record(read.execution_id)).toMatchObject({ status: 'failed', code: 'interrupted' });
      expect(bed.sent).toHaveLength(1);
    },
  );
});

describe('recovery by the reconciler', () => {
  it(
    verifies('approvals.reconciler', 'expires a pending call only past its approval time and the timer’s grace'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'alive' });
      bed.clock.advance(approvalMs + claimGraceMs);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ expired: 0, resumed: 0 });
      expect((await bed.record(held.execution_id)).status).toBe('pending_approval');

      bed.clock.advance(1);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ expired: 1 });
      expect(await bed.record(held.execution_id)).toMatchObject({ status: 'expired', code: 'approval_expired' });
    },
  );

  it(
    verifies('approvals.reconciler', 'starts an approval run that never registered, and leaves a registered one alone'),
    async () => {
      const bed = await useCaseBed();
      const lost = await holdLargeOrder(bed);
      const registered = await holdLargeOrder(bed, '1600');
      await registerApproval(bed.deps, { ...registered, task_token: 'alive' });
      bed.started.length = 0;

      bed.clock.advance(registerGraceMs);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ resumed: 0 });
      bed.clock.advance(1);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ resumed: 1 });
      expect(bed.started.map((start) => start.execution_id)).toEqual([lost.execution_id]);
    },
  );

  it(
    verifies(
      'deploy.approval-run-restart',
      'starts a call whose approval run ended before registering again under the next name, recorded on the call',
    ),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      // The first run ended (failed, timed out or aborted) before it registered: its name is spent.
      bed.startAnswer = (input) => ((input.restarts ?? 0) === 0 ? 'ended' : 'started');
      bed.started.length = 0;
      bed.clock.advance(registerGraceMs + 1);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ resumed: 1, restarted: 1, lost: 0 });
      expect(bed.started.map((start) => start.restarts)).toEqual([0, 1]);
      expect(bed.started.every((start) => start.execution_id === held.execution_id)).toBe(true);
      expect(await bed.record(held.execution_id)).toMatchObject({
        status: 'pending_approval',
        approval_run_restarts: 1,
      });

      // The next pass starts it under the recorded name: running now, nothing more to do.
      bed.startAnswer = () => 'running';
      bed.started.length = 0;
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ resumed: 0, restarted: 0, lost: 0 });
      expect(bed.started.map((start) => start.restarts)).toEqual([1]);
    },
  );

  it(
    verifies(
      'deploy.approval-run-restart',
      'counts and logs a call it cannot give a running approval run: restarts spent, or a start refused',
    ),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      let lost = 0;
      const countLost = () => {
        lost += 1;
      };
      const deps = { ...bed.deps, metrics: { approvalRunLost: countLost, unsettledOutcomes: () => undefined } };
      bed.startAnswer = () => 'ended';
      bed.clock.advance(registerGraceMs + 1);
      expect(await recoverOpenExecutions(deps, 'reconcile')).toMatchObject({ resumed: 0, lost: 1 });
      expect((await bed.record(held.execution_id)).approval_run_restarts).toBe(maxApprovalRunRestarts);
      expect(lost).toBe(1);
      expect(bed.warnings.filter((warning) => warning.includes('no approval run'))).toHaveLength(1);

      // A start refused outright (a missing permission, a deleted state machine) is lost too.
      deps.approvalRuns = {
        ...bed.deps.approvalRuns,
        start: () => Promise.reject(new Error('AccessDeniedException')),
      };
      expect(await recoverOpenExecutions(deps, 'reconcile')).toMatchObject({ lost: 1 });
      expect(lost).toBe(2);
      // It still expires at its time.
      bed.clock.advance(approvalMs + claimGraceMs);
      expect(await recoverOpenExecutions(deps, 'reconcile')).toMatchObject({ expired: 1, lost: 0 });
    },
  );

  it(
    verifies('approvals.reconciler', 'hands a lost decision over again, or runs it when no run waits any more'),
    async () => {
      const bed = await useCaseBed();
      const handed = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...handed, task_token: 'still-waiting' });
      await approveHeld(bed, handed.execution_id, handed.arguments_hash);
      bed.signals.length = 0;
      const background = backgroundOf();

      bed.clock.advance(signalGraceMs);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile', background.run)).toMatchObject({ executed: 0 });
      bed.clock.advance(1);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile', background.run)).toMatchObject({ executed: 1 });
      await background.settled();
      expect(bed.signals).toEqual([{ token: 'still-waiting', outcome: 'approved' }]);
      // Handed to the run, which executes it: the reconciler itself sent nothing.
      expect(bed.sent).toEqual([]);
      expect((await bed.record(handed.execution_id)).status).toBe('approved');

      bed.signalAnswer = false;
      expect(await recoverOpenExecutions(bed.deps, 'reconcile', background.run)).toMatchObject({ executed: 1 });
      await background.settled();
      expect(await bed.record(handed.execution_id)).toMatchObject({ status: 'succeeded' });
      expect(bed.sentFor(handed.execution_id)).toHaveLength(1);
    },
  );

  it(
    verifies(
      'invoke.at-most-once',
      'settles a claim only once its deadline and grace have passed, as unknown for a write',
    ),
    async () => {
      const bed = await useCaseBed();
      const write = await abandonedWrite(bed);
      bed.clock.advance(systemTimeoutMs + claimGraceMs);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ settled: 0 });
      expect((await bed.record(write)).status).toBe('approved');

      bed.clock.advance(1);
      expect(await recoverOpenExecutions(bed.deps, 'reconcile')).toMatchObject({ settled: 1 });
      expect(await bed.record(write)).toMatchObject({ status: 'unknown', code: 'interrupted' });
      expect(bed.sent).toHaveLength(1);
    },
  );
});
