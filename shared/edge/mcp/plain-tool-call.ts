// The plain 2026-07-28 tools/call, answered without building the SDK's per-request server: the one
// request every direct call is, and the one whose SDK machinery (a server and transport per
// request, its zod checks of the message and the answer, the web Response) was most of the
// gateway's own cost per call. A request is plain only when the SDK's own checks could only
// accept it and the gateway's answer needs nothing of the SDK's server: a tools/call of revision
// 2026-07-28 with a name, arguments and the per-request envelope and nothing else (no task, no
// requestState, no inputResponses), headers that repeat the body exactly, an envelope the SDK's
// classifier finds valid, and a client that declared neither URL elicitation nor the tasks
// extension (so no handover and no task can follow). Every other request goes to the SDK, which
// answers it (and refuses it) in its own words. The answer is the one the SDK sends: the same
// result object (toolCallAnswer, one home for both), the revision's resultType and serverInfo, and
// a fault as the SDK's internal error; test/adapters/plain-tool-call.test.ts holds the two to each
// other request by request.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/server';
import { idempotencyKeyMember } from '../../executions/call-keys.js';
import { LruMap } from '../../lru.js';
import { isRecord } from '../../objects.js';
import type { ResultObject } from '../../result.js';
import { toCallToolResult } from '../tool-call/tool-result.js';
import type { McpRequestContext } from './request-context.js';
import type { McpRequestHead } from './request-head.js';
import { type McpServices, serverIdentity, toolCallAnswer } from './server.js';
import { envelopeDeclaresTasks } from './task-methods.js';
import { envelopeDeclaresUrlElicitation } from './url-elicitation.js';

/** The revision the plain path answers. */
const plainRevision = '2026-07-28';

/**
 * The envelope keys a plain request may carry: none of them changes a tools/call's answer but the
 * idempotency key, which every transport reads alike (answer.ts's caller passes the params on).
 */
const plainEnvelopeKeys: ReadonlySet<string> = new Set([
  idempotencyKeyMember,
  PROTOCOL_VERSION_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
]);

export interface PlainToolCall {
  readonly id: string | number;
  readonly name: string;
  readonly args: Record<string, unknown>;
  /** The params as sent (their `_meta` may carry the idempotency key). */
  readonly params: Record<string, unknown>;
}

const hasOnly = (value: Record<string, unknown>, keys: ReadonlySet<string>): boolean =>
  Object.keys(value).every((key) => keys.has(key));

const messageKeys: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const paramKeys: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);

/** The plain tools/call this request is, or null: then the SDK serves it. */
export const plainToolCallOf = (request: McpRequestHead, body: unknown): PlainToolCall | null => {
  if (request.method !== 'POST' || !isRecord(body) || !hasOnly(body, messageKeys)) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call') return null;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  if (!isRecord(params) || !hasOnly(params, paramKeys)) return null;
  const { name, arguments: args = {}, _meta: envelope } = params;
  // A name in the Mcp-Name header's encoded form (=?base64?…?=) is left to the SDK to decode.
  if (typeof name !== 'string' || name === '' || name.startsWith('=?') || !isRecord(args)) return null;
  if (!isRecord(envelope) || envelope[PROTOCOL_VERSION_META_KEY] !== plainRevision) return null;
  if (!hasOnly(envelope, plainEnvelopeKeys)) return null;
  const protocolVersionHeader = request.header('mcp-protocol-version');
  const mcpMethodHeader = request.header('mcp-method');
  const mcpNameHeader = request.header('mcp-name');
  if (protocolVersionHeader !== plainRevision || mcpMethodHeader !== method || mcpNameHeader !== name) return null;
  const headers = { protocolVersionHeader, mcpMethodHeader, mcpNameHeader };
  return sdkAccepts(request.method, headers, body, envelope) ? { id, name, args, params } : null;
};

