// The local runtime: the one place that wires the gateway together on one machine. It starts the
// embedded store, creates the tables from the stack's definitions, loads the configuration and
// serves the very Lambda handler modules behind a local API Gateway stand-in.
//
// Long: it is the composition root, the one file that wires every local adapter; splitting it would
// spread the wiring it exists to show in one place.
import { hkdfSync } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { SFNClient } from '@aws-sdk/client-sfn';
import { startDemoCallToolProxy } from '../../examples/call-tool-proxy/server.js';
import { startDemoErp } from '../../examples/erp/server.js';
import { startReferenceMcpServer } from '../../examples/reference-mcp/server.js';
import { invocationMetrics } from '../../functions/commons/metrics.js';
import { createHeldCallStepsFunction } from '../../functions/held-call-steps.js';
import { createMcpFunction } from '../../functions/mcp.js';
import { createResourceMetadataFunction } from '../../functions/resource-metadata.js';
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import { DynamoDbSessionStore } from '../../shared/adapters/dynamodb/console-sessions.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { configTable, executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { EmfMetrics } from '../../shared/adapters/emf-metrics.js';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import { McpServerClient } from '../../shared/adapters/mcp-server-client.js';
import { StepFunctionsApprovalRuns } from '../../shared/adapters/step-functions-approval-runs.js';
import { ToolServers } from '../../shared/adapters/tool-servers.js';
import { ConfiguredWebhooks, LogNotifier, Notifiers } from '../../shared/approvals/notifier.js';
import { systemClock } from '../../shared/clock.js';
import { formatProblem, type ResolvedConfig } from '../../shared/config/resolved.js';
import { McpCatalogs } from '../../shared/control-plane/mcp-catalogs.js';
import { consoleLink, customerLink } from '../../shared/edge/console/paths.js';
import { startGrpcGateway } from '../../shared/edge/grpc/gateway.js';
import { mcpPath } from '../../shared/edge/mcp/auth-challenge.js';
import { errorText } from '../../shared/errors.js';
import { measuredStore } from '../../shared/executions/measured-store.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { noMetrics } from '../../shared/metrics.js';
import { HmacSessionSigner } from '../../shared/sessions/session.js';
import type { ApprovalServices } from '../../shared/use-cases/approval-services.js';
import type { CallStep } from '../../shared/use-cases/call-tool.js';
import { identifyCaller } from '../../shared/use-cases/identify-caller.js';
import { type RecoveryReport, recoverOpenExecutions } from '../../shared/use-cases/recovery.js';
import { approvalDefinition } from '../state-machine/definition.js';
import { createLocalAuthorizer } from './authorizer.js';
import { writeLocalAwsConfig } from './aws-config-file.js';
import { type LocalAwsCredentials, newLocalAwsCredentials } from './aws-signature.js';
import { createCallToolFront } from './call-tool-front.js';
import { LocalConfigSource } from './config-source.js';
import { createConsoleFunction } from './console.js';
import { localDataKey } from './data-key.js';
import { type DataLock, lockDataFolder } from './data-lock.js';
import {
  ensureTables,
  type LocalDynamoDb,
  localAwsClientConfig,
  localTableNames,
  OutdatedTableError,
  startLocalDynamoDb,
} from './dynamodb.js';
import { lambdaContext, startHttpFront } from './http-front.js';
import { localSecrets } from './local-secrets.js';
import { McpCatalogFiles, McpPinFiles, mcpCatalogFolder } from './mcp-catalog-files.js';
import { metricLinesOf } from './metric-lines.js';
import { isLoopback, urlHost } from './net.js';
import { type LocalOptions, logLevelOf } from './options.js';
import { startRetentionSweep } from './retention-sweep.js';
import { type LocalFunction, type LocalStepFunctions, startLocalStepFunctions } from './step-functions.js';

export { localTableNames } from './dynamodb.js';

/** How often metrics recorded outside a request (the gRPC front, the channel, recovery) are written. */
const metricsFlushMs = 10_000;

