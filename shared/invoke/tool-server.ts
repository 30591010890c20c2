// The port through which the gateway runs a tool on an MCP server (behind a /tool/call-tool proxy,
// or spoken to directly), and what its answer means. The answer is MCP's CallToolResult or a
// JSON-RPC error; like an HTTP system's, its free text never comes back: a failed tool's code only
// when it is a short machine token, a JSON-RPC error only as `mcp_<code>`.

import type { CatalogTool, JsonObject } from '../catalog/tool.js';
import { isJsonObject } from '../catalog/tool.js';
import type { ResolvedToolServer } from '../config/resolved.js';
import { mcpErrorCode, type SystemCode, systemCode } from '../errors.js';
import { depthOf, maxResultDepth } from '../json-depth.js';
import { receiptMetaKey } from '../receipts/claims.js';
import { redactedValue, redactSecrets, type SecretRules } from '../secrets.js';
import { exactJsonText, parseExactJson } from '../wire/exact-json.js';
import { type CallOutcome, lostAnswer, systemErrorCode } from './call.js';

export interface ToolServerRequest {
  readonly system: ResolvedToolServer;
  /** The tool's own name on its server. */
  readonly name: string;
  /** The canonical arguments, as exact JSON text (integers beyond 2^53 digit for digit). */
  readonly argumentsJson: string;
  readonly executionId: string;
  readonly traceparent: string;
  /** The approval receipt of an approved call, sent in the tools/call's _meta (absent: no one approved it). */
  readonly receipt?: string;
  /** Total time allowed, from opening the connection to the last byte read. */
  readonly deadlineMs: number;
  /** Largest answer read; beyond it the answer is dropped. */
  readonly maxResponseBytes: number;
}

/** The _meta of the tools/call sent: an approved call's receipt; null for a call no one approved. */
export const toolCallMeta = (request: ToolServerRequest): Readonly<Record<string, string>> | null =>
  request.receipt === undefined ? null : { [receiptMetaKey]: request.receipt };

/**
 * What came back. `sent` tells whether the call may have reached the tool (so a write may have
 * happened); `error` carries only the JSON-RPC code, the one part of an error that is not prose.
 */
export type ToolServerAnswer =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'error'; readonly code: number }
  | { readonly kind: 'timeout'; readonly sent: boolean }
  /** `cause`: what went wrong, for the operator's log line (never shown to the agent). */
  | { readonly kind: 'connection_failed'; readonly sent: boolean; readonly cause?: string }
  | { readonly kind: 'too_large' }
  | { readonly kind: 'unreadable' };

export interface ToolServerClient {
  call(request: ToolServerRequest): Promise<ToolServerAnswer>;
}

/** A failed tool's code: from its structured result, else its only text when that is a machine token. */
const toolErrorCode = (result: JsonObject): SystemCode | null => {
  const structured = systemErrorCode(result.structuredContent, undefined);
  if (structured !== null) return structured;
  const content = Array.isArray(result.content) ? result.content : [];
  const only = content.length === 1 && isJsonObject(content[0]) ? content[0] : null;
  return only?.type === 'text' && typeof only.text === 'string' ? systemCode(only.text.trim()) : null;
};

/** Whether a value has CallToolResult's shape (content blocks, optional structured content and isError). */
const isCallToolResult = (value: unknown): value is JsonObject =>
  isJsonObject(value) &&
  (value.content === undefined || Array.isArray(value.content)) &&
  (value.structuredContent === undefined || isJsonObject(value.structuredContent)) &&
  (value.isError === undefined || typeof value.isError === 'boolean');

/**
 * The text a content block carries, with a way to put other text in its place: a text block's
 * text, and an embedded resource's text (`{type: 'resource', resource: {uri, mimeType, text}}`).
 */
const carriedText = (
  block: unknown,
): { readonly text: string; readonly replaced: (text: string) => unknown } | null => {
  if (!isJsonObject(block)) return null;
  if (block.type === 'text' && typeof block.text === 'string') {
    return { text: block.text, replaced: (text) => ({ ...block, text }) };
  }
  const resource = block.resource;
  if (block.type === 'resource' && isJsonObject(resource) && typeof resource.text === 'string') {
    return { text: resource.text, replaced: (text) => ({ ...block, resource: { ...resource, text } }) };
  }
  return null;
};

/**
 * Every content block that carries text holding a JSON object or array (how many servers answer)
 * is read as JSON, so its secrets are found as in any answer (by name, or by the tool's output
 * schema); a text that is not JSON, or holds no secret, is kept as it came.
 */
const redactedText = (block: unknown, schema: JsonObject | null, rules: SecretRules): unknown => {
  const carried = carriedText(block);
  if (carried === null) return block;
  const text = carried.text.trim();
  if (!text.startsWith('{') && !text.startsWith('[')) return block;
  let parsed: unknown;
  try {
    parsed = parseExactJson(text);
  } catch {
    return block;
  }
  if (depthOf(parsed, maxResultDepth) > maxResultDepth) return carried.replaced(redactedValue);
  const redacted = redactSecrets(parsed, schema, rules);
  const written = exactJsonText(redacted);
  return written === exactJsonText(parsed) ? block : carried.replaced(written);
};

export const classifyToolAnswer = (answer: ToolServerAnswer, tool: CatalogTool, rules: SecretRules): CallOutcome => {
  switch (answer.kind) {
    case 'timeout':
      return lostAnswer(tool, 'timeout', answer.sent);
    case 'connection_failed':
      return lostAnswer(tool, 'connection_failed', answer.sent, null, answer.cause);
    case 'too_large':
      return lostAnswer(tool, 'response_too_large', true);
    case 'unreadable':
      return lostAnswer(tool, 'unreadable_response', true);
    case 'error':
      // The server refused the call (no such tool, wrong arguments, its own reason): nothing ran.
      return { status: 'failed', code: mcpErrorCode(answer.code), result: null, httpStatus: null, refused: true };
    case 'result':
      break;
  }
  const result = answer.result;
  if (!isCallToolResult(result)) return lostAnswer(tool, 'unreadable_response', true);
  if (result.isError === true) {
    const code = toolErrorCode(result) ?? 'tool_error';
    return { status: 'failed', code, result: null, httpStatus: null, refused: true };
  }
  const content = Array.isArray(result.content) ? result.content : [];
  const value =
    result.structuredContent ?? content.map((block: unknown) => redactedText(block, tool.responseSchema, rules));
  // An answer nested beyond what the gateway reads is not read (its walks would overflow the stack).
  if (depthOf(value, maxResultDepth) > maxResultDepth) {
    return lostAnswer(tool, 'unreadable_response', true);
  }
  return {
    status: 'succeeded',
    code: null,
    result: redactSecrets(value, tool.responseSchema, rules),
    httpStatus: null,
  };
};
