// Escalation in the local runtime, on time: a held call escalating after 2 s is escalated and its
// escalation group told about 2 s later, not at the next pass. A timer is set for each call when its
// approvers are first told of it (the notice), and by the upkeep's pass (every minute, and at
// start, so calls held before a restart get theirs) for each call due before the pass after next.
// The notice's timer is set from the record the held-call steps have in hand (their `noticed`).
// The pass is the safety net; a timer that fires finds the record as it is then, so a call decided
// or escalated meanwhile changes nothing.
import type { Logger } from '@aws-lambda-powertools/logger';
import { escalatesAt } from '../../shared/approvals/escalation.js';
import type { Execution } from '../../shared/executions/execution.js';
import { type EscalationDeps, escalateIfDue, passOverHeldCalls } from '../../shared/use-cases/escalation.js';
import { startPeriodicTask } from './periodic-task.js';
import type { RuntimeStops } from './runtime-lifecycle.js';

/** How often the upkeep passes over the held calls (as often as the AWS reconciler runs). */
const heldCallPassMs = 60_000;

/** Sets a timer; the answer cancels it. (Tests drive it by hand.) */
export type Schedule = (run: () => void, delayMs: number) => () => void;

const nodeSchedule: Schedule = (run, delayMs) => {
  const timer = setTimeout(run, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
};

export class EscalationTimers {
  private readonly timers = new Map<string, () => void>();
  private readonly running = new Set<Promise<void>>();
  private deps: EscalationDeps | null = null;

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
    private readonly schedule: Schedule = nodeSchedule,
  ) {}

  /** Starts acting on timers (before, calls are only watched). */
  start(deps: EscalationDeps): void {
    this.deps = deps;
  }

  /** Sets a timer for the call's escalation if it comes before the pass after next (once per call). */
  watch(execution: Execution, at: number | null = escalatesAt(execution)): void {
    const now = this.deps?.clock.now() ?? Date.now();
    const id = execution.execution_id;
    if (execution.status !== 'pending_approval' || execution.escalated_at !== null) return;
    if (at === null || this.timers.has(id) || at - now > 2 * heldCallPassMs) return;
    const cancel = this.schedule(
      () => {
        this.timers.delete(id);
        this.track(this.escalate(id));
      },
      Math.max(0, at - now),
    );
    this.timers.set(id, cancel);
  }

  /** Cancels every timer and waits for escalations under way. */
  async stop(): Promise<void> {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }

  private async escalate(executionId: string): Promise<void> {
    const deps = this.deps;
    const execution = await deps?.store.get(executionId);
    if (deps === null || execution === undefined) return;
    // A timer that fires a moment early is set again for what is left.
    const at = escalatesAt(execution);
    if (at !== null && at > deps.clock.now()) this.watch(execution, at);
    else await escalateIfDue(deps, execution);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) =>
      this.log.warn('a held call could not be escalated on time; the next pass tries again', { error }),
    );
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }
}

/**
 * The local upkeep of held calls: a pass now and every minute that escalates what is due, sets the
 * timers of what comes before the next passes, and publishes the calls waiting per group.
 */
export const startHeldCallUpkeep = (
  upkeep: {
    readonly services: EscalationDeps;
    readonly escalations: EscalationTimers;
    readonly metrics: NonNullable<EscalationDeps['metrics']>;
  },
  log: Pick<Logger, 'warn'>,
  stops: RuntimeStops,
): void => {
  const deps = { ...upkeep.services, metrics: upkeep.metrics };
  const timers = upkeep.escalations;
  timers.start(deps);
  const pass = async () => {
    await passOverHeldCalls(deps, (execution, at) => timers.watch(execution, at)).catch((error: unknown) =>
      log.warn('the held calls could not be passed over; the next pass tries again', { error }),
    );
  };
  const stopPasses = startPeriodicTask(pass, heldCallPassMs);
  stops.onClose(async () => {
    await stopPasses();
    await timers.stop();
  });
};
