// Safe retries as use-cases, on the in-memory store: a call under an idempotency key answers the
// first call's execution (sent once, held once), a concurrent duplicate waits for it in this
// process or by store reads from another, the key refuses another call, a malformed key is an
// input error; a held call asked for again without a key joins the one waiting.
//
// Long: each way a retried call can go is its own case, on one bench.
import { describe, expect, it } from 'vitest';
import { idempotencyKeyOf } from '../../shared/edge/tool-call/idempotency-key.js';
import type { CallKey } from '../../shared/executions/call-keys.js';
import { idempotencyDigest } from '../../shared/executions/call-keys.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { unrecordedGraceMs } from '../../shared/ids.js';
import type { OutboundRequest, OutboundResult } from '../../shared/invoke/system-client.js';
import type { ResultObject } from '../../shared/result.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { type CallRequestContext, callTool } from '../../shared/use-cases/call-tool.js';
import { verifies } from '../support/requirements.js';
import {
  argumentsOf,
  benchSnapshot,
  created201,
  financeApprover,
  procurementAgent,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const order = (amount: string) => argumentsOf({ vendor: 'acme', amount });
const keyed = (key: string): CallRequestContext => ({ traceparent: null, idempotencyKey: key });

const recordsOf = async (bed: UseCaseBed) => (await bed.store.listByAgent(procurementAgent.id)).items;

/** A system that answers only when the test says so; `sending` resolves at the first request. */
const gatedSystem = (bed: UseCaseBed) => {
  let answer: (result: OutboundResult) => void = () => undefined;
  const answered = new Promise<OutboundResult>((resolve) => {
    answer = resolve;
  });
  let sendingNow: () => void = () => undefined;
  const sending = new Promise<void>((resolve) => {
    sendingNow = resolve;
  });
  const deps = {
    ...bed.deps,
    systems: {
      send: (request: OutboundRequest) => {
        bed.sent.push(request);
        sendingNow();
        return answered;
      },
    },
  };
  return { deps, sending, answer };
};

/** The same store seen from another process: another object, so no call of this one is waited on. */
const anotherProcess = (store: ExecutionStore): ExecutionStore =>
  new Proxy(store, { get: (target, name) => Reflect.get(target, name, target) });

describe('a call under an idempotency key', () => {
  it(verifies('retries.same-key-same-call', 'a retried write is sent once and answers the first result'), async () => {
    const bed = await useCaseBed();
    const first = await callTool(bed.deps, procurementAgent, tools.create, order('250'), keyed('order-1'));
    // The arguments' canonical form decides: 250.00 is 250.
    const retried = await callTool(bed.deps, procurementAgent, tools.create, order('250.00'), keyed('order-1'));

    expect(first).toMatchObject({ status: 'succeeded', result: { id: 'PO-1' } });
    expect(retried).toEqual(first);
    expect(bed.sent).toHaveLength(1);
    expect(await recordsOf(bed)).toHaveLength(1);
    // Another key is another call.
    await callTool(bed.deps, procurementAgent, tools.create, order('250'), keyed('order-2'));
    expect(bed.sent).toHaveLength(2);
  });

  it(
    verifies('retries.key-reused', 'the same key with other arguments or another tool is refused; nothing is sent'),
    async () => {
      const bed = await useCaseBed();
      const first = await callTool(bed.deps, procurementAgent, tools.create, order('250'), keyed('order-1'));
      const otherArguments = await callTool(bed.deps, procurementAgent, tools.create, order('260'), keyed('order-1'));
      const otherTool = await callTool(
        bed.deps,
        procurementAgent,
        tools.list,
        argumentsOf({ vendor: 'acme' }),
        keyed('order-1'),
      );

      for (const refused of [otherArguments, otherTool]) {
        expect(refused).toMatchObject({ status: 'denied', code: 'idempotency_key_reused', result: null });
        expect(refused.execution_id).not.toBe(first.execution_id);
        expect((await bed.record(refused.execution_id ?? '')).status).toBe('denied');
      }
      expect(bed.sent).toHaveLength(1);
      // Keys are the agent's own: another agent's same key is its own call.
      const other = { ...procurementAgent, id: 'other-agent' };
      expect(await callTool(bed.deps, other, tools.create, order('260'), keyed('order-1'))).toMatchObject({
        status: 'succeeded',
      });
    },
  );

  it(
    verifies('retries.held-once', 'a retried held call answers its pending execution: held and approved once'),
    async () => {
      const bed = await useCaseBed();
      const first = await callTool(bed.deps, procurementAgent, tools.create, order('1500'), keyed('big-order'));
      const retried = await callTool(bed.deps, procurementAgent, tools.create, order('1500'), keyed('big-order'));

      expect(first.status).toBe('pending_approval');
      expect(retried).toEqual(first);
      expect(bed.started).toHaveLength(1);
      expect(await recordsOf(bed)).toHaveLength(1);
      await decide(bed.deps, financeApprover, {
        execution_id: first.execution_id ?? '',
        outcome: 'approve',
        arguments_hash: (await bed.record(first.execution_id ?? '')).arguments_hash ?? '',
      });
      // Its current state, whatever it is now; never a second hold.
      const later = await callTool(bed.deps, procurementAgent, tools.create, order('1500'), keyed('big-order'));
      expect(later.execution_id).toBe(first.execution_id);
      expect(later.status).not.toBe('pending_approval');
      expect(bed.started).toHaveLength(1);
    },
  );

  it(
    verifies('retries.concurrent-wait', '20 duplicates of a running write wait for it in-process and send nothing'),
    async () => {
      const bed = await useCaseBed();
      const system = gatedSystem(bed);
      const first = callTool(system.deps, procurementAgent, tools.create, order('250'), keyed('once'));
      await system.sending;
      const duplicates = Array.from({ length: 20 }, () =>
        callTool(system.deps, procurementAgent, tools.create, order('250'), keyed('once')),
      );
      system.answer(created201);
      const answers = await Promise.all([first, ...duplicates]);

      expect(bed.sent).toHaveLength(1);
      expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
      expect(answers[0]).toMatchObject({ status: 'succeeded', result: { id: 'PO-1' } });
      expect(await recordsOf(bed)).toHaveLength(1);
    },
  );

  it(
    verifies('retries.concurrent-wait', "a duplicate from another process waits for the running call's outcome"),
    async () => {
      const bed = await useCaseBed();
      const system = gatedSystem(bed);
      const first = callTool(system.deps, procurementAgent, tools.create, order('250'), keyed('once'));
      await system.sending;
      const elsewhere = { ...system.deps, store: anotherProcess(bed.store) };
      const duplicate = callTool(elsewhere, procurementAgent, tools.create, order('250'), keyed('once'));
      // The duplicate reads the store while the first runs: answering the outcome, it waited for it.
      system.answer(created201);
      const [ran, waited] = await Promise.all([first, duplicate]);

      expect(waited).toEqual(ran);
      expect(ran.status).toBe('succeeded');
      expect(bed.sent).toHaveLength(1);
    },
  );

  it(
    verifies('retries.takeover', 'a key whose record never came is taken over once that record can no longer land'),
    async () => {
      const bed = await useCaseBed();
      // The same call under another key, for its arguments' hash.
      const probe = await callTool(bed.deps, procurementAgent, tools.create, order('250'), keyed('probe'));
      const lost = bed.deps.ids.next();
      const claimed: CallKey = {
        agent_id: procurementAgent.id,
        digest: idempotencyDigest('after-a-crash'),
        execution_id: lost,
        tool: tools.create,
        arguments_hash: (await bed.record(probe.execution_id ?? '')).arguments_hash ?? '',
        retain_until: 0,
      };
      // The process stopped between the key and the record: a key naming nothing.
      await bed.store.claimCallKey(claimed);
      bed.clock.advance(unrecordedGraceMs + 1);

      const taken = await callTool(bed.deps, procurementAgent, tools.create, order('250'), keyed('after-a-crash'));
      expect(taken).toMatchObject({ status: 'succeeded' });
      expect(taken.execution_id).not.toBe(lost);
      expect(bed.sent).toHaveLength(2);
      // Now the key is the new call's.
      const again = await callTool(bed.deps, procurementAgent, tools.create, order('250'), keyed('after-a-crash'));
      expect(again).toEqual(taken);
      expect(bed.sent).toHaveLength(2);
    },
  );
});

describe('a malformed idempotency key', () => {
  const meta = (value: unknown) => ({ name: tools.create, _meta: { 'approval-gateway/idempotency-key': value } });

  it(
    verifies('retries.key-format', 'reads 1 to 255 printable ASCII characters, and names the member of any other'),
    () => {
      expect(idempotencyKeyOf({ name: tools.create })).toEqual({ idempotencyKey: null, idempotencyKeyError: null });
      expect(idempotencyKeyOf(meta(' ~'.repeat(127).concat('x')))).toMatchObject({
        idempotencyKey: expect.any(String),
      });
      for (const [value, code] of [
        [42, 'wrong_type'],
        [null, 'wrong_type'],
        ['', 'too_short'],
        ['k'.repeat(256), 'too_long'],
        ['café', 'disallowed_character'],
        ['line\nbreak', 'disallowed_character'],
        ['tab\t', 'disallowed_character'],
      ] as const) {
        expect(idempotencyKeyOf(meta(value)), String(value)).toEqual({
          idempotencyKey: null,
          idempotencyKeyError: {
            path: '/_meta/approval-gateway~1idempotency-key',
            code,
            message: expect.stringContaining('idempotency key'),
          },
        });
      }
    },
  );

  it(
    verifies('retries.key-format', 'answers invalid_arguments, recorded, with nothing sent and no key claimed'),
    async () => {
      const bed = await useCaseBed();
      const error = idempotencyKeyOf(meta('')).idempotencyKeyError;
      const refused = await callTool(bed.deps, procurementAgent, tools.create, order('250'), {
        traceparent: null,
        idempotencyKeyError: error,
      });
      expect(refused).toMatchObject({ status: 'denied', code: 'invalid_arguments', input_errors: [error] });
      expect((await bed.record(refused.execution_id ?? '')).code).toBe('invalid_arguments');
      expect(bed.sent).toHaveLength(0);
      // Invalid arguments claim no key: the same key then serves a call that can run.
      const invalid = await callTool(bed.deps, procurementAgent, tools.create, order('-x'), keyed('k'));
      expect(invalid.code).toBe('invalid_arguments');
      expect(await callTool(bed.deps, procurementAgent, tools.create, order('250'), keyed('k'))).toMatchObject({
        status: 'succeeded',
      });
    },
  );
});

describe('a held call asked for again without a key', () => {
  const holdTwice = async (bed: UseCaseBed): Promise<[ResultObject, ResultObject]> => [
    await callTool(bed.deps, procurementAgent, tools.create, order('1500')),
    await callTool(bed.deps, procurementAgent, tools.create, order('1500.00')),
  ];

  it(verifies('held.join-pending', 'joins the pending call: no second record, notice, run or place'), async () => {
    const bed = await useCaseBed();
    const [first, again] = await holdTwice(bed);
    expect(first.status).toBe('pending_approval');
    expect(again).toEqual(first);
    expect(await recordsOf(bed)).toHaveLength(1);
    expect(bed.started).toHaveLength(1);
    // Other arguments are another call; so is the same call for a customer (their confirmation is theirs).
    const other = await callTool(bed.deps, procurementAgent, tools.create, order('1600'));
    expect(other.execution_id).not.toBe(first.execution_id);
    const forCustomer = { ...procurementAgent, customerId: 'customer-1042' };
    const theirs = await callTool(bed.deps, forCustomer, tools.create, order('1500'));
    expect(theirs.status).toBe('pending_approval');
    expect(theirs.execution_id).not.toBe(first.execution_id);
    // Once decided, the same call asked for again is held anew.
    const record = await bed.record(first.execution_id ?? '');
    await decide(bed.deps, financeApprover, {
      execution_id: record.execution_id,
      outcome: 'reject',
      arguments_hash: record.arguments_hash ?? '',
    });
    const later = await callTool(bed.deps, procurementAgent, tools.create, order('1500'));
    expect(later.status).toBe('pending_approval');
    expect(later.execution_id).not.toBe(first.execution_id);
    // Direct calls without a key run each time (a retried write without a key runs again).
    await callTool(bed.deps, procurementAgent, tools.create, order('250'));
    await callTool(bed.deps, procurementAgent, tools.create, order('250'));
    expect(bed.sent).toHaveLength(2);
  });

  it(verifies('held.join-setting', 'settings.join_pending_calls: false holds each such call on its own'), async () => {
    const snapshot = await benchSnapshot();
    const bed = await useCaseBed({
      snapshot: {
        ...snapshot,
        config: { ...snapshot.config, settings: { ...snapshot.config.settings, join_pending_calls: false } },
      },
    });
    const [first, again] = await holdTwice(bed);
    expect(again.status).toBe('pending_approval');
    expect(again.execution_id).not.toBe(first.execution_id);
    expect(bed.started).toHaveLength(2);
  });
});