/**
 * The verdict on the envelopes already read, by their JSON text: whether the envelope declares URL
 * elicitation or tasks (the SDK serves those), and else the SDK classifier's verdict. Past the
 * checks above, both depend on the envelope alone (the body is a request with a valid id and no
 * result or error, and the headers repeat it), and an agent sends the same envelope on every call:
 * read once, it spares each later call the classifier's zod parse of the whole message (the
 * largest part of the plain path's own work, docs/adr/0093-the-per-call-levers.md) and the two
 * declarations' parses. An envelope with an idempotency key differs from call to call, so it is
 * read every time, as is one that has no JSON text (a bigint).
 */
const envelopeVerdicts = new LruMap<string, boolean>(256);

const envelopeText = (envelope: Record<string, unknown>): string | null => {
  if (envelope[idempotencyKeyMember] !== undefined) return null;
  try {
    return JSON.stringify(envelope);
  } catch {
    return null;
  }
};

/**
 * Whether the envelope declares neither URL elicitation nor tasks, and the SDK's own reading of
 * it, and of the headers against the body, accepts the request.
 */
const sdkAccepts = (
  httpMethod: string,
  headers: { protocolVersionHeader: string; mcpMethodHeader: string; mcpNameHeader: string },
  body: Record<string, unknown>,
  envelope: Record<string, unknown>,
): boolean => {
  const text = envelopeText(envelope);
  const known = text === null ? undefined : envelopeVerdicts.get(text);
  if (known !== undefined) return known;
  const accepted =
    !envelopeDeclaresUrlElicitation(envelope) &&
    !envelopeDeclaresTasks(envelope) &&
    classifiedPlain(httpMethod, headers, body);
  if (text !== null) envelopeVerdicts.set(text, accepted);
  return accepted;
};

/** Whether the SDK's classifier reads the request as a 2026-07-28 request. */
const classifiedPlain = (
  httpMethod: string,
  headers: { protocolVersionHeader: string; mcpMethodHeader: string; mcpNameHeader: string },
  body: Record<string, unknown>,
): boolean => {
  const route = classifyInboundRequest({ httpMethod, ...headers, body });
  return route.kind === 'modern' && route.messageKind === 'request' && route.classification.revision === plainRevision;
};

/**
 * The answer to a plain tools/call, as the SDK's stateless server in JSON mode sends it: the
 * JSON-RPC message, HTTP 200, application/json. Kept as text, so an edge that answers in another
 * form (a Lambda result) builds no web Response for it.
 */
export interface PlainAnswer {
  readonly kind: 'plain';
  readonly status: 200;
  readonly contentType: 'application/json';
  readonly body: string;
}

/**
 * Whether an answer is a plain one, told without naming the global Response: Node defines the web
 * globals lazily, and the first to be read loads its fetch implementation (tens of milliseconds a
 * cold start), which a plain call never needs.
 */
export const isPlainAnswer = (answer: Response | PlainAnswer): answer is PlainAnswer =>
  'kind' in answer && answer.kind === 'plain';

/** The plain answer as a web Response. */
export const plainAnswerResponse = (answer: PlainAnswer): Response =>
  new Response(answer.body, { status: answer.status, headers: { 'content-type': answer.contentType } });

/** A plain call's result: complete, naming the server, with an approved call's receipt when it has one. */
const plainResult = (result: ResultObject, receipt: string | null) => {
  const called = toCallToolResult(result, receipt);
  return {
    ...called,
    resultType: 'complete',
    _meta: { ...called._meta, [SERVER_INFO_META_KEY]: { ...serverIdentity } },
  };
};

/** The answer to a plain tools/call (see PlainAnswer). */
export const answerPlainToolCall = async (
  services: McpServices,
  context: McpRequestContext,
  call: PlainToolCall,
): Promise<PlainAnswer> => {
  const answer = await toolCallAnswer(services, context, call.name, call.args, call.params);
  const message =
    answer.kind === 'result'
      ? {
          result: plainResult(answer.result, answer.receipt),
          jsonrpc: '2.0',
          id: call.id,
        }
      : { jsonrpc: '2.0', id: call.id, error: { code: answer.code, message: answer.message } };
  return { kind: 'plain', status: 200, contentType: 'application/json', body: JSON.stringify(message) };
};
