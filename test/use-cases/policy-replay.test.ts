// policy:replay's core over a recorded history in the in-memory store: a proposed set that holds
// one tool that ran at once moves exactly its calls, with their ids; a call whose decision would
// read a secret, a tool gone from the catalog and a call refused before the policy are counted
// apart; the approval load per group is compared per day; a proposed set that does not compile
// is refused at its file and line.
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryExecutionStore } from '../../shared/adapters/memory/execution-store.js';
import { type GatewaySnapshot, proposedPolicies } from '../../shared/control-plane/gateway-snapshot.js';
import type { DecisionRecord, Execution } from '../../shared/executions/execution.js';
import type { PolicyEngine } from '../../shared/policy/engine.js';
import { type ReplayReport, replayPolicies } from '../../shared/use-cases/replay-policies.js';
import { anExecution } from '../support/executions.js';
import { quietLog } from '../support/logs.js';
import { replayConfig as config, replayTodayPolicies as today } from '../support/replay-fixture.js';
import { verifies } from '../support/requirements.js';
import { snapshotOf } from '../support/snapshots.js';

const day = 86_400_000;
const now = Date.parse('2026-12-03T12:00:00Z');
const since = new Date(now - 7 * day).toISOString();

/** The proposal: lookups wait for operations; everything else as today. */
const lookupsHeld = today.replace('@id("lookups")\n', '@id("lookups")\n@approval("staff")\n@approvers("operations")\n');

const allowed = (policy: string, step: DecisionRecord['step'] = null): DecisionRecord => ({
  effect: 'allow',
  reason: null,
  determining: [{ name: policy, file: 'policies.cedar', line: 1 }],
  step,
  config_version: 'v-recorded',
});

interface History {
  readonly store: MemoryExecutionStore;
  /** The lookups in the window, newest first. */
  readonly lookups: string[];
  readonly largeOrder: string;
  readonly keyUpdate: string;
  readonly goneTool: string;
  readonly refusedUnread: string;
  readonly unreadSecretOrder: string;
}

/** A week of calls (and one older), as the gateway records them. */
const recordHistory = async (): Promise<History> => {
  const store = new MemoryExecutionStore(quietLog);
  const put = async (hoursAgo: number, fields: Partial<Execution>): Promise<string> => {
    const execution = anExecution({
      agent_id: 'procurement-agent',
      agent_groups: ['procurement'],
      status: 'succeeded',
      created_at: new Date(now - hoursAgo * 3_600_000).toISOString(),
      ...fields,
    });
    expect(await store.create(execution)).toEqual({ kind: 'created' });
    return execution.execution_id;
  };
  const lookup = (hoursAgo: number) =>
    put(hoursAgo, { tool: 'erp.orders.list', arguments_json: '{"vendor":"acme"}', decision: allowed('lookups') });
  const lookups = [await lookup(100), await lookup(50), await lookup(20), await lookup(2)].reverse();
  // Older than the window: not replayed.
  await lookup(8 * 24);
  // The agent's groups at the time count, not today's: a support agent's lookup stays refused.
  await put(30, { tool: 'erp.orders.list', agent_groups: ['support'], arguments_json: '{}', status: 'denied' });
  await put(40, { tool: 'erp.orders.create', arguments_json: '{"amount":200}', decision: allowed('small-orders') });
  const largeOrder = await put(10, {
    tool: 'erp.orders.create',
    status: 'pending_approval',
    arguments_json: '{"amount":5000}',
  });
  // A hidden value in a field no policy reads: the call is decided without it.
  const unreadSecretOrder = await put(12, {
    tool: 'erp.orders.create',
    arguments_json: '{"amount":300,"note":"[REDACTED]"}',
    sealed_arguments: 'SEALED',
    secret_pointers: ['/note'],
  });
  const keyUpdate = await put(5, {
    tool: 'erp.vendors.update',
    arguments_json: '{"api_key":"[REDACTED]"}',
    sealed_arguments: 'SEALED',
    secret_pointers: ['/api_key'],
  });
  const goneTool = await put(6, { tool: 'erp.invoices.pay', arguments_json: '{"amount":1}' });
  const refusedUnread = await put(7, { tool: 'erp.orders.create', arguments_json: null, status: 'denied' });
  return { store, lookups, largeOrder, keyUpdate, goneTool, refusedUnread, unreadSecretOrder };
};

