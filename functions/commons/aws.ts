// AWS clients for the deployed functions, built once per container from the parsed environment.
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbConfigStore } from '../../shared/adapters/dynamodb/config-store.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { EventBridgeNotifier } from '../../shared/adapters/eventbridge-notifier.js';
import { KmsSealer } from '../../shared/adapters/kms-sealer.js';
import { StepFunctionsApprovalRuns } from '../../shared/adapters/step-functions-approval-runs.js';
import { UndiciSystemClient } from '../../shared/adapters/undici-system-client.js';
import type { ApprovalRuns } from '../../shared/approvals/approval-runs.js';
import { ConfiguredWebhooks, LogNotifier, type Notifier, Notifiers } from '../../shared/approvals/notifier.js';
import { systemClock } from '../../shared/clock.js';
import { consoleLink } from '../../shared/console/paths.js';
import type { ControlPlane } from '../../shared/control-plane/control-plane.js';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import type { SystemClient } from '../../shared/invoke/system-client.js';
import type { Sealer } from '../../shared/sealing.js';
import type { DecisionDeps } from '../../shared/use-cases/approver-decisions.js';
import type { HeldCallStepsDeps } from '../../shared/use-cases/held-call-steps.js';
import type { RecoveryDeps } from '../../shared/use-cases/recovery.js';
import { type ApprovalEnvironment, type FunctionEnvironment, referenceVariables } from './environment.js';

export { serviceLogger } from './logger.js';

let documents: DynamoDBDocumentClient | undefined;
const documentClient = (): DynamoDBDocumentClient => {
  documents ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return documents;
};

export const executionStoreFor = (environment: FunctionEnvironment): ExecutionStore =>
  new DynamoDbExecutionStore(documentClient(), environment.EXECUTIONS_TABLE);

export const controlPlaneFor = (environment: FunctionEnvironment, logger: Logger): ControlPlane =>
  new StoredControlPlane(
    new DynamoDbConfigStore(documentClient(), environment.CONFIG_TABLE),
    referenceVariables(),
    systemClock,
    logger,
    environment.CONFIG_REFRESH_SECONDS * 1000,
  );

let sealer: Sealer | undefined;
export const sealerFor = (environment: FunctionEnvironment): Sealer => {
  sealer ??= new KmsSealer(new KMSClient({}), environment.DATA_KEY_ID);
  return sealer;
};

let systems: SystemClient | undefined;
/** One client (and connection pool) per container, made by the functions that send calls only. */
export const systemClient = (): SystemClient => {
  systems ??= new UndiciSystemClient();
  return systems;
};

let approvalRuns: ApprovalRuns | undefined;
export const approvalRunsFor = (environment: ApprovalEnvironment): ApprovalRuns => {
  approvalRuns ??= new StepFunctionsApprovalRuns(new SFNClient({}), environment.STATE_MACHINE_ARN);
  return approvalRuns;
};

/** Console links: the public URL when one is set, else the API's own. */
const consoleUrlFor =
  (environment: ApprovalEnvironment) =>
  (executionId: string): string =>
    consoleLink(environment.PUBLIC_URL ?? environment.API_URL ?? '', executionId);

const notifierFor = (environment: ApprovalEnvironment, controlPlane: ControlPlane, logger: Logger): Notifier =>
  new Notifiers(
    [
      new LogNotifier(logger),
      new ConfiguredWebhooks(controlPlane, logger),
      ...(environment.EVENT_BUS_NAME === undefined
        ? []
        : [new EventBridgeNotifier(new EventBridgeClient({}), environment.EVENT_BUS_NAME)]),
    ],
    logger,
  );

/** What the state machine's steps need (functions/held-call-steps.ts). */
export const heldCallStepsServicesFor = (environment: ApprovalEnvironment, logger: Logger): HeldCallStepsDeps => {
  const controlPlane = controlPlaneFor(environment, logger);
  return {
    store: executionStoreFor(environment),
    clock: systemClock,
    systems: systemClient(),
    log: logger,
    controlPlane,
    sealer: sealerFor(environment),
    approvalRuns: approvalRunsFor(environment),
    notifier: notifierFor(environment, controlPlane, logger),
    consoleUrl: consoleUrlFor(environment),
  };
};

/** What recovery needs (functions/reconciler.ts): it runs approved calls, never notifies. */
export const recoveryServicesFor = (environment: ApprovalEnvironment, logger: Logger): RecoveryDeps => ({
  store: executionStoreFor(environment),
  clock: systemClock,
  systems: systemClient(),
  log: logger,
  controlPlane: controlPlaneFor(environment, logger),
  sealer: sealerFor(environment),
  approvalRuns: approvalRunsFor(environment),
});

/** What approvers' decisions need (functions/console.ts): the store, and the approval runs to tell. */
export const decisionServicesFor = (environment: ApprovalEnvironment, logger: Logger): DecisionDeps => ({
  store: executionStoreFor(environment),
  clock: systemClock,
  log: logger,
  approvalRuns: approvalRunsFor(environment),
});
