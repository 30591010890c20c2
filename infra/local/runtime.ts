// The local runtime: the one place that wires the gateway together on one machine. It starts the
// embedded store, creates the tables from the stack's definitions, loads the configuration and
// serves the very Lambda handler modules behind a local API Gateway stand-in.
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { startDemoErp } from '../../examples/erp/server.js';
import { createMcpFunction } from '../../functions/mcp.js';
import { createResourceMetadataFunction } from '../../functions/resource-metadata.js';
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { configTable, executionsTable } from '../../shared/adapters/dynamodb/tables.js';
import { UndiciSystemClient } from '../../shared/adapters/undici-system-client.js';
import { defaultClaimNames } from '../../shared/auth/agent.js';
import { systemClock } from '../../shared/clock.js';
import { formatProblem, type ResolvedConfig } from '../../shared/config/load.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { mcpPath } from '../../shared/mcp/auth-challenge.js';
import type { CallStep } from '../../shared/use-cases/call-tool.js';
import { createLocalAuthorizer } from './authorizer.js';
import { LocalConfigSource } from './config-source.js';
import { localDataKey } from './data-key.js';
import { type DataLock, lockDataFolder } from './data-lock.js';
import { ensureTables, type LocalDynamoDb, startLocalDynamoDb } from './dynamodb.js';
import { startHttpFront } from './http-front.js';
import { isLoopback, urlHost } from './net.js';
import type { LocalOptions } from './options.js';

export const localTableNames = { executions: 'gateway-executions', config: 'gateway-config' } as const;

export interface LocalRuntime {
  readonly baseUrl: string;
  readonly mcpUrl: string;
  readonly port: number;
  readonly dynamodbEndpoint: string;
  /** The demo ERP's address, when it runs. */
  readonly erpUrl: string | null;
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
  /** Variables the configuration's `${env:NAME}` references are resolved from. */
  readonly variables: Readonly<Record<string, string | undefined>>;
  readonly logLevel?: LogLevel;
  /** How often the configuration files are checked for changes. @default 1000 */
  readonly configCheckMs?: number;
}

export const startLocalRuntime = async (
  options: LocalOptions,
  environment: RuntimeEnvironment,
): Promise<LocalRuntime> => {
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
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
    const logger = (serviceName: string) =>
      new Logger({ serviceName, logLevel: environment.logLevel ?? 'INFO', persistentKeys: { runtime: 'local' } });
    const controlPlane = new LocalConfigSource(options.config, variables, systemClock, logger('control-plane'));
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
    const dynamodb: LocalDynamoDb = await startLocalDynamoDb({
      dataPath: options.memory ? null : join(options.dataDir, 'dynamodb'),
      port: options.dynamodbPort,
    });
    cleanups.push(() => dynamodb.close());
    await ensureTables(dynamodb.client, [
      { definition: executionsTable, tableName: localTableNames.executions },
      { definition: configTable, tableName: localTableNames.config },
    ]);
    const store = new DynamoDbExecutionStore(dynamodb.documents, localTableNames.executions);
    let dataKey: Buffer;
    try {
      dataKey = await localDataKey(config().settings.data_key, options.memory ? null : options.dataDir);
    } catch (error) {
      throw new StartupError(error instanceof Error ? error.message : String(error));
    }

    const publicUrl = config().settings.public_url ?? null;
    const allowedHostnames = [
      'localhost',
      '127.0.0.1',
      '[::1]',
      ...(isLoopback(options.host) ? [] : [urlHost(options.host)]),
    ];

    const mcp = createMcpFunction({
      services: {
        store,
        ids: uuidV7Ids,
        clock: systemClock,
        controlPlane,
        sealer: new AesSealer(dataKey),
        systems: new UndiciSystemClient(),
        log: logger('calls'),
        ...(options.crashAt === null ? {} : { probe: crashProbe(options.crashAt) }),
      },
      logger: logger('mcp'),
      claimNames: defaultClaimNames,
      allowedHostnames,
      allowedOrigins: ['localhost', '127.0.0.1', '[::1]'],
      publicUrl,
    });
    const metadata = createResourceMetadataFunction({
      logger: logger('resource-metadata'),
      publicUrl,
      authorizationServers: [],
    });
    const authorize = createLocalAuthorizer({
      agents: () => config().agents,
      claimNames: defaultClaimNames,
      anonymousAgent: options.anonymousAgent,
    });
    const frontLogger = logger('local-front');
    const front = await startHttpFront({
      host: options.host,
      port: options.port,
      authorize,
      publicUrl: (hostHeader) => publicUrl ?? `http://${hostHeader ?? `${urlHost(options.host)}:${options.port}`}`,
      onError: (error) => frontLogger.error('unhandled error in the local front', { error }),
      routes: [
        { method: 'ANY', path: mcpPath, functionName: 'mcp', fn: mcp, authorize: true, timeoutMs: 30_000 },
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
    const baseUrl = `http://${urlHost(options.host)}:${front.port}`;

    return {
      baseUrl,
      mcpUrl: `${baseUrl}${mcpPath}`,
      port: front.port,
      dynamodbEndpoint: dynamodb.endpoint,
      erpUrl,
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
