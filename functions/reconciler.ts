// The scheduled reconciler: brings open calls forward when something was lost in AWS. A decision
// whose signal never reached its approval run is handed over again (or run here), a call whose
// approval run never started gets one, a call past its approval time expires, and a claim past its
// deadline is settled by the claim rules. A held call past its @escalate time is escalated and its
// escalation group told, and the calls waiting per group are published. Every step is a conditional
// write, so a pass that races an approval run (or another pass) changes nothing twice.
import type { Logger } from '@aws-lambda-powertools/logger';
import { type EscalationDeps, passOverHeldCalls } from '../shared/use-cases/escalation.js';
import {
  publishUnsettledOutcomes,
  type RecoveryDeps,
  type RecoveryReport,
  recoverOpenExecutions,
} from '../shared/use-cases/recovery.js';
import { heldCallStepsServicesFor, serviceLogger } from './commons/aws.js';
import { processSenderEnvironment } from './commons/environment.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { functionMetrics, type InvocationMetrics, invocationMetrics } from './commons/metrics.js';
import { withTaskMiddleware } from './commons/middleware.js';
import { timeLeftMs } from './commons/time-left.js';

export interface ReconcilerFunctionDeps {
  readonly services: RecoveryDeps & EscalationDeps;
  readonly logger: Logger;
  /** Flushed after every pass. @default none */
  readonly metrics?: InvocationMetrics | null;
}

export const createReconcilerFunction = (deps: ReconcilerFunctionDeps) => {
  const handle = async (): Promise<RecoveryReport> => {
    const work: Promise<unknown>[] = [];
    const report = await recoverOpenExecutions(deps.services, 'reconcile', (run) => work.push(run));
    // Calls run here finish within this invocation (their deadlines are shorter than its timeout).
    const results = await Promise.allSettled(work);
    for (const result of results) {
      if (result.status === 'rejected') deps.logger.warn('a recovered call failed to run', { error: result.reason });
    }
    // Published on every pass, so the UnknownOutcomes alarm stays up until the last one is settled.
    const unsettled = await publishUnsettledOutcomes(deps.services);
    // Escalations are told and the waiting calls counted on every pass (the PendingApprovals gauge).
    const held = await passOverHeldCalls(deps.services);
    deps.logger.info('reconciled open calls', { ...report, unsettled, escalated: held.escalated });
    return report;
  };
  return withTaskMiddleware(handle, { logger: deps.logger, metrics: deps.metrics ?? null });
};

export const handler = lazyHandler(() => {
  const logger = serviceLogger('reconciler');
  const metrics = functionMetrics();
  // A held call left without an approval run is counted for the ApprovalRunsLost alarm; an
  // escalation notifies like the held-call steps do.
  const services = { ...heldCallStepsServicesFor(processSenderEnvironment(), logger, metrics), metrics, timeLeftMs };
  return createReconcilerFunction({ services, logger, metrics: invocationMetrics(metrics, services) });
});
