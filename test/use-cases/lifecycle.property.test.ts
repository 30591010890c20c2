// The approval lifecycle under random interleavings. A few held calls (some for a customer, who
// confirms first, then finance; some asking a quorum of two or three, escalated to operations after
// a while, decided only on a fresh and strong sign-in); then batches of operations started together:
// decisions (by four approvers, some on a stale or weak sign-in), the customer's confirmations and declines, expiry timers, execute steps, registrations,
// recovery passes (restart or reconcile), policy changes, clock moves, crashes (a system call
// that never answers, or answers late; the process stopping right after a claim or a decision),
// writes retried under idempotency keys and held calls asked for again.
// At the end, past every deadline, one recovery pass (restart or reconcile) ends everything; then each
// call has exactly one outcome, reached by legal moves, sent at most once, and never sent if it
// ended rejected, expired or denied; no key's call is sent twice, no waiting call is held twice;
// it is dated for deletion, out of the index of open calls, and
// its agent's place for held calls is free again; no call runs before its quorum, nobody approves
// twice, and an approval on a stale or weak sign-in (or by a group not yet let in) never counts (the write plans' rules, once, under interleavings).
//
// Long: the model of the lifecycle, its generator of interleavings and its end checks belong
// together.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allowedTransitions,
  type DecisionRecord,
  type Execution,
  type StaffApproval,
  terminalStatuses,
} from '../../shared/executions/execution.js';
import { retainUntil } from '../../shared/executions/retention.js';
import type { OutboundRequest, OutboundResult } from '../../shared/invoke/system-client.js';
import type { ResultObject } from '../../shared/result.js';
import { type DecisionResult, decide, viewHeldCall } from '../../shared/use-cases/approver-decisions.js';
import { type CallStep, callTool } from '../../shared/use-cases/call-tool.js';
import { type CustomerAnswerResult, customerAnswer } from '../../shared/use-cases/customer-decisions.js';
import { getExecutionStatus } from '../../shared/use-cases/get-execution-status.js';
import { executeApproved, expireApproval, registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { recoverOpenExecutions } from '../../shared/use-cases/recovery.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  benchSnapshot,
  created201,
  customerPolicy,
  financeApprover,
  frozenPolicy,
  highStakesPolicy,
  holdLargeOrder,
  holdRestrictedLookup,
  operationsApprover,
  procurementAgent,
  secondFinanceApprover,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

type Operation =
  /** One of four approvers decides, on a fresh sign-in or a stale one, strong or weak. */
  | {
      readonly kind: 'decide';
      readonly call: number;
      readonly who: number;
      readonly approve: boolean;
      readonly stale: boolean;
      readonly weak: boolean;
    }
  /** The customer a call was made for answers on their page (another customer's answer is refused). */
  | { readonly kind: 'customer'; readonly call: number; readonly confirm: boolean; readonly other: boolean }
  | { readonly kind: 'expire'; readonly call: number }
  | { readonly kind: 'execute'; readonly call: number }
  | { readonly kind: 'register'; readonly call: number }
  /** The agent asks how its call is doing; an approver opens its page (both settle what is overdue). */
  | { readonly kind: 'status'; readonly call: number; readonly approver: boolean }
  /** A small order the policy lets run now: a write claimed, sent and settled on the spot. */
  | { readonly kind: 'direct' }
  /** A small order under one of two idempotency keys, retried: whatever happens, sent once per key. */
  | { readonly kind: 'retry'; readonly key: number }
  /** A held call asked for again, without a key: it joins the call while that one still waits. */
  | { readonly kind: 'again'; readonly call: number }
  | { readonly kind: 'recover'; readonly mode: 'restart' | 'reconcile' }
  /** The next system call reaches the system and never answers (until `answer`, if no restart came first). */
  | { readonly kind: 'hang' }
  /** The oldest system call left hanging answers now, late. */
  | { readonly kind: 'answer' }
  /** The process stops right after this step, the next time one is reached. */
  | { readonly kind: 'crash'; readonly at: CallStep }
  | { readonly kind: 'policy'; readonly to: 'standard' | 'customer' | 'frozen' | 'removed' | 'quorum' }
  | { readonly kind: 'advance'; readonly ms: number }
  /** Whether an approval run still waits for the decisions pushed to it. */
  | { readonly kind: 'runs'; readonly waiting: boolean };

const call = fc.nat({ max: 2 });
/** True now and then: a stale or weak sign-in is the exception. */
const sometimes = fc.nat({ max: 3 }).map((draw) => draw === 0);
const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('decide'),
      call,
      who: fc.nat({ max: 3 }),
      approve: fc.boolean(),
      stale: sometimes,
      weak: sometimes,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('customer'), call, confirm: fc.boolean(), other: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('expire'), call }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('execute'), call }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('register'), call }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('status'), call, approver: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('direct') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('retry'), key: fc.nat({ max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('again'), call }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('recover'), mode: fc.constantFrom('restart', 'reconcile') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hang') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('answer') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash'), at: fc.constantFrom('decided', 'claimed') }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('policy'),
      to: fc.constantFrom('standard', 'customer', 'frozen', 'removed', 'quorum'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance'),
      // Small steps cross a claim's deadline and grace; large ones an approval time.
      ms: fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 0, max: approvalMs })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('runs'), waiting: fc.boolean() }) },
);

