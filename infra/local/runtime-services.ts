// The local runtime's service composition: the approval services every side of a call uses (the
// same use-cases and adapters as in AWS, wired to the local stand-ins), the held-call steps function
// the approval run invokes, and the metrics flushed for what runs outside a request.
import type { KeyObject } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import { type InvocationMetrics, invocationMetrics } from '../../functions/commons/metrics.js';
import { createHeldCallStepsFunction } from '../../functions/held-call-steps.js';
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import { KeyReceiptSigner } from '../../shared/adapters/key-receipt-signer.js';
import { ExecutionWriteFeed } from '../../shared/adapters/memory/execution-write-feed.js';
import { StepFunctionsApprovalRuns } from '../../shared/adapters/step-functions-approval-runs.js';
import { ToolServers } from '../../shared/adapters/tool-servers.js';
import { ConfiguredWebhooks, LogNotifier, Notifiers } from '../../shared/approvals/notifier.js';
import { systemClock } from '../../shared/clock.js';
import { consoleLink, customerLink } from '../../shared/edge/console/paths.js';
import type { McpServices } from '../../shared/edge/mcp/server.js';
import { measuredStore } from '../../shared/executions/measured-store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import type { ReceiptSigner } from '../../shared/receipts/signer.js';
import type { ApprovalServices } from '../../shared/use-cases/approval-services.js';
import type { CallStep } from '../../shared/use-cases/call-tool.js';
import { EscalationTimers } from './escalation-timers.js';
import { lambdaContext } from './http-front.js';
import type { LocalOptions } from './options.js';
import { type LocalApprovalRuns, type LocalStore, localApprovalRuns } from './runtime-aws.js';
import type { LocalConfiguration } from './runtime-configuration.js';
import type { LoggerFor, RuntimeStops } from './runtime-lifecycle.js';

/** How often metrics recorded outside a request (the gRPC front, the channel, recovery) are written. */
const metricsFlushMs = 10_000;

/**
 * Fault injection for tests (GATEWAY_CRASH_AT): the process kills itself at a step of a direct
 * write, as a crash or a power cut would, to prove that nothing is lost or sent twice.
 */
const crashProbe = (step: CallStep) => (reached: CallStep) => {
  if (reached === step) process.kill(process.pid, 'SIGKILL');
};

/** The base URL links in notifications and pages name; the front's port is known once it listens. */
export interface LinkBase {
  base: string;
}

export interface LocalServices {
  readonly services: ApprovalServices & { readonly receiptSigner: ReceiptSigner };
  /** The services with what the agents' fronts add: ids for new calls, the customer's page. */
  readonly mcpServices: McpServices;
  readonly flushedMetrics: InvocationMetrics;
  /** The escalation timers of held calls (./escalation-timers.ts), started with the upkeep. */
  readonly escalations: EscalationTimers;
}

interface LocalServiceParts {
  readonly options: LocalOptions;
  readonly configuration: LocalConfiguration;
  readonly local: LocalStore;
  readonly dataKey: Buffer;
  /** The P-256 key approval receipts are signed with (the data folder's, or one per run in memory). */
  readonly receiptKey: KeyObject;
  readonly runs: LocalApprovalRuns;
  readonly links: LinkBase;
  readonly logger: LoggerFor;
  readonly stepsLogger: Logger;
}

/** Flushes the metrics every few seconds, and once more at the stop. */
const flushedMetricsOf = (parts: LocalServiceParts, stops: RuntimeStops): InvocationMetrics => {
  const { emf, controlPlane } = parts.configuration;
  const flushed =
    emf === null ? { flush: () => undefined } : invocationMetrics(emf, { controlPlane, clock: systemClock });
  const timer = setInterval(() => flushed.flush(), metricsFlushMs);
  timer.unref();
  stops.onClose(async () => {
    clearInterval(timer);
    flushed.flush();
  });
  return flushed;
};

export const composeLocalServices = (parts: LocalServiceParts, stops: RuntimeStops): LocalServices => {
  const { options, configuration, links, logger } = parts;
  const { controlPlane, metrics } = configuration;
  const approvalsLogger = logger('approvals');
  const flushedMetrics = flushedMetricsOf(parts, stops);
  const escalations = new EscalationTimers(parts.stepsLogger);
  // This process writes every decision and outcome itself: a tasks/result still working waits on
  // the call's next writes instead of reading it again (docs/adr/0090-waiting-for-a-decision-costs-nothing.md).
  const writes = new ExecutionWriteFeed();
  const services: LocalServices['services'] = {
    store: measuredStore(parts.local.store, metrics, (execution) => writes.written(execution)),
    clock: systemClock,
    controlPlane,
    sealer: new AesSealer(parts.dataKey),
    receiptSigner: new KeyReceiptSigner(parts.receiptKey),
    // The gateway's public URL, or the front's own once it listens.
    receiptIssuer: () => links.base,
    systems: new HttpSystemClient(),
    toolServers: new ToolServers({ mcp: configuration.mcpClient }),
    log: logger('calls'),
    approvalRuns: new StepFunctionsApprovalRuns(parts.runs.sfnClient, parts.runs.stepFunctions.stateMachineArn),
    notifier: new Notifiers(
      [new LogNotifier(approvalsLogger), new ConfiguredWebhooks(controlPlane, approvalsLogger, metrics)],
      approvalsLogger,
      metrics,
    ),
    // A call's escalation timer is set when its approvers are first told of it, from its record.
    noticed: (execution) => escalations.watch(execution),
    consoleUrl: (executionId) => consoleLink(links.base, executionId),
    ...(options.crashAt === null || options.crashAt === 'between-index-and-record'
      ? {}
      : { probe: crashProbe(options.crashAt) }),
  };
  const heldCallStepsFunction = createHeldCallStepsFunction({
    services,
    logger: parts.stepsLogger,
    metrics: flushedMetrics,
  });
  parts.runs.functions.set(localApprovalRuns.functionArn, (payload) =>
    heldCallStepsFunction(payload, lambdaContext('gateway-held-call-steps', 900_000)),
  );
  const mcpServices: McpServices = {
    ...services,
    ids: uuidV7Ids,
    customerUrl: (executionId: string) => customerLink(links.base, executionId),
    executionWrites: writes,
  };
  return { services, mcpServices, flushedMetrics, escalations };
};
