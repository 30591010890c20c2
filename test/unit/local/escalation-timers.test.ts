// Where the escalation pass runs: on each reconciler pass in AWS, and in the local runtime on time,
// by a timer per held call (set when its approvers are first told, and by the upkeep's pass at start
// for calls held before a restart), with the pass every minute as the safety net.
import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it, vi } from 'vitest';
import { createReconcilerFunction } from '../../../functions/reconciler.js';
import { EscalationTimers, type Schedule, startHeldCallUpkeep } from '../../../infra/local/escalation-timers.js';
import { lambdaContext } from '../../../infra/local/http-front.js';
import { RuntimeStops } from '../../../infra/local/runtime-lifecycle.js';
import { EmfMetrics } from '../../../shared/adapters/emf-metrics.js';
import type { Execution } from '../../../shared/executions/execution.js';
import { noMetrics } from '../../../shared/metrics.js';
import { registerApproval } from '../../../shared/use-cases/held-call-steps.js';
import { parseEmfLines, valuesOf } from '../../support/emf.js';
import { verifies } from '../../support/requirements.js';
import { benchSnapshot, holdLargeOrder, operationsPolicy, useCaseBed } from '../../support/use-case-bed.js';

const logger = new Logger({ serviceName: 'escalation-test', logLevel: 'ERROR' });
const context = lambdaContext('gateway-reconciler', 60_000);

/** Large orders decided by finance, escalated to operations after `after`. */
const escalatingBed = async (after: string) =>
  useCaseBed({
    snapshot: await benchSnapshot({
      policy: operationsPolicy.replace(
        '@approvers("operations")',
        `@approvers("finance")\n@escalate("${after}, operations")`,
      ),
    }),
  });

/** Timers the test fires by hand: what was set, with its delay. */
const manualSchedule = () => {
  const set: { run: () => void; delayMs: number; cancelled: boolean }[] = [];
  const schedule: Schedule = (run, delayMs) => {
    const timer = { run, delayMs, cancelled: false };
    set.push(timer);
    return () => {
      timer.cancelled = true;
    };
  };
  return { set, schedule };
};

describe('escalation in the local runtime', () => {
  it(
    verifies(
      ['escalation.where-it-runs', 'perf.held-escalation-timer-no-read'],
      'a timer set when approvers are first told (from the record in hand, no second read) escalates the call at its time',
    ),
    async () => {
      const bed = await escalatingBed('2s');
      const timers = manualSchedule();
      const escalations = new EscalationTimers(logger, timers.schedule);
      const deps = { ...bed.deps, noticed: (execution: Execution) => escalations.watch(execution) };
      escalations.start(deps);
      const held = await holdLargeOrder(bed);

      // The timer is set from the record the register step has in hand: no second read of it.
      const reads = [vi.spyOn(bed.store, 'get'), vi.spyOn(bed.store, 'getOwned')];
      await registerApproval(deps, { ...held, task_token: 't-1' });
      expect(timers.set.map((timer) => timer.delayMs)).toEqual([2_000]);
      expect(reads.map((read) => read.mock.calls.length)).toEqual([0, 0]);
      for (const read of reads) read.mockRestore();
      expect(bed.notices.map((notice) => notice.escalated_to)).toEqual([null]);

      bed.clock.advance(2_000);
      timers.set[0]?.run();
      await vi.waitFor(() => expect(bed.notices).toHaveLength(2));
      expect(bed.notices[1]).toMatchObject({ execution_id: held.execution_id, escalated_to: 'operations' });
      expect((await bed.record(held.execution_id)).escalated_at).toBe(new Date(bed.clock.now()).toISOString());
      await escalations.stop();
    },
  );

  it(
    verifies('escalation.where-it-runs', 'after a restart the first pass sets the timers of calls held before it'),
    async () => {
      const bed = await escalatingBed('90s');
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 't-1' });
      bed.clock.advance(30_000);

      // A new runtime: no timer from before survives; its first pass, at start, sets one.
      const timers = manualSchedule();
      const escalations = new EscalationTimers(logger, timers.schedule);
      const stops = new RuntimeStops();
      startHeldCallUpkeep({ services: bed.deps, escalations, metrics: noMetrics }, logger, stops);
      await vi.waitFor(() => expect(timers.set.map((timer) => timer.delayMs)).toEqual([60_000]));

      // A timer that fires early is set again for what is left; then the call escalates.
      bed.clock.advance(59_000);
      timers.set[0]?.run();
      await vi.waitFor(() => expect(timers.set.map((timer) => timer.delayMs)).toEqual([60_000, 1_000]));
      bed.clock.advance(1_000);
      timers.set[1]?.run();
      await vi.waitFor(() => expect(bed.notices.map((notice) => notice.escalated_to)).toEqual([null, 'operations']));
      await stops.stop();
    },
  );
});

describe('escalation in AWS', () => {
  it(
    verifies(
      ['escalation.where-it-runs', 'load.metrics'],
      'each reconciler pass escalates what is due and counts the calls waiting per group',
    ),
    async () => {
      const bed = await escalatingBed('30m');
      const held = await holdLargeOrder(bed);
      const written: string[] = [];
      const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
      const reconcile = createReconcilerFunction({ services: { ...bed.deps, metrics }, logger, metrics });

      await reconcile({}, context);
      expect(bed.notices).toEqual([]);
      bed.clock.advance(30 * 60_000);
      await reconcile({}, context);
      await reconcile({}, context);

      expect(bed.notices).toEqual([
        expect.objectContaining({ execution_id: held.execution_id, escalated_to: 'operations' }),
      ]);
      expect(valuesOf(parseEmfLines(written), 'PendingApprovals', { Group: 'finance' })).toEqual([1, 1, 1]);
    },
  );
});
