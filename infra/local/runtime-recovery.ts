// Recovery at start: nothing lost across a stop or a crash. Every open call resumes (pending with
// its remaining time, approved by the claim rules); the data lock makes this process the only one
// that can be sending. Calls it resumes run in the background, and a stop waits for them.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { GatewayMetrics } from '../../shared/metrics.js';
import type { ApprovalServices } from '../../shared/use-cases/approval-services.js';
import {
  publishUnsettledOutcomes,
  type RecoveryReport,
  recoverOpenExecutions,
} from '../../shared/use-cases/recovery.js';
import { startPeriodicTask } from './periodic-task.js';
import type { RuntimeStops } from './runtime-lifecycle.js';

/** Calls recovery runs in the background. */
interface BackgroundCalls {
  track(work: Promise<unknown>): void;
  /** Resolves once every call tracked so far has ended. */
  settled(): Promise<void>;
}

/** The calls recovery starts; they finish before the store closes. */
export const backgroundCalls = (log: Logger, stops: RuntimeStops): BackgroundCalls => {
  const inflight = new Set<Promise<unknown>>();
  const settled = async () => {
    await Promise.allSettled([...inflight]);
  };
  stops.onClose(settled);
  return {
    track: (work) => {
      const tracked = work.catch((error: unknown) => log.error('a recovered call failed', { error }));
      inflight.add(tracked);
      void tracked.finally(() => inflight.delete(tracked));
    },
    settled,
  };
};

export const recoverAtStart = async (
  services: ApprovalServices,
  background: BackgroundCalls,
  log: Logger,
): Promise<RecoveryReport> => {
  const recovered = await recoverOpenExecutions(services, 'restart', (work) => background.track(work));
  if (recovered.resumed + recovered.expired + recovered.executed + recovered.settled > 0) {
    log.info('open calls recovered', { ...recovered });
  }
  return recovered;
};

/** How often the local runtime publishes the unknown outcomes not yet settled (as often as the AWS reconciler runs). */
const unsettledGaugeMs = 60_000;

/**
 * The UnknownOutcomes figure locally: counted at start and every minute, one count at a time (the
 * AWS reconciler publishes it on each pass); a count that fails is logged and tried at the next.
 */
export const startUnsettledGauge = (
  deps: { readonly store: ExecutionStore; readonly metrics: GatewayMetrics },
  log: Logger,
  stops: RuntimeStops,
): void => {
  const publish = async () => {
    await publishUnsettledOutcomes(deps).catch((error: unknown) =>
      log.warn('the unknown outcomes could not be counted; counted again later', { error }),
    );
  };
  stops.onClose(startPeriodicTask(publish, unsettledGaugeMs));
};