const scenario = fc.record({
  /** When each call is made, after the previous one. */
  gaps: fc.array(fc.integer({ min: 0, max: approvalMs / 2 }), { minLength: 1, maxLength: 3 }),
  /** Which calls are made for a customer (held for the customer, then finance). */
  forCustomer: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  /** How many approvers each call not for a customer asks (2 and 3: under the high-stakes policy). */
  quorums: fc.array(fc.constantFrom(1, 2, 3), { minLength: 3, maxLength: 3 }),
  /** Batches of operations started together. */
  batches: fc.array(fc.array(operation, { minLength: 1, maxLength: 3 }), { maxLength: 10 }),
  /** How the end comes: the local runtime restarting, or the reconciler's pass with no run left waiting. */
  end: fc.constantFrom('restart', 'reconcile'),
});

/** The process stopping: what it was doing is lost, not an error. */
class Crash extends Error {}

/** One turn of the event loop: every operation not waiting on the system has finished by then. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

const customerAgent = { ...procurementAgent, customerId: 'customer-1042' };
/** Who decides: three of finance, one of operations (the high-stakes policy's escalation group). */
const approvers = [financeApprover, secondFinanceApprover, { ...financeApprover, id: 'finn' }, operationsApprover];
/** The high-stakes policy's @reauth, and a sign-in older than it. */
const staleSignInMs = 10 * 60_000;

/**
 * Whether a recorded approval counts toward its call's step, judged here on its own: of the
 * deciding group (or the escalation group once due), on a sign-in as recent and strong as asked.
 */
const counts = (approval: StaffApproval, step: NonNullable<DecisionRecord['step']>, createdAt: string): boolean => {
  const at = Date.parse(approval.at);
  const escalated =
    step.escalation !== null &&
    approval.group === step.escalation.group &&
    Date.parse(createdAt) + step.escalation.after_ms <= at;
  const fresh =
    step.reauth_ms === null ||
    (approval.signed_in_at !== null && at - Date.parse(approval.signed_in_at) <= step.reauth_ms);
  const strong = step.acr === null || (approval.acr !== null && step.acr.includes(approval.acr));
  return (approval.group === step.staff || escalated) && fresh && strong;
};
const customers = { own: { id: 'customer-1042', name: null }, other: { id: 'customer-2001', name: null } };

/** The amount of the order retried under key `key` (no other call asks for it). */
const keyedAmount = (key: number): string => String(11 + key);

/**
 * The retries' invariants: each key's order is sent once at most, and no call waits for approval
 * twice (two records of one agent, tool and arguments both pending and within their time).
 */
const expectOnceEach = async (bed: UseCaseBed, sent: readonly OutboundRequest[]): Promise<void> => {
  for (const key of [0, 1]) {
    const amount = keyedAmount(key);
    expect(sent.filter((request) => JSON.parse(request.body ?? '{}').amount === amount).length).toBeLessThanOrEqual(1);
  }
  // (The customer's agent is the same agent, acting for a customer.)
  const records = (await bed.store.listByAgent(procurementAgent.id, { limit: 1_000 })).items;
  const now = bed.clock.now();
  const waiting = records.filter(
    (record) =>
      record.status === 'pending_approval' && (record.expires_at === null || Date.parse(record.expires_at) > now),
  );
  const calls = waiting.map(
    (record) => `${record.agent_id} ${record.customer_id} ${record.tool} ${record.arguments_hash}`,
  );
  expect(new Set(calls).size).toBe(calls.length);
};

