// The gateway's operational metrics, from the real use-cases to the EMF lines CloudWatch reads: a
// direct call, a held call and an expiry each count what they should, once, with dimensions drawn
// from small sets only (never an argument, a secret, an execution id or an agent id).
import { describe, expect, it } from 'vitest';
import { EmfMetrics, metricsNamespace } from '../../shared/adapters/emf-metrics.js';
import { Notifiers } from '../../shared/approvals/notifier.js';
import { measuredStore } from '../../shared/executions/measured-store.js';
import { sampleConfigurationAge } from '../../shared/metrics.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { executeApproved, expireApproval } from '../../shared/use-cases/held-call-steps.js';
import { publishUnsettledOutcomes } from '../../shared/use-cases/recovery.js';
import { settleUnknown } from '../../shared/use-cases/settle-unknown.js';
import { withdrawCall } from '../../shared/use-cases/tasks.js';
import { type MetricPoint, parseEmfLine, parseEmfLines, sumOf, valuesOf } from '../support/emf.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  benchSnapshot,
  financeApprover,
  holdLargeOrder,
  procurementAgent,
  tools,
  type UseCaseBed,
  unknownWrite,
  useCaseBed,
} from '../support/use-case-bed.js';

interface MeasuredBed {
  /** The bed whose system answers are set (`behaviour`). */
  readonly bed: UseCaseBed;
  /** The same bed, its store measured. */
  readonly measured: UseCaseBed;
  /** Flushes and returns the EMF lines written since the last read. */
  lines(): string[];
  points(): MetricPoint[];
}

const measuredBed = async (): Promise<MeasuredBed> => {
  const bed = await useCaseBed();
  const written: string[] = [];
  const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
  const measured: UseCaseBed = { ...bed, deps: { ...bed.deps, store: measuredStore(bed.store, metrics) } };
  const lines = () => {
    metrics.flush();
    return written.splice(0);
  };
  return { bed, measured, lines, points: () => parseEmfLines(lines()) };
};

const procurement = { AgentGroup: 'procurement' };

