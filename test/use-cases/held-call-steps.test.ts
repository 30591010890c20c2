// The approval run's steps as use-cases: register and notify, expire, and execute an approved call
// exactly once with the arguments the approver saw, after the tool and the policy are checked again.
//
// Long: each step, and each way an approved call can fail to be sent, is its own case.
import { describe, expect, it } from 'vitest';
import type { Execution } from '../../shared/executions/execution.js';
import { unrecordedGraceMs } from '../../shared/ids.js';
import { decide, viewHeldCall } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { getExecutionStatus } from '../../shared/use-cases/get-execution-status.js';
import { executeApproved, expireApproval, registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  benchSnapshot,
  financeApprover,
  frozenPolicy,
  holdLargeOrder,
  operationsPolicy,
  procurementAgent,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

/** A large order held, then approved by finance. */
const approvedOrder = async (bed: UseCaseBed, amount = '1500'): Promise<Execution> => {
  const held = await holdLargeOrder(bed, amount);
  const decided = await decide(bed.deps, financeApprover, {
    execution_id: held.execution_id,
    outcome: 'approve',
    arguments_hash: held.arguments_hash ?? '',
  });
  if (decided.kind === 'refused') throw new Error(`expected the approval to hold: ${decided.reason}`);
  return decided.execution;
};

describe('registering the approval run', () => {
  it(verifies('notify.channels', 'records the task token and notifies the approvers once'), async () => {
    const bed = await useCaseBed();
    const held = await holdLargeOrder(bed);

    expect(await registerApproval(bed.deps, { ...held, task_token: 't-1' })).toEqual({ status: 'pending_approval' });
    expect(await registerApproval(bed.deps, { ...held, task_token: 't-2' })).toEqual({ status: 'pending_approval' });

    expect(bed.notices).toHaveLength(1);
    expect(bed.notices[0]).toMatchObject({
      execution_id: held.execution_id,
      staff_group: 'finance',
      expires_at: held.expires_at,
    });
    expect(await bed.record(held.execution_id)).toMatchObject({
      status: 'pending_approval',
      task_token: 't-2',
      notified_at: new Date(bed.clock.now()).toISOString(),
    });
  });

  it(
    verifies('workflow.task-input', 'a run for an execution that does not exist is closed without touching anything'),
    async () => {
      const bed = await useCaseBed();
      const missing = { execution_id: bed.deps.ids.next(), agent_id: procurementAgent.id, task_token: 't-x' };
      // Once its record can no longer land (before that, the step is retried: held-call-ordering.test.ts).
      bed.clock.advance(unrecordedGraceMs);
      expect(await registerApproval(bed.deps, missing)).toEqual({ status: 'missing' });
      expect(bed.signals).toEqual([{ token: 't-x', outcome: 'closed' }]);
      expect(await bed.store.get(missing.execution_id)).toBeUndefined();
    },
  );
});

describe('expiry', () => {
  it(
    verifies(
      'approvals.expiry',
      'a call nobody decided becomes expired / approval_expired, nothing runs, its place is freed',
    ),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      bed.clock.advance(approvalMs);

      const expired = await expireApproval(bed.deps, held);

      expect(expired).toMatchObject({ status: 'expired', code: 'approval_expired' });
      expect(await bed.record(held.execution_id)).toMatchObject({
        status: 'expired',
        history: [{ status: 'pending_approval' }, { status: 'expired', at: new Date(bed.clock.now()).toISOString() }],
      });
      expect(bed.sent).toEqual([]);
      expect(await bed.store.reservePending(procurementAgent.id, 'probe', 0)).toEqual({ kind: 'reserved' });
      // A late execute step, or a second expiry, changes nothing.
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'expired' });
      expect(await expireApproval(bed.deps, held)).toMatchObject({ status: 'expired' });
      expect((await bed.record(held.execution_id)).history).toHaveLength(2);
      expect(bed.sent).toEqual([]);
    },
  );

  it(
    verifies('approvals.decision-vs-expiry', 'an approval that won the race runs when the expiry timer fires'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      bed.clock.advance(approvalMs - 1);
      await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      });
      bed.clock.advance(1);

      const after = await expireApproval(bed.deps, held);

      expect(after).toMatchObject({ status: 'succeeded' });
      expect(bed.sentFor(held.execution_id)).toHaveLength(1);
      expect((await bed.record(held.execution_id)).history.map((change) => change.status)).toEqual([
        'pending_approval',
        'approved',
        'succeeded',
      ]);
    },
  );

  it(
    verifies(
      'approvals.decision-vs-expiry',
      'a decision and the expiry in the same instant: one system call, or expired with none',
    ),
    async () => {
      for (const decisionFirst of [true, false]) {
        const bed = await useCaseBed();
        const held = await holdLargeOrder(bed);
        bed.clock.advance(approvalMs - 1);
        const decision = () =>
          decide(bed.deps, financeApprover, {
            execution_id: held.execution_id,
            outcome: 'approve',
            arguments_hash: held.arguments_hash ?? '',
          });
        const expiry = () => expireApproval(bed.deps, held);
        await Promise.all(decisionFirst ? [decision(), expiry()] : [expiry(), decision()]);
        await executeApproved(bed.deps, held);

        const record = await bed.record(held.execution_id);
        expect(['succeeded', 'expired']).toContain(record.status);
        expect(bed.sentFor(held.execution_id)).toHaveLength(record.status === 'succeeded' ? 1 : 0);
      }
    },
  );
});

