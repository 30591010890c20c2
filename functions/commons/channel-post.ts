// POST /tool/call-tool on the HTTP API, served by the MCP function: the body is the tools/call
// params as JSON, the answer one binary frame (application/octet-stream). The agent comes from the
// caller the authorizer passed on only; a Host outside the allowed names or a browser Origin not listed is
// refused (403) exactly as on /mcp. Each answer's status says how far the request got: 200 for every
// frame the channel produced (a result, or its -32700 / -32602 / -32603 refusals), 413 for params
// beyond the cap, 415 for a body that is neither application/json nor application/octet-stream, 401 for a caller naming no
// agent; each of those carries a -32600 frame as well.
import { hostHeaderValidationResponse, originValidationResponse } from '@modelcontextprotocol/server';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import {
  answerChannelBytes,
  channelErrorFrame,
  maxChannelParamsBytes,
  paramsTooLargeFrame,
  postedParamsRefusal,
} from '../../shared/edge/call-tool/serve.js';
import { jsonRpcCodes } from '../../shared/json-rpc-codes.js';
import type { RequestGate } from '../../shared/limits/request-gate.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';
import { identifyCaller } from '../../shared/use-cases/identify-caller.js';
import { authorizedCallerOf, eventBody, fromWebResponse } from './http-event.js';
import type { HttpResult } from './middleware.js';

export const channelPostPath = '/tool/call-tool';

export interface ChannelPostDeps {
  readonly services: CallToolDeps;
  readonly gate: RequestGate | null;
  /** Host header names accepted, as /mcp's; null: any. */
  readonly allowedHostnames: readonly string[] | null;
  /** Browser Origin hostnames accepted, as /mcp's; requests without an Origin pass. */
  readonly allowedOrigins: readonly string[];
}

const frameResponse = (statusCode: number, frame: Uint8Array): HttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' },
  body: Buffer.from(frame).toString('base64'),
  isBase64Encoded: true,
});

export const createChannelPost =
  (deps: ChannelPostDeps) =>
  async (event: APIGatewayProxyEventV2): Promise<HttpResult> => {
    const checked = new Request(`https://front.local${channelPostPath}`, {
      headers: Object.fromEntries(
        (['host', 'origin'] as const).flatMap((name) => {
          const value = event.headers[name];
          return value === undefined ? [] : [[name, value]];
        }),
      ),
    });
    const refused =
      (deps.allowedHostnames === null
        ? undefined
        : hostHeaderValidationResponse(checked, [...deps.allowedHostnames])) ??
      originValidationResponse(checked, [...deps.allowedOrigins]);
    if (refused !== undefined) return fromWebResponse(refused);
    const body = eventBody(event) ?? Buffer.alloc(0);
    if (body.length > maxChannelParamsBytes) return frameResponse(413, paramsTooLargeFrame());
    const unfit = postedParamsRefusal(event.headers['content-type']);
    if (unfit !== null) return frameResponse(415, unfit);
    const agent = await identifyCaller(deps.services, authorizedCallerOf(event));
    if (agent === null) {
      return frameResponse(401, channelErrorFrame(jsonRpcCodes.invalidRequest, 'The token names no agent.'));
    }
    const traceparent = event.headers.traceparent ?? null;
    const answer = await answerChannelBytes(deps.services, { gate: deps.gate }, { agent, bytes: body, traceparent });
    return frameResponse(200, answer.frame);
  };
