// The local runtime's configuration: the control plane over the configuration file (watched for
// changes), the MCP catalogs it reads, and the metric lines everything here writes.
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { EmfMetrics } from '../../shared/adapters/emf-metrics.js';
import { McpServerClient } from '../../shared/adapters/mcp-server-client.js';
import { systemClock } from '../../shared/clock.js';
import { formatProblem, type ResolvedConfig } from '../../shared/config/resolved.js';
import { McpCatalogs } from '../../shared/control-plane/mcp-catalogs.js';
import { type GatewayMetrics, noMetrics } from '../../shared/metrics.js';
import { LocalConfigSource } from './config-source.js';
import { localSecrets } from './local-secrets.js';
import { McpCatalogFiles, McpPinFiles, mcpCatalogFolder } from './mcp-catalog-files.js';
import { metricLinesOf } from './metric-lines.js';
import type { LocalOptions } from './options.js';
import { type LoggerFor, type RuntimeStops, StartupError } from './runtime-lifecycle.js';

export const localLoggers =
  (logLevel: LogLevel): LoggerFor =>
  (serviceName) =>
    new Logger({ serviceName, logLevel, persistentKeys: { runtime: 'local' } });

export interface LocalConfiguration {
  readonly controlPlane: LocalConfigSource;
  /** The configuration in force: the last good one, else the one loaded at start. */
  readonly config: () => ResolvedConfig;
  /** The one MCP client for discovery and calls, so both reuse each server's connection. */
  readonly mcpClient: McpServerClient;
  /** The metric lines' buffer, when they are written at all. */
  readonly emf: EmfMetrics | null;
  readonly metrics: GatewayMetrics;
}

export const loadLocalConfiguration = async (
  options: LocalOptions,
  variables: Readonly<Record<string, string | undefined>>,
  run: { readonly logLevel: LogLevel; readonly logger: LoggerFor; readonly configCheckMs: number },
  stops: RuntimeStops,
): Promise<LocalConfiguration> => {
  const { logger } = run;
  const mcpClient = new McpServerClient();
  stops.onClose(() => mcpClient.close());
  // The metrics the functions write in AWS, as the same embedded-metric-format lines: flushed after
  // each request or step, and every few seconds for what else runs here (metric-lines.ts says where).
  const metricLines = metricLinesOf(run.logLevel, options.memory ? null : options.dataDir);
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
  controlPlane.watch(run.configCheckMs);
  stops.onClose(async () => controlPlane.stop());
  const config = () => controlPlane.lastGood?.config ?? loaded.snapshot.config;
  if (options.anonymousAgent !== null && !config().agents.some((agent) => agent.id === options.anonymousAgent)) {
    throw new StartupError(
      `--anonymous-agent names "${options.anonymousAgent}", which is not an agent of ${options.config}.`,
    );
  }
  return { controlPlane, config, mcpClient, emf, metrics };
};