describe('metrics of a direct call', () => {
  it(
    verifies('ops.metrics', 'a call run at once counts its decision by policy, its outcome by tool and group'),
    async () => {
      const { measured, points } = await measuredBed();
      const answer = await callTool(
        measured.deps,
        procurementAgent,
        tools.create,
        argumentsOf({ vendor: 'acme', amount: '500' }),
      );
      expect(answer.status).toBe('succeeded');

      const recorded = points();
      expect(recorded.every((point) => point.namespace === metricsNamespace)).toBe(true);
      expect(sumOf(recorded, 'Decisions', { Decision: 'run_now', Policy: 'small-orders' })).toBe(1);
      expect(sumOf(recorded, 'Calls', { Tool: tools.create, ...procurement, Outcome: 'succeeded' })).toBe(1);
      // A write is claimed, sent and settled: the time from the claim to the outcome.
      expect(valuesOf(recorded, 'SentToSettled')).toHaveLength(1);
      expect(valuesOf(recorded, 'HeldToDecided')).toEqual([]);
      expect(sumOf(recorded, 'UnknownOutcomes')).toBe(0);
      // Nothing is counted twice by a second flush.
      expect(points()).toEqual([]);
    },
  );

  it(
    verifies(
      ['ops.metrics', 'settle.unknown-outcomes-gauge'],
      'a write whose answer was lost counts as an unknown outcome until an operator settles it',
    ),
    async () => {
      const { bed, measured, points } = await measuredBed();
      const unknown = await unknownWrite(bed, measured.deps);
      expect(sumOf(points(), 'Calls', { Tool: tools.create, ...procurement, Outcome: 'unknown' })).toBe(1);

      // The figure is a gauge of the calls not yet settled, published by the reconciler's pass.
      const gauge = async (): Promise<number[]> => {
        const written: string[] = [];
        const emf = new EmfMetrics({ write: (line) => void written.push(line) });
        await publishUnsettledOutcomes({ store: measured.deps.store, metrics: emf });
        emf.flush();
        return valuesOf(parseEmfLines(written), 'UnknownOutcomes');
      };
      expect(await gauge()).toEqual([1]);
      const settled = await settleUnknown(measured.deps, {
        executionId: unknown.execution_id,
        outcome: 'failed',
        reason: 'no order in the ERP',
        by: 'alice',
      });
      expect(settled.kind).toBe('settled');
      expect(await gauge()).toEqual([0]);
      // Settling is no second call: nothing more is counted by outcome.
      expect(sumOf(points(), 'Calls')).toBe(0);
    },
  );

  it(verifies('ops.metrics', 'a refusal counts as denied, by the policy that refused it or none'), async () => {
    const { measured, points } = await measuredBed();
    await callTool(measured.deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme', amount: '-1' }));
    await callTool(measured.deps, { ...procurementAgent, groups: [] }, tools.list, argumentsOf({}));

    const recorded = points();
    expect(sumOf(recorded, 'Decisions', { Decision: 'denied', Policy: 'positive-amounts' })).toBe(1);
    expect(sumOf(recorded, 'Calls', { Tool: tools.create, ...procurement, Outcome: 'denied' })).toBe(1);
    // An agent without groups sees no tool: the call is unlisted, and no policy decided it.
    expect(sumOf(recorded, 'Calls', { Tool: '(unlisted)', AgentGroup: '(none)', Outcome: 'denied' })).toBe(1);
    expect(valuesOf(recorded, 'Decisions', { Decision: 'denied', Policy: '(none)' })).toEqual([]);
  });
});

describe('metrics of a held call', () => {
  it(
    verifies(
      'ops.metrics',
      'a held call counts held, then the time to its decision, to its sending and to its outcome',
    ),
    async () => {
      const { measured, points } = await measuredBed();
      const held = await holdLargeOrder(measured);
      let recorded = points();
      expect(sumOf(recorded, 'Decisions', { Decision: 'held', Policy: 'large-orders' })).toBe(1);
      // Waiting is not an outcome.
      expect(valuesOf(recorded, 'Calls', { Outcome: 'pending_approval' })).toEqual([]);

      measured.clock.advance(5 * 60_000);
      const request = {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      };
      const [first, second] = await Promise.all([
        decide(measured.deps, financeApprover, { ...request, outcome: 'approve' }),
        decide(measured.deps, financeApprover, { ...request, outcome: 'approve' }),
      ]);
      expect([first?.kind, second?.kind].sort()).toEqual(['decided', 'refused']);
      measured.clock.advance(2_000);
      const ran = await executeApproved(measured.deps, held);
      expect(ran?.status).toBe('succeeded');

      recorded = points();
      // A double click decides once and is timed once.
      expect(valuesOf(recorded, 'HeldToDecided')).toEqual([5 * 60_000]);
      expect(valuesOf(recorded, 'DecidedToSent')).toEqual([2_000]);
      expect(valuesOf(recorded, 'SentToSettled')).toEqual([0]);
      expect(sumOf(recorded, 'Calls', { Tool: tools.create, ...procurement, Outcome: 'succeeded' })).toBe(1);
      expect(recorded.find((point) => point.name === 'HeldToDecided')?.unit).toBe('Milliseconds');
    },
  );

  it(verifies('ops.metrics', 'an expiry counts as an expired outcome and as an expiry, once'), async () => {
    const { measured, points } = await measuredBed();
    const held = await holdLargeOrder(measured);
    points();
    measured.clock.advance(approvalMs + 1);
    await Promise.all([expireApproval(measured.deps, held), expireApproval(measured.deps, held)]);

    const recorded = points();
    expect(sumOf(recorded, 'Expiries')).toBe(1);
    expect(sumOf(recorded, 'Calls', { Tool: tools.create, ...procurement, Outcome: 'expired' })).toBe(1);
    expect(valuesOf(recorded, 'HeldToDecided')).toEqual([]);
  });
});

describe('metrics of a withdrawn call', () => {
  it(verifies('ops.metrics', 'a call its agent withdraws counts as rejected, with no decision time'), async () => {
    const { measured, points } = await measuredBed();
    const held = await holdLargeOrder(measured);
    points();
    measured.clock.advance(60_000);
    expect((await withdrawCall(measured.deps, procurementAgent, held.execution_id)).kind).toBe('withdrawn');

    const recorded = points();
    expect(sumOf(recorded, 'Calls', { Tool: tools.create, ...procurement, Outcome: 'rejected' })).toBe(1);
    expect(valuesOf(recorded, 'HeldToDecided')).toEqual([]);
  });
});

describe('metrics of the configuration and the notices', () => {
  it(verifies('ops.metrics', 'the configuration age is measured against its allowed staleness'), async () => {
    const written: string[] = [];
    const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
    const snapshot = await benchSnapshot();
    const allowed = snapshot.config.settings.allowed_staleness;
    sampleConfigurationAge({ lastSyncedAt: 0, lastGood: snapshot }, { now: () => allowed / 4 }, metrics);
    metrics.flush();
    let recorded = parseEmfLines(written.splice(0));
    expect(valuesOf(recorded, 'ConfigurationStaleness')).toEqual([25]);
    expect(valuesOf(recorded, 'ConfigurationAge')).toEqual([Math.round(allowed / 4 / 1000)]);

    // Never loaded: fully stale.
    sampleConfigurationAge({ lastSyncedAt: Number.NEGATIVE_INFINITY, lastGood: null }, { now: () => 0 }, metrics);
    metrics.flush();
    recorded = parseEmfLines(written.splice(0));
    expect(valuesOf(recorded, 'ConfigurationStaleness')).toEqual([100]);
    expect(valuesOf(recorded, 'ConfigurationAge')).toEqual([]);
    expect(recorded.find((point) => point.name === 'ConfigurationStaleness')?.unit).toBe('Percent');
  });

  it(verifies('ops.metrics', 'a notification channel that fails is counted; one that works is not'), async () => {
    const written: string[] = [];
    const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
    const failing = { heldCall: async () => Promise.reject(new Error('webhook answered 500')) };
    const working = { heldCall: async () => undefined };
    const notifiers = new Notifiers(
      [failing, working, failing],
      { info: () => undefined, warn: () => undefined },
      metrics,
    );
    await notifiers.heldCall({
      execution_id: '0190a0a0-0000-7000-8000-000000000001',
      tool: tools.create,
      agent_id: 'procurement-agent',
      customer_id: null,
      staff_group: 'finance',
      customer_confirms: false,
      approvals_needed: 1,
      escalated_to: null,
      summary: '{}',
      console_url: 'http://127.0.0.1/console',
      expires_at: '2026-11-29T13:00:00.000Z',
    });
    metrics.flush();
    expect(sumOf(parseEmfLines(written), 'NotificationFailures')).toBe(2);
  });
});

describe('what metrics may carry', () => {
  it(
    verifies(
      'ops.metrics',
      'no dimension or property carries an argument value, a secret, an execution id or an agent id',
    ),
    async () => {
      const { bed, measured, lines } = await measuredBed();
      const marker = 'ZX-attacker-9q7';
      const secret = 'sk-live-0123456789abcdef';
      const agent = { ...procurementAgent, id: `agent-${marker}` };
      const ids: string[] = [];
      const call = async (name: string, args: Record<string, unknown>) => {
        const answer = await callTool(measured.deps, agent, name, argumentsOf(args));
        if (answer.execution_id !== null) ids.push(answer.execution_id);
      };
      await call(tools.create, { vendor: marker, amount: '10', api_key: secret });
      await call(tools.create, { vendor: marker, amount: '5000', api_key: secret });
      await call(`erp.${marker}`, { vendor: marker });
      await call(tools.list, { vendor: marker, extra: secret });
      bed.behaviour = {
        kind: 'answer',
        result: { kind: 'response', status: 500, contentType: 'text/plain', body: Buffer.from(secret) },
      };
      await call(tools.create, { vendor: marker, amount: '20', api_key: secret });
      const held = await holdLargeOrder(measured, '2500', agent);
      ids.push(held.execution_id);
      measured.clock.advance(approvalMs + 1);
      await expireApproval(measured.deps, held);

      const written = lines();
      expect(written.length).toBeGreaterThan(3);
      const allowedKeys = new Set([
        'service',
        'Tool',
        'AgentGroup',
        'Outcome',
        'Decision',
        'Policy',
        'Calls',
        'Decisions',
        'UnknownOutcomes',
        'Expiries',
        'HeldToDecided',
        'DecidedToSent',
        'SentToSettled',
      ]);
      for (const line of written) {
        for (const forbidden of [marker, secret, agent.id, ...ids]) expect(line).not.toContain(forbidden);
        const { properties, points } = parseEmfLine(line);
        expect(Object.keys(properties).filter((key) => !allowedKeys.has(key))).toEqual([]);
        for (const point of points) {
          const { Tool, AgentGroup, Outcome, Decision, Policy, service } = point.dimensions;
          expect(service).toBe('approval-gateway');
          if (Tool !== undefined) expect(['(unlisted)', tools.create, tools.list]).toContain(Tool);
          if (AgentGroup !== undefined) expect(AgentGroup).toBe('procurement');
          if (Decision !== undefined) expect(['run_now', 'held', 'denied']).toContain(Decision);
          if (Policy !== undefined) {
            expect(['(none)', 'small-orders', 'large-orders', 'lookups', 'restricted-lookups']).toContain(Policy);
          }
          if (Outcome !== undefined) expect(['succeeded', 'failed', 'unknown', 'denied', 'expired']).toContain(Outcome);
        }
      }
      const recorded = parseEmfLines(written);
      expect(sumOf(recorded, 'Calls', { Tool: '(unlisted)', ...procurement, Outcome: 'denied' })).toBe(1);
      expect(sumOf(recorded, 'Calls', { Tool: tools.create, ...procurement, Outcome: 'unknown' })).toBe(1);
    },
  );
});
