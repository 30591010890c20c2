// One call to a system, made from the canonical arguments and the operation, and what its answer
// means: succeeded, failed (the system refused, or a read got no usable answer), or unknown (a
// write was sent but no reliable answer came back). The system's free text never comes back:
// only its error code, when it is a short machine token, or http_<status>.

import type { CatalogTool, HttpTarget, JsonObject } from '../catalog/tool.js';
import type { ResolvedOpenApiSystem } from '../config/resolved.js';
import { httpStatusCode, type ResultCode, type SystemCode, systemCode } from '../errors.js';
import { depthOf, maxResultDepth } from '../json-depth.js';
import { pointerValue } from '../json-pointer.js';
import { setOwn } from '../objects.js';
import { receiptHeader } from '../receipts/claims.js';
import { redactSecrets, type SecretRules } from '../secrets.js';
import { exactJsonText, parseExactJson } from '../wire/exact-json.js';
import { type FormField, formBodyText } from '../wire/form-body.js';
import { headerParameterRule } from '../wire/headers.js';
import { parameterText, pathSegment } from '../wire/parameter-values.js';
import { credentialHeaders } from './credentials.js';
import type { OutboundRequest, OutboundResult } from './system-client.js';

export interface CallContext {
  readonly executionId: string;
  readonly traceparent: string;
}

export const buildRequest = (
  target: HttpTarget,
  system: ResolvedOpenApiSystem,
  args: JsonObject,
  context: CallContext,
): OutboundRequest => {
  const credentialHeader = system.credentials.type === 'api_key' ? system.credentials.header : null;
  let path = target.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { accept: 'application/json' };
  const body: JsonObject = {};
  let wholeBody: unknown;
  let hasBody = false;
  const form: FormField[] = [];
  for (const binding of target.fields) {
    if (!Object.hasOwn(args, binding.field)) continue;
    const value = args[binding.field];
    switch (binding.in) {
      case 'path':
        path = path.replaceAll(`{${binding.name}}`, pathSegment(parameterText(value)));
        break;
      case 'query':
        for (const item of Array.isArray(value) ? value : [value]) query.append(binding.name, parameterText(item));
        break;
      case 'header':
        // The catalog offers no other header; should a binding name one, it is not sent.
        if (headerParameterRule(binding.name, credentialHeader) === 'send') {
          headers[binding.name.toLowerCase()] = parameterText(value);
        }
        break;
      case 'body':
        setOwn(body, binding.name, value);
        hasBody = true;
        break;
      case 'whole-body':
        wholeBody = value;
        hasBody = true;
        break;
      case 'form':
        form.push({ name: binding.name, value, encoding: binding.encoding });
        break;
    }
  }
  // The gateway's own headers come last: nothing an agent sends can replace them.
  headers['x-request-id'] = context.executionId;
  headers.traceparent = context.traceparent;
  Object.assign(headers, credentialHeaders(system.credentials));
  if (hasBody) headers['content-type'] = 'application/json';
  // A tool's body is JSON or a form, never both (the catalog binds its fields to one of them).
  if (form.length > 0) headers['content-type'] = 'application/x-www-form-urlencoded';
  const search = query.toString();
  return {
    method: target.method,
    url: `${system.base_url}${path}${search.length > 0 ? `?${search}` : ''}`,
    headers,
    body:
      form.length > 0 ? formBodyText(form) : hasBody ? exactJsonText(wholeBody === undefined ? body : wholeBody) : null,
    deadlineMs: system.timeout,
    maxResponseBytes: system.max_response_size,
  };
};

/**
 * The request with the approval receipt signed over it (its method, path and body as built): the
 * gateway's own header, added last, so nothing an agent sends can replace it.
 */
export const withReceipt = (request: OutboundRequest, receipt: string): OutboundRequest => ({
  ...request,
  headers: { ...request.headers, [receiptHeader]: receipt },
});

export type CallOutcome =
  | { readonly status: 'succeeded'; readonly code: null; readonly result: unknown; readonly httpStatus: number | null }
  | {
      readonly status: 'failed' | 'unknown';
      readonly code: ResultCode | SystemCode;
      readonly result: null;
      readonly httpStatus: number | null;
      /** The system answered that it would not do it (an MCP tool's isError, a JSON-RPC error). */
      readonly refused?: boolean;
      /** Why the connection failed, for the call's log line (never recorded or shown to the agent). */
      readonly cause?: string;
    };

const defaultCodePointers = ['/code', '/error_code', '/error/code'];

/** The system's error code, only when it already is a short machine token (never free text). */
export const systemErrorCode = (body: unknown, pointer: string | undefined): SystemCode | null => {
  for (const candidate of pointer === undefined ? defaultCodePointers : [pointer]) {
    const value = pointerValue(body, candidate);
    const code = typeof value === 'string' ? systemCode(value) : null;
    if (code !== null) return code;
  }
  return null;
};

const parseJson = (body: Buffer): { ok: true; value: unknown } | { ok: false } => {
  if (body.length === 0) return { ok: true, value: null };
  try {
    // Exactly: an integer beyond 2^53 in the system's answer reaches the agent digit for digit.
    return { ok: true, value: parseExactJson(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
};

/**
 * An answer that did not come or cannot be used. Once the call was sent, a write may have happened,
 * so it is unknown (never sent again); a read can simply be tried again, and so can a call never sent.
 */
export const lostAnswer = (
  tool: Pick<CatalogTool, 'access'>,
  code: ResultCode | SystemCode,
  sent: boolean,
  httpStatus: number | null = null,
  cause?: string,
): CallOutcome => ({
  status: sent && tool.access === 'write' ? 'unknown' : 'failed',
  code,
  result: null,
  httpStatus,
  ...(cause === undefined ? {} : { cause }),
});

export const classify = (
  result: OutboundResult,
  tool: CatalogTool,
  system: ResolvedOpenApiSystem,
  rules: SecretRules,
): CallOutcome => {
  switch (result.kind) {
    case 'timeout':
      return lostAnswer(tool, 'timeout', result.sent);
    case 'connection_failed':
      return lostAnswer(tool, 'connection_failed', result.sent, null, result.cause);
    case 'too_large':
      return lostAnswer(tool, 'response_too_large', true, result.status);
    case 'response':
      break;
  }
  const { status } = result;
  if (status >= 300 && status < 400) return lostAnswer(tool, 'redirect_refused', true, status);
  if (status >= 400 && status < 500) {
    const parsed = parseJson(result.body);
    const code = (parsed.ok ? systemErrorCode(parsed.value, system.error_code_field) : null) ?? httpStatusCode(status);
    return { status: 'failed', code, result: null, httpStatus: status };
  }
  if (status < 200 || status >= 500) return lostAnswer(tool, httpStatusCode(status), true, status);
  const parsed = parseJson(result.body);
  // An answer nested beyond what the gateway reads is not read (its walks would overflow the stack).
  if (!parsed.ok || depthOf(parsed.value, maxResultDepth) > maxResultDepth) {
    return lostAnswer(tool, 'unreadable_response', true, status);
  }
  return {
    status: 'succeeded',
    code: null,
    result: redactSecrets(parsed.value, tool.responseSchema, rules),
    httpStatus: status,
  };
};
