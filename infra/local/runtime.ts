// The local runtime: the one place that wires the gateway together on one machine. It starts the
// demo systems, the local AWS stand-ins (the store with the stack's tables, the Step Functions
// endpoint), loads the configuration, composes the services and serves the very Lambda handler
// modules behind a local API Gateway stand-in; then recovers the calls a stop left open. Each part
// lives in a runtime-*.ts module beside this one; the order they start in (and stop in) is here.

import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import type { ReceiptGateway } from '../../examples/erp/receipt-check.js';
import { systemClock } from '../../shared/clock.js';
import type { ResolvedConfig } from '../../shared/config/resolved.js';
import { mcpPath } from '../../shared/edge/mcp/auth-challenge.js';
import { errorText } from '../../shared/errors.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { receiptIssuerOf } from '../../shared/receipts/claims.js';
import { jwksPath } from '../../shared/receipts/signer.js';
import type { ApprovalServices } from '../../shared/use-cases/approval-services.js';
import type { RecoveryReport } from '../../shared/use-cases/recovery.js';
import type { LocalAwsCredentials } from './aws-signature.js';
import type { LocalConfigSource } from './config-source.js';
import { localDataKey } from './data-key.js';
import { startHeldCallUpkeep } from './escalation-timers.js';
import { urlHost } from './net.js';
import { type LocalOptions, logLevelOf } from './options.js';
import { localReceiptKey } from './receipt-key.js';
import { startRetentionSweep } from './retention-sweep.js';
import { startLocalApprovalRuns, startLocalStore } from './runtime-aws.js';
import { loadLocalConfiguration, localLoggers } from './runtime-configuration.js';
import { startDemoSystems } from './runtime-demo-systems.js';
import { startLocalFronts } from './runtime-fronts.js';
import { RuntimeStops, StartupError } from './runtime-lifecycle.js';
import { backgroundCalls, recoverAtStart, startUnsettledGauge } from './runtime-recovery.js';
import { composeLocalServices, type LinkBase } from './runtime-services.js';
import type { LocalStepFunctions } from './step-functions.js';

export { localTableNames } from './dynamodb.js';

export interface LocalRuntime {
  readonly baseUrl: string;
  readonly mcpUrl: string;
  readonly port: number;
  /** The gRPC tool gateway's address (host:port). */
  readonly grpcAddress: string;
  readonly dynamodbEndpoint: string;
  /** The run's credential: the store and the Step Functions endpoint refuse requests not signed with it. */
  readonly awsCredentials: LocalAwsCredentials;
  /** The owner-only AWS config file naming that credential and both endpoints, if one was written. */
  readonly awsConfigFile: string | null;
  /** The local Step Functions endpoint running the approval run. */
  readonly stepFunctions: LocalStepFunctions;
  /** What recovery found and did at start. */
  readonly recovered: RecoveryReport;
  /** The approval services the approval run and the console use (for tools and tests in this process). */
  readonly approvals: ApprovalServices;
  /** The demo ERP's address, when it runs. */
  readonly erpUrl: string | null;
  /** The demo call-tool proxy's address, when it runs. */
  readonly demoToolsUrl: string | null;
  /** The demo MCP server's endpoint, when it runs. */
  readonly demoMcpUrl: string | null;
  readonly config: () => ResolvedConfig;
  readonly controlPlane: LocalConfigSource;
  readonly configFile: string;
  /** The tools listed now (besides get_execution_status). */
  toolNames(): string[];
  readonly store: ExecutionStore;
  stop(): Promise<void>;
}

export interface RuntimeEnvironment {
  /** Variables the configuration's `${env:NAME}` references (and GATEWAY_SECRET_ variables) are resolved from. */
  readonly variables: Readonly<Record<string, string | undefined>>;
  /** Overrides the options' level (tests composing a runtime in code). */
  readonly logLevel?: LogLevel;
  /** How often the configuration files are checked for changes. @default 1000 */
  readonly configCheckMs?: number;
}

