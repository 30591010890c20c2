// The MCP endpoint as a web-standard request handler: DNS-rebinding checks and the body cap in
// front, then the SDK serving a server built for the authenticated agent, statelessly and with
// JSON responses in both revisions: 2026-07-28 through the SDK's per-request entry, 2025-11-25
// through its streamable HTTP transport in JSON mode, one transport per request.
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isJsonContentType,
  isLegacyRequest,
  originValidationResponse,
  PROTOCOL_VERSION_META_KEY,
  readRequestBody,
  validateHostHeader,
  validateOriginHeader,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { type ReadMessage, readMessage, type StrictArguments } from '../../arguments/strict-json.js';
import type { AgentIdentity } from '../../auth/agent.js';
import { jsonRpcCodes } from '../../json-rpc-codes.js';
import type { LimitRefusal, RequestGate } from '../../limits/request-gate.js';
import { isRecord } from '../../objects.js';
import { underAgentGate } from '../tool-call/answer.js';
import {
  batchRefusedResponse,
  bodyTooLargeResponse,
  jsonRpcErrorResponse,
  limitedResponse,
  maxRequestBodyBytes,
} from './http-refusals.js';
import { initializeDeclaresUrlElicitation, readSessionId, sessionIdFor } from './legacy-session.js';
import {
  answerPlainToolCall,
  isPlainAnswer,
  type PlainAnswer,
  plainAnswerResponse,
  plainToolCallOf,
} from './plain-tool-call.js';
import { McpRequestContext, requestContextOf } from './request-context.js';
import { type McpRequestHead, requestHeadOf } from './request-head.js';
import { buildMcpServer, type McpServices } from './server.js';

export interface McpEndpointOptions {
  /** Host header names accepted (port-agnostic); null accepts any (the edge already routed by host). */
  readonly allowedHostnames: readonly string[] | null;
  /** Origin hostnames accepted from browsers; requests without an Origin header always pass. */
  readonly allowedOrigins: readonly string[];
  /** Per-agent rate and concurrency, checked for every request once the agent is known. */
  readonly requestGate: RequestGate;
  /** Called when an agent starts being refused by a limit (once per run of refusals, for logging). */
  readonly onLimited?: (agent: AgentIdentity, refusal: LimitRefusal) => void;
  /** Called with faults the SDK reports out of band (for logging). */
  readonly onError?: (error: Error) => void;
  /**
   * Whether a plain 2026-07-28 tools/call is answered without the SDK's per-request server
   * (plain-tool-call.ts). Off, every request goes through the SDK: the reference the plain path
   * is tested against. @default true
   */
  readonly plainToolCalls?: boolean;
}

export interface McpEndpoint {
  /**
   * Serves one request of a known agent. `bodyText`: the body, already read as text by the edge;
   * the request then comes without one. Only for a POST of JSON (readsJsonBody), the one kind of
   * request whose body the endpoint reads itself.
   */
  handle(request: Request, agent: AgentIdentity, bodyText?: string): Promise<Response>;
  /**
   * The same for a request the edge holds in a form of its own: a plain tools/call is answered as
   * text (PlainAnswer) without the web Request or a Response being built; every other answer is
   * the web Response `handle` gives.
   */
  serve(request: McpRequestHead, agent: AgentIdentity, bodyText?: string): Promise<Response | PlainAnswer>;
  close(): Promise<void>;
}

/** What reading a request's body gave: the message for the SDK and a tool call's arguments, or the answer. */
type ReadBody =
  | { readonly kind: 'read'; readonly parsedBody: unknown; readonly toolArguments: StrictArguments | null }
  | { readonly kind: 'answered'; readonly response: Response };

/** Whether a parsed body is a tools/call request (its own `method` member, as the strict reader reads it). */
const isToolCall = (body: unknown): boolean =>
  isRecord(body) && Object.hasOwn(body, 'method') && body.method === 'tools/call';

/** Whether the endpoint reads this request's body itself, as JSON text: a POST of JSON. */
export const readsJsonBody = (method: string, contentType: string | null | undefined): boolean =>
  method.toUpperCase() === 'POST' && isJsonContentType(contentType ?? null);

/** A body the edge read, with its size in bytes (counted once: the gate charges it, the cap checks it). */
interface GivenBody {
  readonly text: string;
  readonly bytes: number;
}

