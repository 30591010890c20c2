// tools/call as a use-case, on the in-memory store with the real loader and Cedar policy: what
// runs at once (a read sent and recorded once; a write claimed, sent, settled), what is held, and
// what is refused before anything runs. Every call leaves exactly one record.
//
// Long: each way a call can go (run, held, refused) is its own case.
import { describe, expect, it } from 'vitest';
import { toCallToolResult } from '../../shared/edge/tool-call/tool-result.js';
import type { Execution } from '../../shared/executions/execution.js';
import type { OutboundRequest, OutboundResult } from '../../shared/invoke/system-client.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { getExecutionStatus } from '../../shared/use-cases/get-execution-status.js';
import { humanStep } from '../support/executions.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  benchSnapshot,
  financeApprover,
  procurementAgent,
  systemTimeoutMs,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const order = (amount: string) => argumentsOf({ vendor: 'acme', amount });

/** Every record the agent has: each call leaves exactly one. */
const recordsOf = async (bed: UseCaseBed): Promise<readonly Execution[]> =>
  (await bed.store.listByAgent(procurementAgent.id)).items;

/** Answers `result`, noting what the store held for the call at the moment it was sent. */
const observingSend = (bed: UseCaseBed, result: OutboundResult) => {
  const atSend: (Execution | undefined)[] = [];
  const deps = {
    ...bed.deps,
    systems: {
      send: async (request: OutboundRequest) => {
        atSend.push(await bed.store.get(request.headers['x-request-id'] ?? ''));
        bed.sent.push(request);
        return result;
      },
    },
  };
  return { deps, atSend };
};

const answer = (status: number, body = '{}'): OutboundResult => ({
  kind: 'response',
  status,
  contentType: 'application/json',
  body: Buffer.from(body),
});

