// policy:replay's core over a history the gateway itself recorded (tools/call on the use-case bench,
// the in-memory store): a proposed set that holds one tool that ran at once moves exactly its
// calls, with their ids; a secret a policy reads, a tool gone from the catalog and a call refused
// before the policy are counted apart; the approval load per group is compared per day; a changed
// held step, a call that would be denied and one freed from a hold are each told; a proposed set
// that does not compile is refused at its file and line.
import { beforeAll, describe, expect, it } from 'vitest';
import { type GatewaySnapshot, proposedPolicies } from '../../shared/control-plane/gateway-snapshot.js';
import type { PolicyEngine } from '../../shared/policy/engine.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { replayPolicies } from '../../shared/use-cases/replay-policies.js';
import type { ReplayReport } from '../../shared/use-cases/replay-report.js';
import { anExecution } from '../support/executions.js';
import { verifies } from '../support/requirements.js';
import {
  argumentsOf,
  benchSnapshot,
  procurementAgent,
  standardPolicy,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const hour = 3_600_000;
const day = 24 * hour;

/** The proposal: lookups of any vendor wait for operations; everything else as today. */
const lookupsHeld = standardPolicy.replace(
  '@id("lookups")\n',
  '@id("lookups")\n@approval("staff")\n@approvers("operations")\n',
);

interface History {
  readonly bed: UseCaseBed;
  /** The lookups that ran at once in the window, newest first. */
  readonly lookups: string[];
  readonly restricted: string;
  readonly largeOrder: string;
  /** A small order whose api_key (a secret no policy reads today) was sealed. */
  readonly keyedOrder: string;
  readonly goneTool: string;
  readonly unknownTool: string;
}

/** Eight days of calls through tools/call, an hour apart, and two records the catalog no longer explains. */
const recordHistory = async (): Promise<History> => {
  const bed = await useCaseBed();
  const call = async (tool: string, args: Record<string, unknown>) => {
    bed.clock.advance(hour);
    const answer = await callTool(bed.deps, procurementAgent, tool, argumentsOf(args));
    return answer.execution_id ?? '';
  };
  // Older than the window: never replayed.
  await call('erp.orders.list', { vendor: 'acme' });
  bed.clock.advance(8 * day);
  const lookups: string[] = [];
  for (const vendor of ['acme', 'globex', 'initech', 'umbrella'])
    lookups.unshift(await call('erp.orders.list', { vendor }));
  const restricted = await call('erp.orders.list', { vendor: 'restricted' });
  await call('erp.orders.create', { vendor: 'acme', amount: '200' });
  const largeOrder = await call('erp.orders.create', { vendor: 'acme', amount: '1500' });
  const keyedOrder = await call('erp.orders.create', { vendor: 'acme', amount: '300', api_key: 'k-1' });
  const unknownTool = await call('erp.orders.nope', {});
  bed.clock.advance(hour);
  const gone = anExecution({
    agent_groups: ['procurement'],
    tool: 'erp.invoices.pay',
    status: 'succeeded',
    created_at: new Date(bed.clock.now()).toISOString(),
  });
  await bed.store.create(gone);
  return { bed, lookups, restricted, largeOrder, keyedOrder, goneTool: gone.execution_id, unknownTool };
};

const compiled = (snapshot: GatewaySnapshot, text: string): PolicyEngine => {
  const proposal = proposedPolicies(snapshot, [{ path: 'proposed/policies.cedar', text }]);
  if (!proposal.ok) throw new Error(JSON.stringify(proposal.problems));
  return proposal.policy;
};

const none = { count: 0, examples: [] };

describe('policy replay', () => {
  let snapshot: GatewaySnapshot;
  let history: History;
  const replay = (text: string): Promise<ReplayReport> => {
    const now = history.bed.clock.now();
    const sets = { catalog: snapshot.catalog, current: snapshot.policy, proposed: compiled(snapshot, text) };
    return replayPolicies(history.bed.store, sets, { since: new Date(now - 7 * day).toISOString(), now });
  };

  beforeAll(async () => {
    snapshot = await benchSnapshot();
    history = await recordHistory();
  });

  it(
    verifies('replay.moves', 'a proposal that holds one tool moves exactly its calls, with the newest ids as examples'),
    async () => {
      const report = await replay(lookupsHeld);
      expect([report.read, report.replayed, report.unchanged]).toEqual([10, 8, 4]);
      expect(report.moves).toEqual({
        run_to_held: { count: 4, examples: history.lookups.slice(0, 3) },
        held_to_run: none,
        to_denied: none,
        from_denied: none,
        held_step_changed: none,
      });
      expect(report.tools).toEqual([
        expect.objectContaining({ tool: 'erp.orders.create', replayed: 3, unchanged: 3 }),
        expect.objectContaining({ tool: 'erp.orders.list', replayed: 5, unchanged: 1 }),
      ]);
    },
  );

  it(verifies('replay.approval-load', "each staff group's held calls per day, proposed beside today's"), async () => {
    const report = await replay(lookupsHeld);
    expect(report.days).toBe(7);
    expect(report.approval_load).toEqual([
      { group: 'finance', today: 2, proposed: 2, today_per_day: 0.29, proposed_per_day: 0.29 },
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
        secret: none,
        unknown_tool: { count: 1, examples: [history.goneTool] },
        no_arguments: { count: 1, examples: [history.unknownTool] },
      });
      // A proposal that reads api_key, a secret: the order that sealed one is no longer decided.
      const readsKey = `${standardPolicy}\n@id("no-keys")\nforbid (principal, action == Action::"erp.orders.create", resource)\nwhen { context.arguments has api_key };\n`;
      const reading = await replay(readsKey);
      expect(reading.not_replayable.secret).toEqual({ count: 1, examples: [history.keyedOrder] });
      expect(reading.moves.to_denied).toEqual(none);
    },
  );

  it(
    verifies('replay.moves', 'a changed held step (a quorum), a call that would be denied, a call freed from a hold'),
    async () => {
      const quorum = standardPolicy
        .replace('@id("large-orders")\n@approval("staff")\n', '@id("large-orders")\n@approval("staff")\n@quorum("2")\n')
        .replace('amount.lessThan(decimal("1000.0"))', 'amount.lessThan(decimal("250.0"))');
      const report = await replay(quorum);
      expect(report.moves.held_step_changed).toEqual({ count: 1, examples: [history.largeOrder] });
      expect(report.moves.to_denied).toEqual({ count: 1, examples: [history.keyedOrder] });
      const freed = standardPolicy.replace(
        '@id("restricted-lookups")\n@approval("staff")\n@approvers("finance")\n',
        '',
      );
      expect((await replay(freed)).moves.held_to_run).toEqual({ count: 1, examples: [history.restricted] });
    },
  );

  it(verifies('replay.exit-status', 'a proposed set that does not compile: each problem at its file and line'), () => {
    const broken = proposedPolicies(snapshot, [
      {
        path: 'proposed/policies.cedar',
        text: `${standardPolicy}\n@id("typo")\npermit (principal, action == Action::"erp.nope", resource);\n`,
      },
    ]);
    expect(broken.ok).toBe(false);
    if (broken.ok) return;
    const line = standardPolicy.split('\n').length + 2;
    expect(broken.problems).toEqual([expect.objectContaining({ file: 'proposed/policies.cedar', line })]);
  });
});