/** The body's text: as given (the edge read it), or read from the request, within the cap. */
const bodyTextOf = async (request: McpRequestHead, given: GivenBody | undefined): Promise<string | null> => {
  if (given !== undefined) return given.bytes > maxRequestBodyBytes ? null : given.text;
  const body = await readRequestBody(request.web(), maxRequestBodyBytes);
  return body.tooLarge ? null : body.text;
};

/**
 * A request a limit refused is only answered, so its body is parsed natively (about a tenth of the
 * strict reader's cost), for its method and id: a flood that is refused does not buy the strict
 * reading it would otherwise cost.
 */
const parseRefused = (text: string): ReadMessage | null => {
  try {
    return { message: JSON.parse(text), toolArguments: null };
  } catch {
    return null;
  }
};

/**
 * Reads a POST's JSON body once, strictly: the SDK gets the message already parsed (it does not
 * read the text again), a tools/call gets its arguments as the strict reader saw them. Anything
 * else (other methods, other media types) goes to the SDK untouched, which answers it. `admitted`:
 * false for a request a limit refused (see parseRefused).
 */
const readBody = async (
  request: McpRequestHead,
  given: GivenBody | undefined,
  admitted: boolean,
): Promise<ReadBody> => {
  if (!readsJsonBody(request.method, request.header('content-type'))) {
    // The SDK reads (and answers) any other request from the request's own body.
    if (given !== undefined) throw new Error('Only a POST of JSON comes with its body already read.');
    return { kind: 'read', parsedBody: undefined, toolArguments: null };
  }
  const text = await bodyTextOf(request, given);
  if (text === null) return { kind: 'answered', response: bodyTooLargeResponse() };
  const read = admitted ? readMessage(text) : parseRefused(text);
  if (read === null) {
    return {
      kind: 'answered',
      response: jsonRpcErrorResponse(400, jsonRpcCodes.parseError, 'Parse error: the body is not valid JSON.'),
    };
  }
  if (Array.isArray(read.message)) return { kind: 'answered', response: batchRefusedResponse() };
  return { kind: 'read', parsedBody: read.message, toolArguments: read.toolArguments };
};

/**
 * Whether a parsed body is one the SDK's classifier can only route to the 2026-07-28 path: a
 * request or notification (no `result` or `error` member) other than initialize whose
 * `params._meta` carries the revision claim. The classifier sends every such body there, to be
 * served or refused by the modern path's own checks; only an initialize may carry a claim and still
 * be a 2025-era handshake. The one request in a direct call's path that matters (tools/call of a
 * current client) is routed on this alone, so the body is classified once (by the SDK's entry), not
 * twice; any other body still asks the SDK's own predicate. A test holds this to the SDK's answer.
 */
export const claimsModernRevision = (body: unknown): boolean => {
  if (!isRecord(body) || 'result' in body || 'error' in body) return false;
  if (typeof body.method !== 'string' || body.method === 'initialize') return false;
  const { params } = body;
  return isRecord(params) && isRecord(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta;
};

/** Whether the SDK's entry would serve this request as a 2025-era one (see claimsModernRevision). */
const isLegacy = async (request: Request, parsedBody: unknown): Promise<boolean> =>
  !claimsModernRevision(parsedBody) &&
  (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: maxRequestBodyBytes }));

/**
 * 2025-era requests: a fresh server and a JSON-mode transport for this one exchange. A client that
 * declares URL elicitation at initialize gets a sealed session id naming that (legacy-session.ts);
 * one the gateway cannot open is answered 404, so the client initializes again.
 */
const serveLegacy = async (
  services: McpServices,
  request: Request,
  context: McpRequestContext,
  parsedBody: unknown,
): Promise<Response> => {
  if (request.method.toUpperCase() !== 'POST')
    return jsonRpcErrorResponse(405, jsonRpcCodes.serverError, 'Method not allowed.');
  const initialize = initializeDeclaresUrlElicitation(parsedBody);
  const session = initialize
    ? 'none'
    : await readSessionId(
        services.sealer,
        context.agent.id,
        request.headers.get('mcp-session-id'),
        services.clock.now(),
      );
  if (session === 'unknown')
    return jsonRpcErrorResponse(404, jsonRpcCodes.sessionNotFound, 'Session not found: initialize again.');
  const authInfo = context.withUrlElicitation2025(session === 'url_elicitation').toAuthInfo();
  const server = buildMcpServer(services, requestContextOf(authInfo), '2025-11-25');
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: maxRequestBodyBytes,
  });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(
      request,
      parsedBody === undefined ? { authInfo } : { authInfo, parsedBody },
    );
    if (initialize && response.ok) {
      response.headers.set(
        'mcp-session-id',
        await sessionIdFor(services.sealer, context.agent.id, services.clock.now()),
      );
    }
    return response;
  } finally {
    await transport.close();
    await server.close();
  }
};