describe('a call the policy lets run now', () => {
  it(
    verifies('invoke.audit', 'a read is sent once and recorded once, with its outcome and what decided it'),
    async () => {
      const bed = await useCaseBed();
      const started = bed.clock.now();
      const { deps, atSend } = observingSend(bed, answer(200, '{"orders":[]}'));

      const result = await callTool(deps, procurementAgent, tools.list, argumentsOf({ vendor: ' acme ' }));

      expect(result).toMatchObject({ status: 'succeeded', result: { orders: [] }, code: null });
      // Nothing is stored before a read is sent: it is recorded once, with its outcome.
      expect(atSend).toEqual([undefined]);
      expect(bed.sent).toHaveLength(1);
      expect(bed.sent[0]).toMatchObject({ method: 'GET', url: 'http://erp.test/orders?vendor=acme' });
      const records = await recordsOf(bed);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({
        execution_id: result.execution_id,
        agent_id: procurementAgent.id,
        agent_groups: ['procurement'],
        tool: tools.list,
        access: 'read',
        status: 'succeeded',
        arguments_json: '{"vendor":"acme"}',
        http_status: 200,
        claimed_at: null,
        decision: { effect: 'allow', reason: null, step: null, determining: [{ name: 'lookups' }] },
        history: [
          { status: 'approved', at: new Date(started).toISOString() },
          { status: 'succeeded', at: new Date(started).toISOString() },
        ],
      });
      expect(records[0]?.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(records[0]?.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
    },
  );

  it(
    verifies('invoke.at-most-once', 'a write is recorded claimed, with its deadline, before it is sent, then settled'),
    async () => {
      const bed = await useCaseBed();
      const { deps, atSend } = observingSend(bed, answer(201, '{"id":"PO-7"}'));

      const result = await callTool(deps, procurementAgent, tools.create, order('250.00'));

      expect(result).toMatchObject({ status: 'succeeded', result: { id: 'PO-7' } });
      const claimedAt = new Date(bed.clock.now()).toISOString();
      expect(atSend).toHaveLength(1);
      expect(atSend[0]).toMatchObject({
        status: 'approved',
        access: 'write',
        claimed_at: claimedAt,
        deadline_at: new Date(bed.clock.now() + systemTimeoutMs).toISOString(),
      });
      // Exactly the canonical arguments are sent (the amount in its canonical form).
      expect(JSON.parse(bed.sent[0]?.body ?? 'null')).toEqual({ vendor: 'acme', amount: '250' });
      const records = await recordsOf(bed);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({
        status: 'succeeded',
        result_json: '{"id":"PO-7"}',
        http_status: 201,
        history: [{ status: 'approved' }, { status: 'succeeded' }],
      });
    },
  );

  it(
    verifies(
      'status.own-execution',
      'get_execution_status answers the agent’s own call with the result object the call produced',
    ),
    async () => {
      const bed = await useCaseBed();
      const direct = await callTool(bed.deps, procurementAgent, tools.create, order('20'));
      const held = await callTool(bed.deps, procurementAgent, tools.create, order('2000'));
      const refused = await callTool(bed.deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme' }));
      for (const result of [direct, held, refused]) {
        expect(
          await getExecutionStatus(bed.deps, procurementAgent, { execution_id: result.execution_id ?? '' }),
        ).toEqual(result);
      }
    },
  );

  it(
    verifies(
      ['status.not-found-indistinguishable', 'status.invalid-id'],
      'another agent’s id answers exactly as an id never given; a non-UUID is invalid',
    ),
    async () => {
      const bed = await useCaseBed();
      const mine = await callTool(bed.deps, procurementAgent, tools.list, argumentsOf({}));
      const other = { ...procurementAgent, id: 'other-agent' };
      const notMine = await getExecutionStatus(bed.deps, other, { execution_id: mine.execution_id ?? '' });
      expect(notMine).toMatchObject({ status: 'unknown', code: 'not_found', execution_id: null, result: null });
      expect(await getExecutionStatus(bed.deps, other, { execution_id: bed.deps.ids.next() })).toEqual(notMine);
      expect(await getExecutionStatus(bed.deps, procurementAgent, { execution_id: 'PO-1' })).toMatchObject({
        status: 'unknown',
        code: 'invalid_arguments',
        input_errors: [{ path: '/execution_id', code: 'invalid_format' }],
      });
    },
  );

  it(
    verifies(
      'answers.exact-integers',
      "a system's integers beyond 2^53 reach the agent, the record and get_execution_status digit for digit",
    ),
    async () => {
      const bed = await useCaseBed();
      const body = '{"id":9007199254740993,"lines":[{"n":-123456789012345678901}],"api_key":"k-1","price":2.5}';
      bed.behaviour = {
        kind: 'answer',
        result: { kind: 'response', status: 200, contentType: 'application/json', body: Buffer.from(body) },
      };
      const answer = await callTool(bed.deps, procurementAgent, tools.list, argumentsOf({}));
      expect(answer.status).toBe('succeeded');
      const exact = '{"id":9007199254740993,"lines":[{"n":-123456789012345678901}],"api_key":"[REDACTED]","price":2.5}';
      // What the MCP SDK writes (JSON.stringify) of the answer: structured content and its text alike.
      const sent = toCallToolResult(answer);
      expect(JSON.stringify(sent.structuredContent)).toContain(`"result":${exact}`);
      expect(sent.content).toEqual([{ type: 'text', text: expect.stringContaining(`"result":${exact}`) }]);
      expect((await bed.record(answer.execution_id ?? '')).result_json).toBe(exact);
      const status = await getExecutionStatus(bed.deps, procurementAgent, { execution_id: answer.execution_id ?? '' });
      expect(JSON.stringify(status)).toContain(`"result":${exact}`);
    },
  );

  it(
    verifies(
      'invoke.at-most-once',
      'a write sent without a reliable answer ends unknown; a read that fails ends failed',
    ),
    async () => {
      const bed = await useCaseBed();
      bed.behaviour = { kind: 'answer', result: { kind: 'timeout', sent: true } };
      const write = await callTool(bed.deps, procurementAgent, tools.create, order('10'));
      expect(write).toMatchObject({ status: 'unknown', code: 'timeout' });

      bed.behaviour = { kind: 'answer', result: answer(503) };
      const read = await callTool(bed.deps, procurementAgent, tools.list, argumentsOf({}));
      expect(read).toMatchObject({ status: 'failed', code: 'http_503' });
      expect(bed.sent).toHaveLength(2);
      expect((await recordsOf(bed)).map((record) => record.status).sort()).toEqual(['failed', 'unknown']);
    },
  );
});

describe('a call held for approval', () => {
  it(
    verifies(
      'approvals.pending-at-once',
      'answers pending_approval at once, sends nothing, and starts its approval run',
    ),
    async () => {
      const bed = await useCaseBed();
      const asked = bed.clock.now();

      const result = await callTool(bed.deps, procurementAgent, tools.create, order('1500.00'));

      expect(result).toMatchObject({ status: 'pending_approval', code: null, result: null });
      expect(bed.sent).toEqual([]);
      const record = await bed.record(result.execution_id ?? '');
      expect(record).toMatchObject({
        status: 'pending_approval',
        arguments_json: '{"amount":"1500","vendor":"acme"}',
        expires_at: new Date(asked + approvalMs).toISOString(),
        claimed_at: null,
        task_token: null,
        decision: {
          effect: 'allow',
          step: humanStep({ staff: 'finance', customer: false }),
          determining: [{ name: 'large-orders' }],
        },
      });
      expect(bed.started).toEqual([
        { execution_id: record.execution_id, agent_id: procurementAgent.id, timeout_seconds: approvalMs / 1000 },
      ]);
      // It holds one of the agent's places for calls waiting for approval.
      const places = await bed.store.reservePending(procurementAgent.id, 'probe', 0);
      expect(places).toEqual({ kind: 'full', holders: [record.execution_id] });
    },
  );

  it(
    verifies('approvals.pending-at-once', 'is kept when its approval run cannot start (recovery starts it)'),
    async () => {
      const bed = await useCaseBed();
      const deps = {
        ...bed.deps,
        approvalRuns: { ...bed.deps.approvalRuns, start: () => Promise.reject(new Error('throttled')) },
      };
      const result = await callTool(deps, procurementAgent, tools.create, order('2000'));
      expect(result.status).toBe('pending_approval');
      expect((await bed.record(result.execution_id ?? '')).status).toBe('pending_approval');
      expect(bed.warnings).toEqual(['the approval run did not start; recovery will start it']);
    },
  );
});

describe('the agent’s places for held calls', () => {
  it(
    verifies(
      'limits.pending-calls',
      'a call held beyond pending_calls is denied / too_many_pending and recorded; a decision frees a place',
    ),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ pendingCalls: 2 }) });
      const first = await callTool(bed.deps, procurementAgent, tools.create, order('1500'));
      const second = await callTool(bed.deps, procurementAgent, tools.create, order('1600'));
      expect([first.status, second.status]).toEqual(['pending_approval', 'pending_approval']);

      const third = await callTool(bed.deps, procurementAgent, tools.create, order('1700'));
      expect(third).toMatchObject({ status: 'denied', code: 'too_many_pending' });
      // The message names the limit.
      expect(third.message).toMatch(/\b2\b/);
      expect(await bed.record(third.execution_id ?? '')).toMatchObject({
        status: 'denied',
        code: 'too_many_pending',
        sealed_arguments: null,
        history: [{ status: 'denied' }],
      });
      expect(bed.started.map((start) => start.execution_id)).toEqual([first.execution_id, second.execution_id]);
      // A call that runs at once needs no place.
      expect((await callTool(bed.deps, procurementAgent, tools.create, order('10'))).status).toBe('succeeded');

      const held = await bed.record(first.execution_id ?? '');
      await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'reject',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect((await callTool(bed.deps, procurementAgent, tools.create, order('1800'))).status).toBe('pending_approval');
    },
  );
});