/** The local names of the approval run and its function (as ARNs, like AWS would give). */
const localApprovalRuns = {
  stateMachineName: 'gateway-approvals',
  functionArn: 'arn:aws:lambda:local:000000000000:function:gateway-held-call-steps',
} as const;

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

export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/**
 * Fault injection for tests (GATEWAY_CRASH_AT): the process kills itself at a step of a direct
 * write, as a crash or a power cut would, to prove that nothing is lost or sent twice.
 */
const crashProbe = (step: CallStep) => (reached: CallStep) => {
  if (reached === step) process.kill(process.pid, 'SIGKILL');
};

export interface RuntimeEnvironment {
  /** Variables the configuration's `${env:NAME}` references (and GATEWAY_SECRET_ variables) are resolved from. */
  readonly variables: Readonly<Record<string, string | undefined>>;
  /** Overrides the options' level (tests composing a runtime in code). */
  readonly logLevel?: LogLevel;
  /** How often the configuration files are checked for changes. @default 1000 */
  readonly configCheckMs?: number;
}

export const startLocalRuntime = async (
  options: LocalOptions,
  environment: RuntimeEnvironment,
): Promise<LocalRuntime> => {
  const cleanups: (() => Promise<void>)[] = [];
  /** A clean stop drains first, in order (nothing new taken, work in flight finished), then closes. */
  const drains: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const drain of drains.splice(0)) await drain();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    // The demo ERP first: the demo configuration names its address through DEMO_ERP_URL.
    let variables = environment.variables;
    let erpUrl: string | null = null;
    if (options.demoErp) {
      const erp = await startDemoErp({ port: options.erpPort });
      cleanups.push(() => erp.close());
      erpUrl = erp.url;
      variables = { ...variables, DEMO_ERP_URL: erp.url };
    }
    // The demo call-tool proxy likewise, through DEMO_CALL_TOOL_URL (its MCP server starts on first use).
    // On loopback whatever --host says, like the other demo systems: its credential is published in the
    // demo configuration, so only the gateway beside it may call its tools.
    let demoToolsUrl: string | null = null;
    if (options.demoTools) {
      const proxy = await startDemoCallToolProxy({ port: options.demoToolsPort });
      cleanups.push(() => proxy.close());
      demoToolsUrl = proxy.url;
      variables = { ...variables, DEMO_CALL_TOOL_URL: proxy.url };
    }
    // The demo MCP server too: the demo configuration names it through DEMO_MCP_URL.
    let demoMcpUrl: string | null = null;
    if (options.demoMcp) {
      const reference = await startReferenceMcpServer({ port: options.demoMcpPort });
      cleanups.push(() => reference.close());
      demoMcpUrl = reference.url;
      variables = { ...variables, DEMO_MCP_URL: reference.url };
    }
    const logLevel = environment.logLevel ?? logLevelOf(options.logLevel);
    const logger = (serviceName: string) => new Logger({ serviceName, logLevel, persistentKeys: { runtime: 'local' } });
    // One MCP client for discovery and calls, so both reuse each server's connection.
    const mcpClient = new McpServerClient();
    cleanups.push(() => mcpClient.close());
    // The metrics the functions write in AWS, as the same embedded-metric-format lines: flushed after
    // each request or step, and every few seconds for what else runs here (metric-lines.ts says where).
    const metricLines = metricLinesOf(logLevel, options.memory ? null : options.dataDir);
    const emf =
      metricLines.to === 'none' ? null : new EmfMetrics(metricLines.to === 'file' ? { write: metricLines.write } : {});
    const metrics = emf ?? noMetrics;
    const mcpCatalogs = new McpCatalogs(
      mcpClient,
      options.memory ? null : new McpCatalogFiles(mcpCatalogFolder(options.dataDir)),
      systemClock,
      logger('mcp-discovery'),
      options.memory ? null : new McpPinFiles(mcpCatalogFolder(options.dataDir)),
      metrics,
    );
    const controlPlane = new LocalConfigSource(
      options.config,
      variables,
      systemClock,
      logger('control-plane'),
      mcpCatalogs,
      localSecrets(options.memory ? null : options.dataDir, variables),
    );
    const loaded = await controlPlane.load();
    if (!loaded.ok) {
      throw new StartupError(
        `The configuration is not valid, so the gateway did not start:\n${loaded.problems.map(formatProblem).join('\n')}`,
      );
    }
    controlPlane.watch(environment.configCheckMs ?? 1_000);
    cleanups.push(async () => controlPlane.stop());
    const config = () => controlPlane.lastGood?.config ?? loaded.snapshot.config;
    if (options.anonymousAgent !== null && !config().agents.some((agent) => agent.id === options.anonymousAgent)) {
      throw new StartupError(
        `--anonymous-agent names "${options.anonymousAgent}", which is not an agent of ${options.config}.`,
      );
    }

    let lock: DataLock | undefined;
    if (!options.memory) {
      lock = await lockDataFolder(options.dataDir);
      cleanups.push(() => lock?.release() ?? Promise.resolve());
    }
    // One credential per run: only this process's clients (and whoever may read the data folder) can sign.
    const awsCredentials = newLocalAwsCredentials();
    const storeLogger = logger('store');
    const dynamodb: LocalDynamoDb = await startLocalDynamoDb({
      dataPath: options.memory ? null : join(options.dataDir, 'dynamodb'),
      // Calls are refused with a temporary error meanwhile; the store tries the folder again at each one.
      onFault: (fault) =>
        fault.kind === 'failing'
          ? storeLogger.error('the local store cannot read or write its data folder: calls are refused until it can', {
              data_folder: options.dataDir,
              error: fault.error,
            })
          : storeLogger.info('the local store works again', { failed_operations: fault.faults }),
      port: options.dynamodbPort,
      credentials: awsCredentials,
      crashBetweenIndexAndRecord: options.crashAt === 'between-index-and-record',
    });
    cleanups.push(() => dynamodb.close());
    try {
      await ensureTables(dynamodb.client, [
        { definition: executionsTable, tableName: localTableNames.executions },
        { definition: configTable, tableName: localTableNames.config },
      ]);
    } catch (error) {
      if (error instanceof OutdatedTableError)
        throw new StartupError(`${error.message} (data folder: ${options.dataDir})`);
      throw error;
    }
    const store = new DynamoDbExecutionStore(dynamodb.documents, localTableNames.executions);
    let dataKey: Buffer;
    try {
      dataKey = await localDataKey(config().settings.data_key, options.memory ? null : options.dataDir);
    } catch (error) {
      throw new StartupError(errorText(error));
    }

    const publicUrl = config().settings.public_url ?? null;
    /** Browser origins /mcp and /tool/call-tool accept: pages of the gateway's own loopback names. */
    const allowedOrigins = ['localhost', '127.0.0.1', '[::1]'];
    const allowedHostnames = [
      'localhost',
      '127.0.0.1',
      '[::1]',
      ...(isLoopback(options.host) ? [] : [urlHost(options.host)]),
    ];

    // The approval run: the repo's ASL on the local Step Functions endpoint, its tasks run by
    // the same held-call steps function Lambda runs.
    const functions = new Map<string, LocalFunction>();
    const stepsLogger = logger('held-call-steps');
    const stepFunctions = await startLocalStepFunctions({
      host: '127.0.0.1',
      port: options.stepFunctionsPort,
      stateMachineName: localApprovalRuns.stateMachineName,
      definition: approvalDefinition({ Partition: 'aws', HeldCallStepsFunction: localApprovalRuns.functionArn }),
      functions,
      onError: (message, error) => stepsLogger.error(message, { error }),
      credentials: awsCredentials,
    });
    cleanups.push(() => stepFunctions.close());
    const awsConfigFile = options.awsConfigFile ?? (options.memory ? null : join(options.dataDir, 'aws-config'));
    if (awsConfigFile !== null) {
      await writeLocalAwsConfig(awsConfigFile, {
        credentials: awsCredentials,
        dynamodbEndpoint: dynamodb.endpoint,
        stepFunctionsEndpoint: stepFunctions.endpoint,
      });
      // The credential dies with the run.
      cleanups.push(() => rm(awsConfigFile, { force: true }));
    }
    const sfnClient = new SFNClient(localAwsClientConfig(stepFunctions.endpoint, awsCredentials));
    cleanups.push(async () => sfnClient.destroy());

    // Links in notifications name the console; the front's port is known once it listens.
    let linkBase = publicUrl ?? `http://${urlHost(options.host)}:${options.port}`;
    const approvalsLogger = logger('approvals');
    const toolServers = new ToolServers({ mcp: mcpClient });
    const flushedMetrics =
      emf === null ? { flush: () => undefined } : invocationMetrics(emf, { controlPlane, clock: systemClock });
    const metricsTimer = setInterval(() => flushedMetrics.flush(), metricsFlushMs);
    metricsTimer.unref();
    cleanups.push(async () => {
      clearInterval(metricsTimer);
      flushedMetrics.flush();
    });
    const services: ApprovalServices = {
      store: measuredStore(store, metrics),
      clock: systemClock,
      controlPlane,
      sealer: new AesSealer(dataKey),
      systems: new HttpSystemClient(),
      toolServers,
      log: logger('calls'),
      approvalRuns: new StepFunctionsApprovalRuns(sfnClient, stepFunctions.stateMachineArn),
      notifier: new Notifiers(
        [new LogNotifier(approvalsLogger), new ConfiguredWebhooks(controlPlane, approvalsLogger, metrics)],
        approvalsLogger,
        metrics,
      ),
      consoleUrl: (executionId) => consoleLink(linkBase, executionId),
      ...(options.crashAt === null || options.crashAt === 'between-index-and-record'
        ? {}
        : { probe: crashProbe(options.crashAt) }),
    };
    const heldCallStepsFunction = createHeldCallStepsFunction({
      services,
      logger: stepsLogger,
      metrics: flushedMetrics,
    });
    functions.set(localApprovalRuns.functionArn, (payload) =>
      heldCallStepsFunction(payload, lambdaContext('gateway-held-call-steps', 900_000)),
    );
    // Calls recovery runs in the background finish before the store closes.
    const inflight = new Set<Promise<unknown>>();
    cleanups.push(async () => {
      await Promise.allSettled([...inflight]);
    });

    const mcpServices = {
      ...services,
      ids: uuidV7Ids,
      customerUrl: (executionId: string) => customerLink(linkBase, executionId),
    };
    // One gate for the agents' HTTP requests: /mcp and /tool/call-tool count against the same limits.
    const requestGate = new RequestGate(systemClock);
    const mcp = createMcpFunction({
      services: mcpServices,
      metrics: flushedMetrics,
      requestGate,
      logger: logger('mcp'),
      allowedHostnames,
      allowedOrigins,
      // The handlers name the gateway by the configured public URL, else by the address the front
      // is bound to (known once it listens, before any request): never by a request's Host header.
      get publicUrl() {
        return linkBase;
      },
    });
    const metadata = createResourceMetadataFunction({
      logger: logger('resource-metadata'),
      get publicUrl() {
        return linkBase;
      },
      // Local tokens come from the configuration: there is no authorization server to name.
      authorizationServers: [],
    });
    const consoleFunction = createConsoleFunction({
      services,
      metrics: flushedMetrics,
      // Sessions are signed with a key derived from the data key: they survive a restart on disk.
      signer: new HmacSessionSigner(
        Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'approval-gateway console sessions', 32)),
      ),
      // Kept in the store as in AWS: a restart keeps them, and signing out ends them.
      sessions: new DynamoDbSessionStore(dynamodb.documents, localTableNames.executions),
      signIn: { kind: 'local', people: async () => config().approvers, customers: async () => config().customers },
      logger: logger('console'),
      get publicUrl() {
        return linkBase;
      },
    });
    const authorize = createLocalAuthorizer({
      agents: () => config().agents,
      anonymousAgent: options.anonymousAgent,
    });
    const frontLogger = logger('local-front');
    const channel = createCallToolFront({
      services: mcpServices,
      gate: requestGate,
      authorize,
      allowedHostnames,
      allowedOrigins,
      publicUrl,
      log: logger('call-tool'),
      paramsWaitMs: options.channelParamsWaitMs,
    });
    const front = await startHttpFront({
      host: options.host,
      port: options.port,
      authorize,
      publicUrl,
      channel,
      onError: (error) => frontLogger.error('unhandled error in the local front', { error }),
      routes: [
        { method: 'ANY', path: mcpPath, functionName: 'mcp', fn: mcp, authorize: true, timeoutMs: 30_000 },
        // The customer's pages (approval_url) are served by the console function, as in AWS.
        ...['/console', '/customer'].map((path) => ({
          method: 'ANY',
          path,
          prefix: true,
          functionName: 'console',
          fn: consoleFunction,
          authorize: false,
          timeoutMs: 30_000,
        })),
        ...['/.well-known/oauth-protected-resource', `/.well-known/oauth-protected-resource${mcpPath}`].map((path) => ({
          method: 'GET',
          path,
          functionName: 'resource-metadata',
          fn: metadata,
          authorize: false,
          timeoutMs: 5_000,
        })),
      ],
    });
    cleanups.push(() => front.close());
    // The gRPC tool gateway: same services, same agents (a local token names its entry).
    const grpcGateway = await startGrpcGateway({
      host: options.host,
      port: options.grpcPort,
      services: mcpServices,
      authenticate: async (token) => {
        const authorization = await authorize(`Bearer ${token}`);
        return authorization.kind === 'authorized' ? identifyCaller(mcpServices, authorization.caller) : null;
      },
      // The agents' limits of settings.limits, kept for the gRPC front (the HTTP front keeps its own).
      requestGate: new RequestGate(systemClock),
      log: logger('grpc'),
    });
    cleanups.push(() => grpcGateway.close());
    // Requests in flight finish (the front refuses new ones until it closes), then calls recovery
    // runs in the background, then workflow steps under way (an approved call being sent).
    drains.push(
      () => front.drain(),
      () => grpcGateway.close(),
      async () => {
        await Promise.allSettled([...inflight]);
      },
      () => stepFunctions.drain(),
    );
    const baseUrl = `http://${urlHost(options.host)}:${front.port}`;
    linkBase = publicUrl ?? baseUrl;

    // Nothing lost: every open call resumes (pending with its remaining time, approved by the
    // claim rules). The data lock makes this process the only one that can be sending.
    const recovered = await recoverOpenExecutions(services, 'restart', (work) => {
      const tracked = work.catch((error: unknown) => stepsLogger.error('a recovered call failed', { error }));
      inflight.add(tracked);
      void tracked.finally(() => inflight.delete(tracked));
    });
    if (recovered.resumed + recovered.expired + recovered.executed + recovered.settled > 0) {
      stepsLogger.info('open calls recovered', { ...recovered });
    }
    // settings.retention locally too: the embedded store has no time to live, so a sweep deletes
    // what AWS's would (retain_until passed), at start and every few minutes.
    cleanups.push(startRetentionSweep(dynamodb.documents, systemClock, logger('retention')));

    return {
      baseUrl,
      mcpUrl: `${baseUrl}${mcpPath}`,
      port: front.port,
      grpcAddress: `${urlHost(options.host)}:${grpcGateway.port}`,
      dynamodbEndpoint: dynamodb.endpoint,
      awsCredentials,
      awsConfigFile,
      stepFunctions,
      recovered,
      approvals: services,
      erpUrl,
      demoToolsUrl,
      demoMcpUrl,
      config,
      controlPlane,
      configFile: options.config,
      toolNames: () => controlPlane.lastGood?.catalog.tools.map((tool) => tool.name) ?? [],
      store,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};
