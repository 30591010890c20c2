// The endpoint's own HTTP refusals, each a JSON-RPC error with no id: a body over the cap, a batch,
// a limit's refusal of a request other than tools/call.
import { jsonRpcCodes } from '../../json-rpc-codes.js';
import type { LimitRefusal } from '../../limits/request-gate.js';

/** Largest MCP request body accepted, in bytes. */
export const maxRequestBodyBytes = 256 * 1024;

export const jsonRpcErrorResponse = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });

export const bodyTooLargeResponse = (): Response =>
  jsonRpcErrorResponse(
    413,
    jsonRpcCodes.invalidRequest,
    `The request body is larger than ${maxRequestBodyBytes} bytes.`,
  );

/** A request other than tools/call refused by a limit: HTTP 429, as API Gateway's own throttling answers. */
export const limitedResponse = (refusal: LimitRefusal): Response => {
  const response = jsonRpcErrorResponse(429, jsonRpcCodes.serverError, refusal.message);
  response.headers.set('retry-after', String(refusal.retryAfterSeconds));
  return response;
};

/** JSON-RPC batches (removed from MCP in 2025-06-18) are refused on every path. */
export const batchRefusedResponse = (): Response =>
  jsonRpcErrorResponse(
    400,
    jsonRpcCodes.invalidRequest,
    'JSON-RPC batches are not supported: send one request per HTTP POST.',
  );