const runScenario = async ({ gaps, forCustomer, quorums, batches, end }: Scenario): Promise<void> => {
  const bed = await useCaseBed();
  const snapshots = {
    standard: await benchSnapshot(),
    customer: await benchSnapshot({ policy: customerPolicy }),
    frozen: await benchSnapshot({ policy: frozenPolicy }),
    removed: await benchSnapshot({ withCreate: false }),
    quorum: await benchSnapshot({ policy: highStakesPolicy }),
    quorum3: await benchSnapshot({ policy: highStakesPolicy.replace('@quorum("2")', '@quorum("3")') }),
  };
  // The system: every call reaches it; some never answer, or answer late.
  const sent: OutboundRequest[] = [];
  let hangNext = 0;
  let hanging: ((result: OutboundResult) => void)[] = [];
  let crashAt: CallStep | null = null;
  const deps = {
    ...bed.deps,
    systems: {
      send: (request: OutboundRequest): Promise<OutboundResult> => {
        sent.push(request);
        if (hangNext === 0) return Promise.resolve(created201);
        hangNext -= 1;
        return new Promise<OutboundResult>((resolve) => void hanging.push(resolve));
      },
    },
    probe: (step: CallStep) => {
      if (crashAt !== step) return;
      crashAt = null;
      throw new Crash(step);
    },
  };
  const failures: unknown[] = [];
  const decisions = new Map<string, (DecisionResult | CustomerAnswerResult)[]>();
  const crashedDecisions = new Map<string, number>();
  const track = (work: Promise<unknown>): void => {
    work.catch((error: unknown) => {
      if (!(error instanceof Crash)) failures.push(error);
    });
  };

  const calls: Execution[] = [];
  /** How each held call was asked for, to ask for it again. */
  const askers: (() => Promise<ResultObject>)[] = [];
  /** Calls held anew when asked for again after the first stopped waiting. */
  const heldAgain = new Set<string>();
  for (const [index, gap] of gaps.entries()) {
    bed.clock.advance(gap);
    // Held writes, and a held read (a read whose claim is interrupted fails; it never ends unknown).
    const amount = argumentsOf({ vendor: 'acme', amount: String(1000 + index) });
    if (index === 1) {
      calls.push(await holdRestrictedLookup(bed));
      askers.push(() => callTool(deps, procurementAgent, tools.list, argumentsOf({ vendor: 'restricted' })));
    } else if (forCustomer[index] === true) {
      // Held for the customer first, then finance, under the policy that asks for both.
      bed.use(snapshots.customer);
      calls.push(await holdLargeOrder(bed, String(1000 + index), customerAgent));
      bed.use(snapshots.standard);
      askers.push(() => callTool(deps, customerAgent, tools.create, amount));
    } else {
      // Held for finance: one approver, or a quorum under the high-stakes policy.
      const quorum = quorums[index] ?? 1;
      bed.use(quorum === 1 ? snapshots.standard : quorum === 2 ? snapshots.quorum : snapshots.quorum3);
      calls.push(await holdLargeOrder(bed, String(1000 + index)));
      bed.use(snapshots.standard);
      askers.push(() => callTool(deps, procurementAgent, tools.create, amount));
    }
  }
  const held = new Set(calls.map((call) => call.execution_id));
  const target = (index: number) => {
    const found = calls[index % calls.length];
    if (found === undefined) throw new Error('no calls');
    return found;
  };
  let tokens = 0;

  const start = (op: Operation): void => {
    switch (op.kind) {
      case 'decide': {
        const held = target(op.call);
        const approver = approvers[op.who % approvers.length] ?? financeApprover;
        const signedInAt = bed.clock.now() - (op.stale ? staleSignInMs : 0);
        const work = decide(
          deps,
          { ...approver, signedInAt, acr: op.weak ? 'pwd' : 'phr' },
          {
            execution_id: held.execution_id,
            outcome: op.approve ? 'approve' : 'reject',
            arguments_hash: held.arguments_hash ?? '',
          },
        ).then(
          (result) => {
            decisions.set(held.execution_id, [...(decisions.get(held.execution_id) ?? []), result]);
          },
          (error: unknown) => {
            // The process stopped right after recording the decision: it was made, its answer lost.
            if (error instanceof Crash) {
              crashedDecisions.set(held.execution_id, (crashedDecisions.get(held.execution_id) ?? 0) + 1);
            }
            throw error;
          },
        );
        track(work);
        break;
      }
      case 'customer': {
        const held = target(op.call);
        const work = customerAnswer(deps, op.other ? customers.other : customers.own, {
          execution_id: held.execution_id,
          outcome: op.confirm ? 'confirm' : 'decline',
          arguments_hash: held.arguments_hash ?? '',
        }).then(
          (result) => {
            decisions.set(held.execution_id, [...(decisions.get(held.execution_id) ?? []), result]);
          },
          (error: unknown) => {
            if (error instanceof Crash) {
              crashedDecisions.set(held.execution_id, (crashedDecisions.get(held.execution_id) ?? 0) + 1);
            }
            throw error;
          },
        );
        track(work);
        break;
      }
      case 'expire':
        track(expireApproval(deps, target(op.call)));
        break;
      case 'execute':
        track(executeApproved(deps, target(op.call)));
        break;
      case 'status': {
        const held = target(op.call);
        track(
          op.approver
            ? viewHeldCall(deps, financeApprover, held.execution_id)
            : getExecutionStatus(deps, procurementAgent, { execution_id: held.execution_id }),
        );
        break;
      }
      case 'direct':
        track(callTool(deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme', amount: '10' })));
        break;
      case 'retry':
        track(
          callTool(deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme', amount: keyedAmount(op.key) }), {
            traceparent: null,
            idempotencyKey: `order-${op.key}`,
          }),
        );
        break;
      case 'again': {
        const asked = askers[op.call % askers.length]?.();
        if (asked === undefined) throw new Error('no calls');
        track(
          asked.then((answer) => {
            if (answer.status === 'pending_approval' && !held.has(answer.execution_id ?? '')) {
              heldAgain.add(answer.execution_id ?? '');
            }
          }),
        );
        break;
      }
      case 'register':
        tokens += 1;
        track(registerApproval(deps, { ...target(op.call), task_token: `token-${tokens}` }));
        break;
      case 'recover':
        // A restart ends the process that was waiting on the system: those answers never come.
        if (op.mode === 'restart') hanging = [];
        track(recoverOpenExecutions(deps, op.mode, track));
        break;
      case 'hang':
        hangNext += 1;
        break;
      case 'answer':
        hanging.shift()?.(created201);
        break;
      case 'crash':
        crashAt = op.at;
        break;
      case 'policy':
        bed.use(snapshots[op.to]);
        break;
      case 'advance':
        bed.clock.advance(op.ms);
        break;
      case 'runs':
        bed.signalAnswer = op.waiting;
        break;
    }
  };

  /** Every call the agent made (held and direct), as stored, with the requests sent for it. */
  const everyCall = async () =>
    (await bed.store.listByAgent(procurementAgent.id, { limit: 1_000 })).items.map((record) => ({
      record,
      sends: sent.filter((request) => request.headers['x-request-id'] === record.execution_id).length,
    }));

  for (const batch of batches) {
    for (const op of batch) start(op);
    await turn();
    // While it runs: never more than one send for a call, none for one refused or expired.
    for (const { record, sends } of await everyCall()) {
      expect(sends).toBeLessThanOrEqual(1);
      if (['rejected', 'expired', 'denied'].includes(record.status)) expect(sends).toBe(0);
    }
    await expectOnceEach(bed, sent);
  }

  // The end, past every deadline, with a system that answers: the gateway restarts (what it was
  // waiting on is lost), or the reconciler passes while no approval run waits any more.
  hangNext = 0;
  crashAt = null;
  bed.signalAnswer = false;
  bed.clock.advance(2 * approvalMs);
  if (end === 'restart') hanging = [];
  const background: Promise<unknown>[] = [];
  track(
    recoverOpenExecutions(deps, end, (work) => {
      background.push(work);
      track(work);
    }),
  );
  await turn();
  await Promise.allSettled(background);
  await turn();

  expect(failures).toEqual([]);
  // Every call ended: none is left in the index of open calls, and every held call's place came back.
  expect((await bed.store.listOpen()).items).toEqual([]);
  for (const agentId of new Set(calls.map((call) => call.agent_id))) {
    expect(await bed.store.reservePending(agentId, 'probe', 0)).toEqual({ kind: 'reserved' });
    await bed.store.releasePending(agentId, ['probe']);
  }
  await expectOnceEach(bed, sent);
  for (const { record, sends } of await everyCall()) {
    const statuses = record.history.map((change) => change.status);
    // Exactly one outcome, reached by legal moves from where the call began (held, or run now).
    expect(terminalStatuses.has(record.status)).toBe(true);
    // (A direct call the policy or the catalog refused is denied from the start.)
    const wasHeld = held.has(record.execution_id) || heldAgain.has(record.execution_id);
    expect(wasHeld ? ['pending_approval'] : ['approved', 'denied']).toContain(statuses[0]);
    expect(statuses.at(-1)).toBe(record.status);
    // Dated for deletion by the write that made it final, from its own retention.
    expect(record.retain_until).toBe(retainUntil(record.status, record.updated_at, record.retention_s));
    expect(record.retain_until).not.toBeNull();
    for (let index = 1; index < statuses.length; index += 1) {
      const from = statuses[index - 1];
      const to = statuses[index];
      if (from === undefined || to === undefined) throw new Error('a gap in the history');
      expect(allowedTransitions[from]).toContain(to);
    }
    // At most one send, and none for a call that never ran.
    expect(sends).toBeLessThanOrEqual(1);
    if (['rejected', 'expired', 'denied'].includes(record.status)) expect(sends).toBe(0);
    if (record.status === 'failed') expect(sends === 0 || record.code === 'interrupted').toBe(true);
    if (record.access === 'read') expect(record.status).not.toBe('unknown');
    // The system here always answers (late or never aside): unknown only for an interrupted claim.
    if (record.status === 'unknown') expect(record.code).toBe('interrupted');
    // A call that ran was approved first, and its outcome is recorded.
    if (sends === 1) {
      expect(statuses).toContain('approved');
      expect(['succeeded', 'failed', 'unknown']).toContain(record.status);
    }
    if (record.status === 'succeeded') {
      expect(sends).toBe(1);
      expect(record).toMatchObject({ result_json: '{"id":"PO-1"}', http_status: 201 });
    }
    if (!held.has(record.execution_id)) continue;
    // One decision at most, whoever clicked: every other attempt was refused. A customer's
    // confirmation that hands the call on to finance is an answer, not the decision.
    const decided = (decisions.get(record.execution_id) ?? []).flatMap((result) =>
      (result.kind === 'decided' || result.kind === 'answered') && result.execution.status !== 'pending_approval'
        ? [result.execution]
        : [],
    );
    const made = decided.length + (crashedDecisions.get(record.execution_id) ?? 0);
    expect(made).toBe(statuses.includes('approved') || record.status === 'rejected' ? 1 : 0);
    if (decided[0] !== undefined) expect(record.decided_by).toBe(decided[0].decided_by);
    const answers = (decisions.get(record.execution_id) ?? []).filter((result) => result.kind === 'answered');
    // Another customer never answers; the customer answers at most once; a call waiting for the
    // customer was approved only after they confirmed.
    expect(answers.length).toBeLessThanOrEqual(1);
    if (record.decision?.step?.customer === true && statuses.includes('approved')) {
      expect(record.customer_confirmed_at).not.toBeNull();
    }
    if (record.customer_id === null) expect(answers).toEqual([]);
    // Nobody approves twice; every approval recorded counts; none runs before its quorum.
    const step = record.decision?.step ?? null;
    const by = record.approvals.map((approval) => approval.by);
    expect(new Set(by).size).toBe(by.length);
    if (step === null) continue;
    for (const approval of record.approvals) expect(counts(approval, step, record.created_at)).toBe(true);
    if (step.staff !== null && statuses.includes('approved')) {
      expect(record.approvals.length).toBeGreaterThanOrEqual(step.quorum);
      expect(record.decided_by).toBe(record.approvals.at(-1)?.by);
    }
  }
};

describe('the approval lifecycle under random interleavings', () => {
  it(
    verifies(
      [
        'lifecycle.interleavings',
        'approvals.one-outcome',
        'approvals.decision-vs-expiry',
        'invoke.at-most-once',
        'customer.then-staff',
        'store.lifecycle-plan',
        'lifecycle.retries',
        'quorum.lifecycle',
      ],
      'every call ends once, legally, sent at most once and never after a refusal or expiry, dated, out of the open index, its place given back',
    ),
    async () => {
      // Cedar and the configuration load once, outside the runs.
      await benchSnapshot();
      await fc.assert(fc.asyncProperty(scenario, runScenario), { numRuns: 1_000 });
    },
  );
});