describe('a call refused before anything runs', () => {
  it(
    verifies('invoke.audit', 'the policy refuses it: denied / policy_denied, recorded with the policy that refused'),
    async () => {
      const bed = await useCaseBed();
      const result = await callTool(bed.deps, procurementAgent, tools.create, order('-5'));
      expect(result).toMatchObject({ status: 'denied', code: 'policy_denied', result: null });
      expect(bed.sent).toEqual([]);
      expect(bed.started).toEqual([]);
      expect(await bed.record(result.execution_id ?? '')).toMatchObject({
        status: 'denied',
        arguments_json: '{"amount":"-5","vendor":"acme"}',
        decision: { effect: 'deny', reason: 'forbidden', step: null, determining: [{ name: 'positive-amounts' }] },
        history: [{ status: 'denied' }],
      });
    },
  );

  it(
    verifies('args.refusal', 'invalid arguments: denied / invalid_arguments with every problem, recorded without them'),
    async () => {
      const bed = await useCaseBed();
      const result = await callTool(
        bed.deps,
        procurementAgent,
        tools.create,
        argumentsOf({ vendor: 12, amount: 'lots', colour: 'red' }),
      );
      expect(result).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
      expect(result.input_errors?.map((error) => error.path).sort()).toEqual(['/amount', '/colour', '/vendor']);
      expect(bed.sent).toEqual([]);
      const record = await bed.record(result.execution_id ?? '');
      expect(record).toMatchObject({
        status: 'denied',
        code: 'invalid_arguments',
        arguments_json: null,
        decision: null,
      });
      expect(record.input_errors).toEqual(result.input_errors);
      expect(record.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
    },
  );

  it(
    verifies(
      'call.unknown-tool-recorded',
      'an unknown or turned-off tool: denied / unknown_tool, recorded, nothing sent',
    ),
    async () => {
      const bed = await useCaseBed();
      const unknown = await callTool(bed.deps, procurementAgent, 'erp.orders.delete', argumentsOf({}));
      expect(unknown).toMatchObject({ status: 'denied', code: 'unknown_tool' });
      expect(await bed.record(unknown.execution_id ?? '')).toMatchObject({
        tool: 'erp.orders.delete',
        status: 'denied',
        code: 'unknown_tool',
      });

      bed.use(await benchSnapshot({ withCreate: false }));
      const off = await callTool(bed.deps, procurementAgent, tools.create, order('10'));
      expect(off).toMatchObject({ status: 'denied', code: 'unknown_tool' });
      // An agent outside the groups the policy names sees no tool at all.
      bed.use(await benchSnapshot());
      const stranger = await callTool(
        bed.deps,
        { id: 'stranger', groups: [], customerId: null },
        tools.list,
        argumentsOf({}),
      );
      expect(stranger).toMatchObject({ status: 'denied', code: 'unknown_tool' });
      expect(bed.sent).toEqual([]);
      expect(await recordsOf(bed)).toHaveLength(2);
    },
  );

  it(
    verifies(
      'policy.listing',
      'an unlisted tool answers unknown_tool whatever its arguments: invalid ones reveal nothing',
    ),
    async () => {
      const bed = await useCaseBed();
      const stranger = { id: 'stranger', groups: [], customerId: null };
      const invalid = argumentsOf({ amount: 'ten' });
      expect(await callTool(bed.deps, stranger, tools.create, invalid)).toMatchObject({
        status: 'denied',
        code: 'unknown_tool',
      });
      expect(await callTool(bed.deps, stranger, tools.create, order('10'))).toMatchObject({
        status: 'denied',
        code: 'unknown_tool',
      });
      // The same arguments from an agent that sees the tool: the input errors, then the policy's refusal.
      expect(await callTool(bed.deps, procurementAgent, tools.create, invalid)).toMatchObject({
        status: 'denied',
        code: 'invalid_arguments',
      });
      expect(bed.sent).toEqual([]);
    },
  );
});