/** A key the runtime keeps in its data folder; one it cannot read or use stops the start with the reason. */
const keptKey = async <T>(read: (dataDir: string | null) => Promise<T>, options: LocalOptions): Promise<T> => {
  try {
    return await read(options.memory ? null : options.dataDir);
  } catch (error) {
    throw new StartupError(errorText(error));
  }
};

export const startLocalRuntime = async (
  options: LocalOptions,
  environment: RuntimeEnvironment,
): Promise<LocalRuntime> => {
  const stops = new RuntimeStops();
  try {
    // The demo ERP checks receipts against the gateway, whose address is known once it listens.
    let receiptGateway: ReceiptGateway | null = null;
    const demo = await startDemoSystems(options, environment.variables, stops, () => receiptGateway);
    const logLevel = environment.logLevel ?? logLevelOf(options.logLevel);
    const logger = localLoggers(logLevel);
    const configuration = await loadLocalConfiguration(
      options,
      demo.variables,
      { logLevel, logger, configCheckMs: environment.configCheckMs ?? 1_000 },
      stops,
    );
    const { config, controlPlane } = configuration;
    const local = await startLocalStore(options, logger('store'), stops);
    // The data key for secret argument values at rest (console sessions are signed with a key
    // derived from it), and the key approval receipts are signed with.
    const dataKey = await keptKey((dataDir) => localDataKey(config().settings.data_key, dataDir), options);
    const receiptKey = await keptKey(localReceiptKey, options);
    const publicUrl = config().settings.public_url ?? null;
    const stepsLogger = logger('held-call-steps');
    const runs = await startLocalApprovalRuns(options, local, stepsLogger, stops);
    // Links in notifications name the console; the front's port is known once it listens.
    const links: LinkBase = { base: publicUrl ?? `http://${urlHost(options.host)}:${options.port}` };
    const parts = { options, configuration, local, dataKey, receiptKey, publicUrl, runs, links, logger, stepsLogger };
    const composed = composeLocalServices(parts, stops);
    const background = backgroundCalls(stepsLogger, stops);
    const { front, grpcGateway } = await startLocalFronts({ ...parts, ...composed }, stops);
    // Requests in flight finish (the front refuses new ones until it closes), then calls recovery
    // runs in the background, then workflow steps under way (an approved call being sent).
    stops.onDrain(
      () => front.drain(),
      () => grpcGateway.close(),
      () => background.settled(),
      () => runs.stepFunctions.drain(),
    );
    const baseUrl = `http://${urlHost(options.host)}:${front.port}`;
    links.base = publicUrl ?? baseUrl;
    receiptGateway = { issuer: receiptIssuerOf(links.base), jwksUri: `${baseUrl}${jwksPath}` };
    const recovered = await recoverAtStart(composed.services, background, stepsLogger);
    // settings.retention locally too: the embedded store has no time to live, so a sweep deletes
    // what AWS's would (retain_until passed), at start and every few minutes.
    stops.onClose(startRetentionSweep(local.dynamodb.documents, systemClock, logger('retention')));
    startUnsettledGauge({ store: local.store, metrics: configuration.metrics }, stepsLogger, stops);
    startHeldCallUpkeep({ ...composed, metrics: configuration.metrics }, stepsLogger, stops);
    return {
      baseUrl,
      mcpUrl: `${baseUrl}${mcpPath}`,
      port: front.port,
      grpcAddress: `${urlHost(options.host)}:${grpcGateway.port}`,
      dynamodbEndpoint: local.dynamodb.endpoint,
      awsCredentials: local.awsCredentials,
      awsConfigFile: runs.awsConfigFile,
      stepFunctions: runs.stepFunctions,
      recovered,
      approvals: composed.services,
      erpUrl: demo.erpUrl,
      demoToolsUrl: demo.demoToolsUrl,
      demoMcpUrl: demo.demoMcpUrl,
      config,
      controlPlane,
      configFile: options.config,
      toolNames: () => controlPlane.lastGood?.catalog.tools.map((tool) => tool.name) ?? [],
      store: local.store,
      stop: stops.stop,
    };
  } catch (error) {
    await stops.stop();
    throw error;
  }
};
