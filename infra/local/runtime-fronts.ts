// The local runtime's fronts: the API Gateway stand-in serving the very Lambda handler modules
// (/mcp, the console and the customer's pages, the resource metadata and the receipt keys) with /tool/call-tool beside
// them, and the gRPC tool gateway. Every front serves the same agents with the same services.
import { hkdfSync } from 'node:crypto';
import { createMcpFunction } from '../../functions/mcp.js';
import { createResourceMetadataFunction } from '../../functions/resource-metadata.js';
import { DynamoDbSessionStore } from '../../shared/adapters/dynamodb/console-sessions.js';
import { systemClock } from '../../shared/clock.js';
import { type GrpcGateway, startGrpcGateway } from '../../shared/edge/grpc/gateway.js';
import { mcpPath } from '../../shared/edge/mcp/auth-challenge.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { jwksPath } from '../../shared/receipts/signer.js';
import { HmacSessionSigner } from '../../shared/sessions/session.js';
import { identifyCaller } from '../../shared/use-cases/identify-caller.js';
import { createLocalAuthorizer } from './authorizer.js';
import { createCallToolFront } from './call-tool-front.js';
import { createConsoleFunction } from './console.js';
import { localTableNames } from './dynamodb.js';
import { type HttpFront, type Route, startHttpFront } from './http-front.js';
import { isLoopback, urlHost } from './net.js';
import type { LocalOptions } from './options.js';
import type { LocalStore } from './runtime-aws.js';
import type { LocalConfiguration } from './runtime-configuration.js';
import type { LoggerFor, RuntimeStops } from './runtime-lifecycle.js';
import type { LinkBase, LocalServices } from './runtime-services.js';

interface LocalFrontParts extends LocalServices {
  readonly options: LocalOptions;
  readonly configuration: LocalConfiguration;
  readonly local: LocalStore;
  readonly dataKey: Buffer;
  /** The configured public base URL; null: the address the front is bound to. */
  readonly publicUrl: string | null;
  readonly links: LinkBase;
  readonly logger: LoggerFor;
}

/** Browser origins /mcp and /tool/call-tool accept: pages of the gateway's own loopback names. */
const allowedOrigins = ['localhost', '127.0.0.1', '[::1]'];

/** The Lambda functions the front serves, on the routes API Gateway gives them in the stack. */
const functionRoutes = (parts: LocalFrontParts, requestGate: RequestGate, allowedHostnames: string[]): Route[] => {
  const { logger, links } = parts;
  const { config } = parts.configuration;
  const mcp = createMcpFunction({
    services: parts.mcpServices,
    metrics: parts.flushedMetrics,
    requestGate,
    logger: logger('mcp'),
    allowedHostnames,
    allowedOrigins,
    // The handlers name the gateway by the configured public URL, else by the address the front
    // is bound to (known once it listens, before any request): never by a request's Host header.
    get publicUrl() {
      return links.base;
    },
  });
  const metadata = createResourceMetadataFunction({
    logger: logger('resource-metadata'),
    get publicUrl() {
      return links.base;
    },
    // Local tokens come from the configuration: there is no authorization server to name.
    authorizationServers: [],
    receiptKeys: parts.services.receiptSigner,
  });
  const consoleFunction = createConsoleFunction({
    services: parts.services,
    metrics: parts.flushedMetrics,
    // Sessions are signed with a key derived from the data key: they survive a restart on disk.
    signer: new HmacSessionSigner(
      Buffer.from(hkdfSync('sha256', parts.dataKey, Buffer.alloc(0), 'approval-gateway console sessions', 32)),
    ),
    // Kept in the store as in AWS: a restart keeps them, and signing out ends them.
    sessions: new DynamoDbSessionStore(parts.local.dynamodb.documents, localTableNames.executions),
    signIn: { kind: 'local', people: async () => config().approvers, customers: async () => config().customers },
    logger: logger('console'),
    get publicUrl() {
      return links.base;
    },
  });
  return [
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
    ...['/.well-known/oauth-protected-resource', `/.well-known/oauth-protected-resource${mcpPath}`, jwksPath].map(
      (path) => ({
        method: 'GET',
        path,
        functionName: 'resource-metadata',
        fn: metadata,
        authorize: false,
        timeoutMs: 5_000,
      }),
    ),
  ];
};

interface LocalFronts {
  readonly front: HttpFront;
  readonly grpcGateway: GrpcGateway;
}

export const startLocalFronts = async (parts: LocalFrontParts, stops: RuntimeStops): Promise<LocalFronts> => {
  const { options, logger, mcpServices, publicUrl } = parts;
  const allowedHostnames = [
    'localhost',
    '127.0.0.1',
    '[::1]',
    ...(isLoopback(options.host) ? [] : [urlHost(options.host)]),
  ];
  // One gate for the agents' HTTP requests: /mcp and /tool/call-tool count against the same limits.
  const requestGate = new RequestGate(systemClock);
  const routes = functionRoutes(parts, requestGate, allowedHostnames);
  const authorize = createLocalAuthorizer({
    agents: () => parts.configuration.config().agents,
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
    routes,
  });
  stops.onClose(() => front.close());
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
  stops.onClose(() => grpcGateway.close());
  return { front, grpcGateway };
};
