// The AWS clients every approval function needs and nothing more: the executions table and the
// approval state machine. Kept apart from ./aws.ts so the console, which only reads calls and hands
// decisions to their approval runs, bundles no system client, configuration loader or policy engine.
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { executionStoreDocuments } from '../../shared/adapters/dynamodb/store-client.js';
import { defaultEventBridgeClient, EventBridgeNotifier } from '../../shared/adapters/eventbridge-notifier.js';
import {
  defaultStepFunctionsClient,
  StepFunctionsApprovalRuns,
} from '../../shared/adapters/step-functions-approval-runs.js';
import type { ApprovalRuns } from '../../shared/approvals/approval-runs.js';
import { LogNotifier, Notifiers } from '../../shared/approvals/notifier.js';
import { systemClock } from '../../shared/clock.js';
import { consoleLink } from '../../shared/edge/console/paths.js';
import { measuredStore } from '../../shared/executions/measured-store.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { GatewayMetrics } from '../../shared/metrics.js';
import type { DecisionDeps } from '../../shared/use-cases/approver-decisions.js';
import type { ApprovalEnvironment, FunctionEnvironment } from './environment.js';

let documents: DynamoDBDocumentClient | undefined;
export const documentClient = (): DynamoDBDocumentClient => {
  documents ??= executionStoreDocuments(new DynamoDBClient({}));
  return documents;
};

/** The executions table; measured (every decision and outcome counted at its write) when metrics are given. */
export const executionStoreFor = (
  environment: FunctionEnvironment,
  logger: Logger,
  metrics: GatewayMetrics | null = null,
): ExecutionStore =>
  measuredStore(new DynamoDbExecutionStore(documentClient(), environment.EXECUTIONS_TABLE, logger), metrics);

let approvalRuns: ApprovalRuns | undefined;
export const approvalRunsFor = (environment: ApprovalEnvironment): ApprovalRuns => {
  approvalRuns ??= new StepFunctionsApprovalRuns(defaultStepFunctionsClient, environment.STATE_MACHINE_ARN);
  return approvalRuns;
};

/** The gateway's base URL in links and receipts: the public URL when one is set, else the API's own. */
export const publicBaseOf = (environment: ApprovalEnvironment): string =>
  environment.PUBLIC_URL ?? environment.API_URL ?? '';

/** Console links. */
export const consoleUrlFor =
  (environment: ApprovalEnvironment) =>
  (executionId: string): string =>
    consoleLink(publicBaseOf(environment), executionId);

/**
 * What approvers' decisions need (functions/console.ts): the store, the approval runs to tell, and
 * where an approval short of its quorum tells the group how many are still needed: the log and the
 * notice bus (the configured webhooks are the held-call steps' own: the console reads no configuration).
 */
export const decisionServicesFor = (
  environment: ApprovalEnvironment,
  logger: Logger,
  metrics: GatewayMetrics | null = null,
): DecisionDeps => ({
  store: executionStoreFor(environment, logger, metrics),
  clock: systemClock,
  log: logger,
  approvalRuns: approvalRunsFor(environment),
  notifier: new Notifiers(
    [
      new LogNotifier(logger),
      ...(environment.EVENT_BUS_NAME === undefined
        ? []
        : [new EventBridgeNotifier(defaultEventBridgeClient, environment.EVENT_BUS_NAME)]),
    ],
    logger,
    metrics,
  ),
  consoleUrl: consoleUrlFor(environment),
});
