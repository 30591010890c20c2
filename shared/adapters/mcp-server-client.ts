// Speaks MCP to the servers behind the gateway, with the official client: one connection per server
// (its URL, revision and credentials), opened on first use and again on the call after a fault, and
// never a call sent twice; at most `max_concurrency` calls in progress per server, the wait counted
// against the call's deadline. Every byte goes through the gateway's own fetch, which adds the
// server's credentials (to its own URL only), follows no redirect, notes whether the request reached
// a socket and stops reading an answer at the size cap.
//
// Long: one connection's life (open, credentials, counting fetch) and the reading of its faults
// belong together; the parts that stand alone are in mcp-fetch.ts, slots.ts and
// oauth-client-credentials.ts.
import { createHash, randomUUID } from 'node:crypto';
import {
  Client,
  type FetchLike,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import * as z from 'zod';
import type { ResolvedMcpSystem } from '../config/resolved.js';
import { errorText } from '../errors.js';
import { credentialHeaders } from '../invoke/credentials.js';
import {
  type ToolServerAnswer,
  type ToolServerClient,
  type ToolServerRequest,
  toolCallMeta,
} from '../invoke/tool-server.js';
import { gatewayInfo } from '../version.js';
import { holdsUnsafeInteger, parseStringifiable } from '../wire/exact-json.js';
import { countedBody, type Exchange, exactResultOf, httpFetch } from './mcp-fetch.js';
import { ClientCredentialsTokens, maxDocumentBytes } from './oauth-client-credentials.js';
import { Slots } from './slots.js';
import { type Agents, beforeSending, codeOf, keepAliveAgents } from './socket-tracking.js';

const AnyResult = z.record(z.string(), z.unknown());
const ListPage = z
  .object({
    tools: z.array(z.unknown()),
    nextCursor: z.string().max(4096).optional(),
    ttlMs: z.number().optional(),
  })
  .loose();

/** What a server offers, as it listed it. */
export interface McpToolListing {
  /** The raw tools, in the server's order (at most `maxTools`). */
  readonly tools: readonly unknown[];
  /** The server's own freshness hint for the list (2026-07-28 `ttlMs`), if it gave one. */
  readonly ttlMs: number | null;
  /** Why the list was cut short, when it was (too many tools or pages). */
  readonly truncated: string | null;
}

export interface ListToolsOptions {
  readonly deadlineMs?: number;
  readonly maxPages?: number;
  readonly maxTools?: number;
  /** Bytes read across every page. */
  readonly maxBytes?: number;
}

/** Discovery failed; the message is the gateway's own words, never the server's text. */
class McpDiscoveryError extends Error {}

interface Connection {
  readonly slots: Slots;
  opening: Promise<Client> | null;
  tokens: ClientCredentialsTokens | null;
}

const versionNegotiation = (protocol: ResolvedMcpSystem['protocol']) => {
  if (protocol === 'auto') return { mode: 'auto' as const };
  if (protocol === '2025-11-25') return { mode: 'legacy' as const };
  return { mode: { pin: protocol } };
};

/** The request id header, by which the fetch finds its exchange. */
const requestIdHeader = 'x-request-id';

/** The tools/call's _meta param, when the call has one (an approved call's receipt). */
const metaParam = (request: ToolServerRequest): { _meta?: Readonly<Record<string, string>> } => {
  const meta = toolCallMeta(request);
  return meta === null ? {} : { _meta: meta };
};

export class McpServerClient implements ToolServerClient {
  private readonly connections = new Map<string, Connection>();
  private readonly exchanges = new Map<string, Exchange>();
  /** Requests in progress on each client; a client forgotten after a fault is closed when it has none. */
  private readonly inProgress = new Map<Client, number>();
  private readonly retired = new WeakSet<Client>();

  constructor(private readonly agents: Agents = keepAliveAgents()) {}

  async call(request: ToolServerRequest): Promise<ToolServerAnswer> {
    const system = request.system;
    if (system.kind !== 'mcp') throw new Error(`${system.key} is not an MCP server`);
    const started = Date.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), request.deadlineMs);
    const connection = this.connectionOf(system);
    try {
      if (!(await connection.slots.acquire(system.max_concurrency, controller.signal))) {
        return { kind: 'timeout', sent: false };
      }
      try {
        const remaining = () => Math.max(1, request.deadlineMs - (Date.now() - started));
        let client: Client;
        try {
          client = await this.open(system, connection, controller.signal, remaining());
        } catch (error) {
          return controller.signal.aborted
            ? { kind: 'timeout', sent: false }
            : { kind: 'connection_failed', sent: false, cause: errorText(error) };
        }
        // The exact JSON value of canonical arguments: integers beyond 2^53 are written as their digits.
        const args = parseStringifiable(request.argumentsJson);
        const exchangeId = request.executionId.length > 0 ? request.executionId : randomUUID();
        const exchange: Exchange = {
          sent: false,
          read: 0,
          limit: request.maxResponseBytes,
          tooLarge: false,
          signal: controller.signal,
          kept: [],
        };
        this.exchanges.set(exchangeId, exchange);
        this.inProgress.set(client, (this.inProgress.get(client) ?? 0) + 1);
        try {
          const result = await client.request(
            { method: 'tools/call', params: { name: request.name, arguments: args, ...metaParam(request) } },
            AnyResult,
            {
              signal: controller.signal,
              timeout: remaining(),
              maxTotalTimeout: remaining(),
              headers: { traceparent: request.traceparent, [requestIdHeader]: exchangeId },
            },
          );
          // The MCP client reads numbers as doubles: an answer with an integer beyond 2^53 is read
          // again, exactly, from the bytes the server sent.
          const exact = holdsUnsafeInteger(result) ? exactResultOf(exchange.kept ?? []) : undefined;
          return { kind: 'result', result: exact ?? result };
        } catch (error) {
          const answer = this.faultOf(error, exchange, controller.signal.aborted);
          if (answer.kind !== 'error') this.drop(connection, error);
          return answer;
        } finally {
          this.exchanges.delete(exchangeId);
          this.finished(client);
        }
      } finally {
        connection.slots.release();
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Pages through `tools/list` (every cursor, within bounds). Throws McpDiscoveryError when the
   * server cannot be reached or answers what cannot be read.
   */
  async listTools(system: ResolvedMcpSystem, options: ListToolsOptions = {}): Promise<McpToolListing> {
    const deadlineMs = options.deadlineMs ?? system.timeout;
    const maxPages = options.maxPages ?? 50;
    const maxTools = options.maxTools ?? 5_000;
    const started = Date.now();
    const remaining = () => Math.max(1, deadlineMs - (Date.now() - started));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), deadlineMs);
    const connection = this.connectionOf(system);
    const exchangeId = `discovery-${randomUUID()}`;
    const exchange: Exchange = {
      sent: false,
      read: 0,
      limit: options.maxBytes ?? 16 * 1024 * 1024,
      tooLarge: false,
      signal: controller.signal,
    };
    try {
      let client: Client;
      try {
        client = await this.open(system, connection, controller.signal, remaining());
      } catch (error) {
        this.drop(connection, error);
        throw new McpDiscoveryError(
          controller.signal.aborted ? 'the server did not answer in time' : 'the server could not be reached',
        );
      }
      this.exchanges.set(exchangeId, exchange);
      const tools: unknown[] = [];
      let ttlMs: number | null = null;
      let cursor: string | undefined;
      const seen = new Set<string>();
      for (let page = 0; ; page += 1) {
        if (page >= maxPages) return { tools, ttlMs, truncated: `the list has more than ${maxPages} pages` };
        let answer: z.infer<typeof ListPage>;
        try {
          answer = await client.request(
            { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
            ListPage,
            {
              signal: controller.signal,
              timeout: remaining(),
              headers: { [requestIdHeader]: exchangeId },
            },
          );
        } catch (error) {
          const fault = this.faultOf(error, exchange, controller.signal.aborted);
          if (fault.kind !== 'error') this.drop(connection, error);
          throw new McpDiscoveryError(discoveryFault(fault));
        }
        if (page === 0 && answer.ttlMs !== undefined && answer.ttlMs >= 0) ttlMs = answer.ttlMs;
        for (const tool of answer.tools) {
          if (tools.length >= maxTools) return { tools, ttlMs, truncated: `the list has more than ${maxTools} tools` };
          tools.push(tool);
        }
        cursor = answer.nextCursor;
        if (cursor === undefined) return { tools, ttlMs, truncated: null };
        // A server that hands out a cursor it gave before would be read forever.
        if (seen.has(cursor)) return { tools, ttlMs, truncated: 'the server repeated a cursor' };
        seen.add(cursor);
      }
    } finally {
      clearTimeout(timer);
      this.exchanges.delete(exchangeId);
    }
  }

  async close(): Promise<void> {
    const open = [...this.connections.values()].map((connection) => connection.opening);
    this.connections.clear();
    await Promise.all(
      open.map(async (opening) => {
        // Closing: a connection that never opened, or fails to close, has nothing left to release.
        const client = await opening?.catch(() => null);
        await client?.close().catch(() => undefined);
      }),
    );
  }

  /** What a failed request means for the call. */
  private faultOf(error: unknown, exchange: Exchange, aborted: boolean): ToolServerAnswer {
    if (exchange.tooLarge) return { kind: 'too_large' };
    if (error instanceof ProtocolError) return { kind: 'error', code: error.code };
    if (aborted) return { kind: 'timeout', sent: exchange.sent };
    if (error instanceof UnauthorizedError) return { kind: 'connection_failed', sent: false, cause: errorText(error) };
    if (error instanceof SdkHttpError) {
      // A 4xx from the endpoint refuses the message before any tool runs (an unknown session,
      // a refused token, a malformed request); a 5xx or an unexpected status may come after it ran.
      const refused = error.status >= 400 && error.status < 500;
      return { kind: 'connection_failed', sent: refused ? false : exchange.sent, cause: errorText(error) };
    }
    if (error instanceof SdkError) {
      switch (error.code) {
        case SdkErrorCode.RequestTimeout:
          return { kind: 'timeout', sent: exchange.sent };
        case SdkErrorCode.InvalidResult:
        case SdkErrorCode.UnsupportedResultType:
        case SdkErrorCode.ClientHttpUnexpectedContent:
          return { kind: 'unreadable' };
        default:
          break;
      }
    }
    if (error instanceof SyntaxError) return { kind: 'unreadable' };
    const code = codeOf(error);
    const before = code !== undefined && beforeSending.has(code);
    return { kind: 'connection_failed', sent: exchange.sent && !before, cause: errorText(error) };
  }

  private keyOf(system: ResolvedMcpSystem): string {
    return createHash('sha256')
      .update(JSON.stringify([system.url, system.protocol, system.credentials]))
      .digest('hex');
  }

  private connectionOf(system: ResolvedMcpSystem): Connection {
    const key = this.keyOf(system);
    let connection = this.connections.get(key);
    if (connection === undefined) {
      const credentials = system.credentials;
      connection = {
        slots: new Slots(),
        opening: null,
        tokens:
          credentials.type === 'oauth_client_credentials'
            ? new ClientCredentialsTokens(system, credentials, this.plainFetch)
            : null,
      };
      this.connections.set(key, connection);
    }
    return connection;
  }

  /** The connection's client, connected (once; a failed attempt is forgotten). */
  private open(
    system: ResolvedMcpSystem,
    connection: Connection,
    signal: AbortSignal,
    timeout: number,
  ): Promise<Client> {
    if (connection.opening === null) {
      const opening = this.connect(system, connection, signal, timeout);
      connection.opening = opening;
      opening.catch(() => {
        if (connection.opening === opening) connection.opening = null;
      });
    }
    return connection.opening;
  }

  private async connect(
    system: ResolvedMcpSystem,
    connection: Connection,
    signal: AbortSignal,
    timeout: number,
  ): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(system.url), {
      fetch: this.fetchFor(system, connection),
      requestInit: { redirect: 'manual' },
      redirectPolicy: 'same-origin',
      reconnectionOptions: {
        maxReconnectionDelay: 30_000,
        initialReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 0,
      },
    });
    const client = new Client(
      { name: gatewayInfo.name, version: gatewayInfo.version },
      { capabilities: {}, versionNegotiation: versionNegotiation(system.protocol) },
    );
    try {
      await client.connect(transport, { signal, timeout });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    const negotiated = client.getNegotiatedProtocolVersion();
    if (system.protocol !== 'auto' && negotiated !== system.protocol) {
      await client.close().catch(() => undefined);
      throw new Error(`the server does not speak MCP ${system.protocol}`);
    }
    client.onclose = () => {
      if (connection.opening !== null) connection.opening = null;
    };
    return client;
  }

  /**
   * Forgets a connection after a fault: the next call opens a new one (nothing is sent again). The
   * calls still in progress on it finish on it (another call's fault says nothing of theirs); it is
   * closed when the last one has.
   */
  private drop(connection: Connection, error: unknown): void {
    if (error instanceof UnauthorizedError || (error instanceof SdkHttpError && error.status === 401)) {
      connection.tokens?.clear();
    }
    const opening = connection.opening;
    connection.opening = null;
    void opening
      ?.then((client) => {
        this.retired.add(client);
        return (this.inProgress.get(client) ?? 0) === 0 ? client.close() : undefined;
      })
      .catch(() => undefined);
  }

  /** A call on the client is over: a forgotten client is closed after its last call. */
  private finished(client: Client): void {
    const left = (this.inProgress.get(client) ?? 1) - 1;
    if (left > 0) {
      this.inProgress.set(client, left);
      return;
    }
    this.inProgress.delete(client);
    if (this.retired.has(client)) void client.close().catch(() => undefined);
  }

  /** A fetch that adds nothing: for OAuth metadata and tokens (no redirects, answers capped). */
  private readonly plainFetch: FetchLike = async (url, init) => {
    const response = await httpFetch(this.agents, new URL(url), {
      method: init?.method ?? 'GET',
      headers: new Headers(init?.headers),
      body: init?.body,
      signal: init?.signal ?? AbortSignal.timeout(30_000),
    });
    return new Response(countedBody(response.body, undefined, maxDocumentBytes), {
      status: response.status,
      statusText: response.statusText,
      headers: Object.fromEntries(response.headers.entries()),
    });
  };

  /** The transport's fetch: credentials to the server's own URL, sockets tracked, answers capped. */
  private fetchFor(system: ResolvedMcpSystem, connection: Connection): FetchLike {
    const endpoint = new URL(system.url);
    return async (url, init) => {
      // The stream a GET opens carries only what the server sends on its own, which the gateway never
      // serves, with no end and no cap: the gateway answers it itself, as a server without one does.
      if ((init?.method ?? 'GET') === 'GET') return new Response(null, { status: 405 });
      const target = new URL(url);
      const headers = new Headers(init?.headers);
      // Only the gateway sets these; the agent's token never reaches here (nothing passes it on).
      headers.delete('authorization');
      headers.delete('cookie');
      if (target.origin === endpoint.origin && target.pathname === endpoint.pathname) {
        // The configured credential as every system's request carries it (credentials.ts); a client
        // credentials grant's token is the connection's own.
        const credentials = system.credentials;
        if (credentials.type !== 'oauth_client_credentials') {
          for (const [name, value] of Object.entries(credentialHeaders(credentials))) headers.set(name, value);
        } else if (connection.tokens !== null) {
          headers.set('authorization', `Bearer ${await connection.tokens.get()}`);
        }
      }
      const exchange = this.exchanges.get(headers.get(requestIdHeader) ?? '');
      const signals = [init?.signal, exchange?.signal].filter((signal) => signal !== undefined && signal !== null);
      const response = await httpFetch(
        this.agents,
        target,
        {
          method: init?.method ?? 'GET',
          headers,
          body: init?.body,
          signal: signals.length > 0 ? AbortSignal.any(signals) : undefined,
        },
        () => {
          if (exchange !== undefined) exchange.sent = true;
        },
      );
      // An exchange is capped by its own limit (a call's max_response_size, a discovery's byte budget).
      const cap = exchange !== undefined ? Number.POSITIVE_INFINITY : system.max_response_size;
      return new Response(countedBody(response.body, exchange, cap), {
        status: response.status,
        statusText: response.statusText,
        headers: Object.fromEntries(response.headers.entries()),
      });
    };
  }
}

/** The gateway's words for a discovery that failed. */
const discoveryFault = (fault: ToolServerAnswer): string => {
  switch (fault.kind) {
    case 'error':
      return `the server refused tools/list (mcp_${fault.code})`;
    case 'timeout':
      return 'the server did not answer tools/list in time';
    case 'too_large':
      return 'the tool list is larger than the size cap';
    case 'unreadable':
      return 'the tool list could not be read';
    default:
      return 'the server could not be reached';
  }
};
