// The functions' metrics: one buffer per function instance, flushed after every invocation whether
// the handler returned or threw, as EMF lines on standard output (what Lambda hands to CloudWatch);
// and the gauge of unknown outcomes not yet settled, published by the reconciler and the local runtime.
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { invocationMetrics } from '../../../functions/commons/metrics.js';
import { withTaskMiddleware } from '../../../functions/commons/middleware.js';
import { createReconcilerFunction } from '../../../functions/reconciler.js';
import { RuntimeStops } from '../../../infra/local/runtime-lifecycle.js';
import { startUnsettledGauge } from '../../../infra/local/runtime-recovery.js';
import { EmfMetrics } from '../../../shared/adapters/emf-metrics.js';
import type { ControlPlane } from '../../../shared/control-plane/control-plane.js';
import { settleUnknown } from '../../../shared/use-cases/settle-unknown.js';
import { parseEmfLines, sumOf, valuesOf } from '../../support/emf.js';
import { verifies } from '../../support/requirements.js';
import { benchSnapshot, unknownWrite, useCaseBed } from '../../support/use-case-bed.js';

const logger = new Logger({ serviceName: 'metrics-test', logLevel: 'ERROR' });
const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'test',
  functionVersion: '1',
  invokedFunctionArn: 'arn:aws:lambda:local:0:function:test',
  memoryLimitInMB: '128',
  awsRequestId: 'r',
  logGroupName: 'g',
  logStreamName: 's',
  getRemainingTimeInMillis: () => 60_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} satisfies Context;

const unknownCall = { tool: 'erp.orders.create', agentGroup: 'procurement', outcome: 'unknown' } as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('flushing per invocation', () => {
  it(
    verifies('ops.metrics', 'flushes once after an invocation that returned, and once after one that threw'),
    async () => {
      const written: string[] = [];
      const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
      let fail = false;
      const handler = withTaskMiddleware(
        async () => {
          metrics.callSettled(unknownCall);
          metrics.callSettled(unknownCall);
          metrics.unsettledOutcomes(2);
          if (fail) throw new Error('the step failed');
          return 'done';
        },
        { logger, metrics: invocationMetrics(metrics) },
      );

      await handler({}, context);
      expect(written).toHaveLength(2);
      expect(
        sumOf(parseEmfLines(written), 'Calls', {
          Tool: 'erp.orders.create',
          AgentGroup: 'procurement',
          Outcome: 'unknown',
        }),
      ).toBe(2);
      expect(valuesOf(parseEmfLines(written), 'UnknownOutcomes')).toEqual([2]);

      fail = true;
      await expect(handler({}, context)).rejects.toThrow('the step failed');
      expect(written).toHaveLength(4);
      expect(valuesOf(parseEmfLines(written), 'UnknownOutcomes')).toEqual([2, 2]);
    },
  );

  it(verifies('ops.metrics', 'samples the configuration age of the control plane the function holds'), async () => {
    const written: string[] = [];
    const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
    const snapshot = await benchSnapshot();
    const allowed = snapshot.config.settings.allowed_staleness;
    const controlPlane: ControlPlane & { lastSyncedAt: number; lastGood: typeof snapshot } = {
      current: async () => ({ kind: 'active', snapshot }),
      lastSyncedAt: 1_000,
      lastGood: snapshot,
    };
    invocationMetrics(metrics, { controlPlane, clock: { now: () => 1_000 + allowed / 2 } }).flush();
    expect(valuesOf(parseEmfLines(written), 'ConfigurationStaleness')).toEqual([50]);

    // A control plane that cannot say when it synced records nothing about it.
    invocationMetrics(metrics, { controlPlane: { current: controlPlane.current }, clock: { now: () => 0 } }).flush();
    expect(written).toHaveLength(1);
  });

  it(verifies('ops.metrics', 'writes to standard output by default, and nothing when nothing was recorded'), () => {
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const metrics = new EmfMetrics();
    metrics.flush();
    expect(lines.filter((line) => line.includes('CloudWatchMetrics'))).toEqual([]);
    metrics.notificationFailed();
    metrics.flush();
    write.mockRestore();
    const emf = lines.filter((line) => line.includes('CloudWatchMetrics')).map((line) => line.trim());
    expect(emf).toHaveLength(1);
    expect(sumOf(parseEmfLines(emf), 'NotificationFailures')).toBe(1);
  });
});

describe('the reconciler', () => {
  it(
    verifies('settle.unknown-outcomes-gauge', 'publishes the unknown outcomes not yet settled on every pass'),
    async () => {
      const bed = await useCaseBed();
      const unknown = await unknownWrite(bed);
      const written: string[] = [];
      const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
      const reconcile = createReconcilerFunction({
        services: { ...bed.deps, metrics },
        logger,
        metrics: invocationMetrics(metrics),
      });
      await reconcile({}, context);
      await settleUnknown(bed.deps, {
        executionId: unknown.execution_id,
        outcome: 'succeeded',
        reason: 'found it in the ERP',
        by: 'alice',
      });
      await reconcile({}, context);
      expect(valuesOf(parseEmfLines(written), 'UnknownOutcomes')).toEqual([1, 0]);
    },
  );
});

describe('the local runtime', () => {
  it(
    verifies('settle.unknown-outcomes-gauge', 'publishes the unknown outcomes not yet settled from its start'),
    async () => {
      const bed = await useCaseBed();
      await unknownWrite(bed);
      const written: string[] = [];
      const metrics = new EmfMetrics({ write: (line) => void written.push(line) });
      const stops = new RuntimeStops();
      startUnsettledGauge({ store: bed.store, metrics }, logger, stops);
      // The stop waits for the count under way: the first, made at the start.
      await stops.stop();
      metrics.flush();
      expect(valuesOf(parseEmfLines(written), 'UnknownOutcomes')).toEqual([1]);
    },
  );
});
