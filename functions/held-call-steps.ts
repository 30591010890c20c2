// The approval run's tasks: Step Functions invokes this function to register the task token
// (and notify approvers), to run an approved call once, and to expire a call nobody decided.
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import {
  executeApproved,
  expireApproval,
  type HeldCallStepsDeps,
  registerApproval,
} from '../shared/use-cases/held-call-steps.js';
import { heldCallStepsServicesFor, serviceLogger } from './commons/aws.js';
import { processSenderEnvironment } from './commons/environment.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { functionMetrics, type InvocationMetrics, invocationMetrics } from './commons/metrics.js';
import { withTaskMiddleware } from './commons/middleware.js';
import { timeLeftMs } from './commons/time-left.js';

const key = { execution_id: z.uuid(), agent_id: z.string().min(1) };

/** What the state machine sends (see infra/state-machine/approval.asl.json). */
const HeldCallStep = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('register'),
    ...key,
    task_token: z.string().min(1),
    timeout_seconds: z.number().int().min(1),
  }),
  z.object({ action: z.literal('execute'), ...key }),
  z.object({ action: z.literal('expire'), ...key }),
]);
export type HeldCallStep = z.infer<typeof HeldCallStep>;

export interface HeldCallStepResult {
  /** The execution's status after the task (`missing` when no such execution exists). */
  readonly status: string;
}

export interface HeldCallStepsFunctionDeps {
  readonly services: HeldCallStepsDeps;
  readonly logger: Logger;
  /** Flushed after every step. @default none */
  readonly metrics?: InvocationMetrics | null;
}

export const createHeldCallStepsFunction = (deps: HeldCallStepsFunctionDeps) => {
  const handle = async (event: unknown): Promise<HeldCallStepResult> => {
    const parsed = HeldCallStep.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`The state machine step is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
    }
    const task = parsed.data;
    deps.logger.appendKeys({ execution_id: task.execution_id, action: task.action });
    const taskKey = { execution_id: task.execution_id, agent_id: task.agent_id };
    switch (task.action) {
      case 'register':
        return registerApproval(deps.services, { ...taskKey, task_token: task.task_token });
      case 'execute':
        return { status: (await executeApproved(deps.services, taskKey))?.status ?? 'missing' };
      case 'expire':
        return { status: (await expireApproval(deps.services, taskKey))?.status ?? 'missing' };
    }
  };
  return withTaskMiddleware(handle, { logger: deps.logger, metrics: deps.metrics ?? null });
};

export const handler = lazyHandler(() => {
  const logger = serviceLogger('held-call-steps');
  const metrics = functionMetrics();
  const services = { ...heldCallStepsServicesFor(processSenderEnvironment(), logger, metrics), timeLeftMs };
  return createHeldCallStepsFunction({ services, logger, metrics: invocationMetrics(metrics, services) });
});
