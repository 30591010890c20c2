// AWS clients for the deployed functions, built once per container from the parsed environment.
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDbBundlePointers } from '../../shared/adapters/dynamodb/config-store.js';
import { defaultEventBridgeClient, EventBridgeNotifier } from '../../shared/adapters/eventbridge-notifier.js';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import { KmsBundleSignatures } from '../../shared/adapters/kms-bundle-signatures.js';
import { defaultKmsClient } from '../../shared/adapters/kms-client.js';
import { KmsReceiptSigner } from '../../shared/adapters/kms-receipt-signer.js';
import { KmsSealer } from '../../shared/adapters/kms-sealer.js';
import { defaultS3Client, S3BundleObjects } from '../../shared/adapters/s3-bundle-objects.js';
import { defaultSecretsManagerClient, SecretsManagerSecrets } from '../../shared/adapters/secrets-manager-secrets.js';
import { ToolServers } from '../../shared/adapters/tool-servers.js';
import { ConfiguredWebhooks, LogNotifier, type Notifier, Notifiers } from '../../shared/approvals/notifier.js';
import { systemClock } from '../../shared/clock.js';
import type { ControlPlane } from '../../shared/control-plane/control-plane.js';
import { SignedBundleStore } from '../../shared/control-plane/signed-bundles.js';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import { customerLink } from '../../shared/edge/console/paths.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { reportingRefusedCredentials, type SystemClient } from '../../shared/invoke/system-client.js';
import type { ToolServerClient } from '../../shared/invoke/tool-server.js';
import type { GatewayMetrics } from '../../shared/metrics.js';
import type { ReceiptSigner } from '../../shared/receipts/signer.js';
import type { Sealer } from '../../shared/sealing.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';
import type { HeldCallStepsDeps } from '../../shared/use-cases/held-call-steps.js';
import type { RecoveryDeps } from '../../shared/use-cases/recovery.js';
import { approvalRunsFor, consoleUrlFor, documentClient, executionStoreFor, publicBaseOf } from './aws-store.js';
import {
  type ApprovalEnvironment,
  type FunctionEnvironment,
  referenceVariables,
  type SenderEnvironment,
} from './environment.js';

export { serviceLogger } from './logger.js';

/** The configuration as pushed, with the secrets it names read from this stack's prefix. */
const controlPlaneFor = (environment: FunctionEnvironment, logger: Logger): StoredControlPlane =>
  new StoredControlPlane(
    // The table's pointer at each refresh; the bundle object, checked against its hash and the
    // signing key's signature (kms:Verify), only when the pointer names a new version.
    new SignedBundleStore(
      new DynamoDbBundlePointers(documentClient(), environment.CONFIG_TABLE),
      new S3BundleObjects(defaultS3Client, environment.CONFIG_BUCKET),
      new KmsBundleSignatures(defaultKmsClient, environment.CONFIG_SIGNING_KEY_ID),
    ),
    referenceVariables(),
    systemClock,
    logger,
    environment.CONFIG_REFRESH_SECONDS * 1000,
    environment.SECRETS_PREFIX === undefined
      ? 'unread'
      : new SecretsManagerSecrets(
          defaultSecretsManagerClient,
          environment.SECRETS_PREFIX,
          environment.SECRETS_MAX_AGE_SECONDS,
        ),
  );

/** The container's system client, telling the control plane when a system refuses its credentials. */
const systemsFor = (controlPlane: StoredControlPlane): SystemClient =>
  reportingRefusedCredentials(systemClient(), () => controlPlane.credentialsRefused());

let sealer: Sealer | undefined;
const sealerFor = (environment: FunctionEnvironment): Sealer => {
  sealer ??= new KmsSealer(defaultKmsClient, environment.DATA_KEY_ID);
  return sealer;
};

let receiptSigner: ReceiptSigner | undefined;
/** The container's receipt signer: kms:Sign on the receipt key, its public key read once. */
const receiptSignerFor = (environment: SenderEnvironment): ReceiptSigner => {
  receiptSigner ??= new KmsReceiptSigner(defaultKmsClient, environment.RECEIPT_KEY_ID);
  return receiptSigner;
};

let systems: SystemClient | undefined;
/** One client (and connection pool) per container, made by the functions that send calls only. */
const systemClient = (): SystemClient => {
  systems ??= new HttpSystemClient();
  return systems;
};

let toolServers: ToolServerClient | undefined;
/** One tool-server client per container: connections to MCP servers are reused across calls. */
const toolServerClient = (): ToolServerClient => {
  toolServers ??= new ToolServers();
  return toolServers;
};

/** Customer links (approval_url). */
const customerUrlFor =
  (environment: ApprovalEnvironment) =>
  (executionId: string): string =>
    customerLink(publicBaseOf(environment), executionId);

const notifierFor = (
  environment: ApprovalEnvironment,
  controlPlane: ControlPlane,
  logger: Logger,
  metrics: GatewayMetrics | null,
): Notifier =>
  new Notifiers(
    [
      new LogNotifier(logger),
      new ConfiguredWebhooks(controlPlane, logger, metrics),
      ...(environment.EVENT_BUS_NAME === undefined
        ? []
        : [new EventBridgeNotifier(defaultEventBridgeClient, environment.EVENT_BUS_NAME)]),
    ],
    logger,
    metrics,
  );

/** What every function that sends calls to systems needs: recovery's set but the receipt signer. */
const sendingServicesFor = (
  environment: ApprovalEnvironment,
  logger: Logger,
  metrics: GatewayMetrics | null,
): Omit<RecoveryDeps, 'receiptSigner'> & { readonly controlPlane: StoredControlPlane } => {
  const controlPlane = controlPlaneFor(environment, logger);
  return {
    store: executionStoreFor(environment, logger, metrics),
    clock: systemClock,
    systems: systemsFor(controlPlane),
    toolServers: toolServerClient(),
    log: logger,
    controlPlane,
    sealer: sealerFor(environment),
    receiptIssuer: () => publicBaseOf(environment),
    approvalRuns: approvalRunsFor(environment),
  };
};

/**
 * What the functions that send approved calls need (the reconciler; the held-call steps build on
 * it): every call's services, and the receipt signer. Only these sign: the agents' fronts never do.
 */
const recoveryServicesFor = (
  environment: SenderEnvironment,
  logger: Logger,
  metrics: GatewayMetrics | null = null,
): RecoveryDeps & { readonly controlPlane: StoredControlPlane; readonly receiptSigner: ReceiptSigner } => ({
  ...sendingServicesFor(environment, logger, metrics),
  receiptSigner: receiptSignerFor(environment),
});

/** What the state machine's steps need (functions/held-call-steps.ts): recovery's, and notices. */
export const heldCallStepsServicesFor = (
  environment: SenderEnvironment,
  logger: Logger,
  metrics: GatewayMetrics | null = null,
): HeldCallStepsDeps & { readonly receiptSigner: ReceiptSigner } => {
  const services = recoveryServicesFor(environment, logger, metrics);
  return {
    ...services,
    notifier: notifierFor(environment, services.controlPlane, logger, metrics),
    consoleUrl: consoleUrlFor(environment),
  };
};

/** What the agents' fronts need (the MCP function, and the gRPC service's container). */
export const agentServicesFor = (
  environment: ApprovalEnvironment,
  logger: Logger,
  metrics: GatewayMetrics | null = null,
): CallToolDeps => ({
  ...sendingServicesFor(environment, logger, metrics),
  ids: uuidV7Ids,
  customerUrl: customerUrlFor(environment),
});