export const createMcpEndpoint = (services: McpServices, options: McpEndpointOptions): McpEndpoint => {
  // The SDK's entry for 2026-07-28 requests, made by the first request that needs it: a plain
  // tools/call never does, so a fresh function's first call does not build it.
  let modernHandler: ReturnType<typeof createMcpHandler> | undefined;
  const modern = () =>
    (modernHandler ??= createMcpHandler(
      ({ authInfo }) => buildMcpServer(services, requestContextOf(authInfo), '2026-07-28'),
      {
        legacy: 'reject',
        responseMode: 'json',
        maxRequestBodySize: maxRequestBodyBytes,
        ...(options.onError === undefined ? {} : { onerror: options.onError }),
      },
    ));
  const allowedHostnames = options.allowedHostnames === null ? null : [...options.allowedHostnames];
  const allowedOrigins = [...options.allowedOrigins];
  const gate = { gate: options.requestGate, onLimited: options.onLimited };
  let closed = false;

  /**
   * The DNS-rebinding checks on the headers alone; a refusal is the SDK's own answer (built from the
   * web Request, which only a refused request needs).
   */
  const rebindingRefusal = (request: McpRequestHead): Response | undefined => {
    if (allowedHostnames !== null && !validateHostHeader(request.header('host'), allowedHostnames).ok) {
      return hostHeaderValidationResponse(request.web(), allowedHostnames);
    }
    if (!validateOriginHeader(request.header('origin'), allowedOrigins).ok) {
      return originValidationResponse(request.web(), allowedOrigins);
    }
    return undefined;
  };

  const serve: McpEndpoint['serve'] = async (request, agent, bodyText) => {
    const refused = rebindingRefusal(request);
    if (refused !== undefined) return refused;
    const declaredLength = Number(request.header('content-length') ?? '0');
    if (declaredLength > maxRequestBodyBytes) return bodyTooLargeResponse();
    // Every request of a known agent counts against its limits, unreadable ones included, and is
    // charged its size before its body is read.
    const given = bodyText === undefined ? undefined : { text: bodyText, bytes: Buffer.byteLength(bodyText, 'utf8') };
    const bytes = given === undefined ? Math.max(0, declaredLength || 0) : given.bytes;
    return underAgentGate(services, gate, agent, { bytes }, async (refusal) => {
      // The body is read once, here (see readBody): a tool call's arguments come from the
      // request's own text, where duplicate keys, huge integers and lone surrogates are visible.
      const body = await readBody(request, given, refusal === null);
      if (body.kind === 'answered') return body.response;
      const { parsedBody, toolArguments } = body;
      // A refused tools/call is answered with a result object the agent reads (denied, the limit
      // in its message); any other refused request gets 429 before the SDK sees it.
      if (refusal !== null && !isToolCall(parsedBody)) return limitedResponse(refusal);
      const context = new McpRequestContext(agent, toolArguments, request.header('traceparent'), refusal);
      // Once closed, every request goes to the SDK's entry, which refuses it.
      const plain = closed || options.plainToolCalls === false ? null : plainToolCallOf(request, parsedBody);
      if (plain !== null) return await answerPlainToolCall(services, context, plain);
      const web = request.web();
      if (await isLegacy(web, parsedBody)) {
        return await serveLegacy(services, web, context, parsedBody);
      }
      const authInfo = context.toAuthInfo();
      return await modern().fetch(web, parsedBody === undefined ? { authInfo } : { authInfo, parsedBody });
    });
  };

  return {
    serve,
    async handle(request, agent, bodyText) {
      const answer = await serve(requestHeadOf(request), agent, bodyText);
      return isPlainAnswer(answer) ? plainAnswerResponse(answer) : answer;
    },
    close: () => {
      closed = true;
      // Made now if no request has needed it yet: once closed, it refuses every request.
      return modern().close();
    },
  };
};