describe('executing an approved call', () => {
  it(
    verifies(
      'approvals.runs-exact-arguments',
      'runs once with the canonical arguments the approver saw; a second execute sends nothing',
    ),
    async () => {
      const bed = await useCaseBed();
      const approved = await approvedOrder(bed, '1500.00');
      let statusWhileRunning: unknown;
      const deps = {
        ...bed.deps,
        systems: {
          send: async (request: Parameters<typeof bed.deps.systems.send>[0]) => {
            statusWhileRunning = (
              await getExecutionStatus(bed.deps, procurementAgent, { execution_id: approved.execution_id })
            ).status;
            return bed.deps.systems.send(request);
          },
        },
      };

      const ran = await executeApproved(deps, approved);

      expect(ran).toMatchObject({ status: 'succeeded', result_json: '{"id":"PO-1"}', http_status: 201 });
      const [request] = bed.sentFor(approved.execution_id);
      expect(request).toMatchObject({ method: 'POST', url: 'http://erp.test/orders' });
      expect(JSON.parse(request?.body ?? 'null')).toEqual({ vendor: 'acme', amount: '1500' });
      expect(statusWhileRunning).toBe('approved');
      expect(await executeApproved(bed.deps, approved)).toEqual(ran);
      expect(bed.sent).toHaveLength(1);
    },
  );

  it(
    verifies(
      ['approvals.runs-exact-arguments', 'notify.no-secrets'],
      'a secret is kept sealed, hidden from approvers, and opened only to send',
    ),
    async () => {
      const bed = await useCaseBed();
      const asked = await callTool(
        bed.deps,
        procurementAgent,
        tools.create,
        argumentsOf({ vendor: 'acme', amount: '5000', api_key: 'sk-live-7731' }),
      );
      const held = await bed.record(asked.execution_id ?? '');
      await registerApproval(bed.deps, { ...held, task_token: 't-secret' });

      expect(held.arguments_json).toBe('{"amount":"5000","api_key":"[REDACTED]","vendor":"acme"}');
      expect(held.sealed_arguments).not.toBeNull();
      expect(JSON.stringify(held)).not.toContain('sk-live-7731');
      expect(JSON.stringify(bed.notices)).not.toContain('sk-live-7731');
      const view = await viewHeldCall(bed.deps, financeApprover, held.execution_id);
      expect(JSON.stringify(view)).not.toContain('sk-live-7731');

      await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'succeeded' });
      expect(JSON.parse(bed.sentFor(held.execution_id)[0]?.body ?? 'null')).toEqual({
        vendor: 'acme',
        amount: '5000',
        api_key: 'sk-live-7731',
      });
    },
  );

  it(
    verifies('approvals.status-lifecycle', 'the agent follows pending, approved, then the outcome with its result'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      const status = () => getExecutionStatus(bed.deps, procurementAgent, { execution_id: held.execution_id });
      expect(await status()).toMatchObject({ status: 'pending_approval', result: null });
      await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(await status()).toMatchObject({ status: 'approved', result: null });
      await executeApproved(bed.deps, held);
      expect(await status()).toMatchObject({ status: 'succeeded', result: { id: 'PO-1' } });
      // Another agent asking for it learns nothing.
      expect(
        await getExecutionStatus(
          bed.deps,
          { ...procurementAgent, id: 'other-agent' },
          { execution_id: held.execution_id },
        ),
      ).toMatchObject({ status: 'unknown', code: 'not_found' });
    },
  );

  it(verifies('invoke.at-most-once', 'several execute steps at once send it once'), async () => {
    const bed = await useCaseBed();
    const approved = await approvedOrder(bed);
    const results = await Promise.all(Array.from({ length: 5 }, () => executeApproved(bed.deps, approved)));
    expect(bed.sentFor(approved.execution_id)).toHaveLength(1);
    const record = await bed.record(approved.execution_id);
    expect(record.status).toBe('succeeded');
    // The losers answer what the store held when they lost: the claim, or the outcome.
    for (const result of results) expect(['approved', 'succeeded']).toContain(result?.status);
  });

  it(
    verifies(
      'approvals.runs-exact-arguments',
      'a tool removed meanwhile fails with tool_unavailable and nothing is sent',
    ),
    async () => {
      const bed = await useCaseBed();
      const approved = await approvedOrder(bed);
      bed.use(await benchSnapshot({ withCreate: false }));

      expect(await executeApproved(bed.deps, approved)).toMatchObject({ status: 'failed', code: 'tool_unavailable' });
      expect(bed.sent).toEqual([]);

      const other = await useCaseBed();
      const second = await approvedOrder(other);
      other.use(null);
      expect(await executeApproved(other.deps, second)).toMatchObject({ status: 'failed', code: 'tool_unavailable' });
      expect(other.sent).toEqual([]);
    },
  );

  it(
    verifies(
      'approvals.runs-exact-arguments',
      'arguments changed after the approval: failed / arguments_mismatch, nothing sent',
    ),
    async () => {
      const bed = await useCaseBed();
      const approved = await approvedOrder(bed);
      // What is stored no longer matches the hash the approver's decision was checked against.
      await bed.store.annotate(approved, 'approved', { arguments_json: '{"amount":"999999","vendor":"acme"}' });

      expect(await executeApproved(bed.deps, approved)).toMatchObject({ status: 'failed', code: 'arguments_mismatch' });
      expect(bed.sent).toEqual([]);
    },
  );

  it(
    verifies(
      'approvals.policy-rechecked',
      'a policy changed since the approval ends it denied / policy_denied, nothing sent',
    ),
    async () => {
      const bed = await useCaseBed();
      const forbidden = await approvedOrder(bed);
      const otherGroup = await approvedOrder(bed, '2500');
      const stillAllowed = await approvedOrder(bed, '3500');

      bed.use(await benchSnapshot({ policy: frozenPolicy }));
      expect(await executeApproved(bed.deps, forbidden)).toMatchObject({ status: 'denied', code: 'policy_denied' });
      // Another approver group now: finance's approval does not stand for operations'.
      bed.use(await benchSnapshot({ policy: operationsPolicy }));
      expect(await executeApproved(bed.deps, otherGroup)).toMatchObject({ status: 'denied', code: 'policy_denied' });
      expect(bed.sent).toEqual([]);

      // The same policy as approved: it runs.
      bed.use(await benchSnapshot());
      expect(await executeApproved(bed.deps, stillAllowed)).toMatchObject({ status: 'succeeded' });
      expect(bed.sent).toHaveLength(1);
    },
  );
});