const proposed = (snapshot: GatewaySnapshot, text: string): PolicyEngine => {
  const compiled = proposedPolicies(snapshot, [{ path: 'proposed/policies.cedar', text }]);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.policy;
};

const none = { count: 0, examples: [] };

describe('policy replay', () => {
  let snapshot: GatewaySnapshot;
  let history: History;
  const replay = (text: string): Promise<ReplayReport> =>
    replayPolicies(
      history.store,
      { catalog: snapshot.catalog, current: snapshot.policy, proposed: proposed(snapshot, text) },
      { since, now },
    );

  beforeAll(async () => {
    snapshot = await snapshotOf(config, { files: { 'policies.cedar': today } });
    history = await recordHistory();
  });

  it(
    verifies('replay.moves', 'a proposal that holds one tool moves exactly its calls, with the newest ids as examples'),
    async () => {
      const report = await replay(lookupsHeld);
      expect(report.read).toBe(11);
      expect(report.replayed).toBe(8);
      expect(report.unchanged).toBe(4);
      expect(report.moves).toEqual({
        run_to_held: { count: 4, examples: history.lookups.slice(0, 3) },
        held_to_run: none,
        to_denied: none,
        from_denied: none,
        held_step_changed: none,
      });
      const lookups = report.tools.find((tool) => tool.tool === 'erp.orders.list');
      expect(lookups).toMatchObject({ replayed: 5, unchanged: 1, moves: { run_to_held: { count: 4 } } });
      expect(report.tools.find((tool) => tool.tool === 'erp.orders.create')).toMatchObject({
        replayed: 2 + 1,
        unchanged: 3,
      });
    },
  );

  it(verifies('replay.approval-load', "each staff group's held calls per day, proposed beside today's"), async () => {
    const report = await replay(lookupsHeld);
    expect(report.days).toBe(7);
    expect(report.approval_load).toEqual([
      { group: 'finance', today: 1, proposed: 1, today_per_day: 0.14, proposed_per_day: 0.14 },
      { group: 'operations', today: 0, proposed: 4, today_per_day: 0, proposed_per_day: 0.57 },
    ]);
  });

  it(
    verifies(
      'replay.not-replayable',
      'a secret a policy reads, a tool gone from the catalog, arguments refused unread: counted apart, never decided',
    ),
    async () => {
      const report = await replay(lookupsHeld);
      expect(report.not_replayable).toEqual({
        secret: { count: 1, examples: [history.keyUpdate] },
        unknown_tool: { count: 1, examples: [history.goneTool] },
        no_arguments: { count: 1, examples: [history.refusedUnread] },
      });
      // A proposal that reads the note (a hidden value) makes that order not replayable too.
      const readsNote = `${today}\n@id("no-notes")\nforbid (principal, action == Action::"erp.orders.create", resource)\nwhen { context.arguments has note };\n`;
      const reading = await replay(readsNote);
      expect(reading.not_replayable.secret).toEqual({
        count: 2,
        examples: [history.keyUpdate, history.unreadSecretOrder],
      });
      expect(reading.moves.to_denied).toEqual(none);
    },
  );

  it(
    verifies('replay.moves', 'a changed held step (a quorum), a call that would be denied, a call freed from a hold'),
    async () => {
      const quorum = today
        .replace('@approvers("finance")\n', '@approvers("finance")\n@quorum("2")\n')
        .replace('when { context.arguments.amount < 1000 };', 'when { context.arguments.amount < 250 };');
      const report = await replay(quorum);
      expect(report.moves.held_step_changed).toEqual({ count: 1, examples: [history.largeOrder] });
      expect(report.moves.to_denied.count).toBe(1);
      const freed = today.replace('@approval("staff")\n@approvers("finance")\n', '');
      expect((await replay(freed)).moves.held_to_run).toEqual({ count: 1, examples: [history.largeOrder] });
    },
  );

  it(verifies('replay.exit-status', 'a proposed set that does not compile: each problem at its file and line'), () => {
    const broken = proposedPolicies(snapshot, [
      {
        path: 'proposed/policies.cedar',
        text: `${today}\n@id("typo")\npermit (principal, action == Action::"erp.nope", resource);\n`,
      },
    ]);
    expect(broken.ok).toBe(false);
    if (broken.ok) return;
    expect(broken.problems).toEqual([expect.objectContaining({ file: 'proposed/policies.cedar', line: 19 })]);
  });
});
