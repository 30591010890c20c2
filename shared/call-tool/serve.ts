// The gateway's /tool/call-tool channel, whatever carries it (a WebSocket message, an HTTP POST
// body, API Gateway's WebSocket API): one tools/call params document in, exactly one frame out.
// The params run through the same use-case as MCP's tools/call, for the same agent and under the
// same limits; frame 0 carries the result object exactly as MCP does (structuredContent, the first
// text block, isError). The channel's own refusals are frame 1, with these JSON-RPC codes:
//   -32700  the params are not JSON
//   -32602  the params are not { name: string, arguments?: object }
//   -32600  the params are larger than the channel takes, or never came (the fronts send these)
//   -32603  the gateway met a fault while running the call (its outcome is not known here)
import { readToolCallParams } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import { isJsonObject } from '../catalog/tool.js';
import { toolCallFaultMessage } from '../errors.js';
import { jsonRpcCodes } from '../json-rpc-codes.js';
import { limitsNow } from '../limits/agent-limits.js';
import type { RequestGate } from '../limits/request-gate.js';
import { statusToolName } from '../mcp/status-tool.js';
import { toCallToolResult } from '../mcp/tool-result.js';
import { resultObject } from '../result.js';
import { type CallToolDeps, callTool } from '../use-cases/call-tool.js';
import { getExecutionStatus } from '../use-cases/get-execution-status.js';
import { encodeFrame } from './frame.js';

/** Largest params document the channel takes, in bytes (as an MCP request body). */
export const maxChannelParamsBytes = 256 * 1024;

/** How long a connection may stay open without sending its params. */
export const channelParamsWaitMs = 10_000;

export interface ChannelCall {
  readonly agent: AgentIdentity;
  /** The params document's text, as it arrived. */
  readonly text: string;
  /** The caller's W3C traceparent, when its connection carried one. */
  readonly traceparent: string | null;
}

export interface ChannelOptions {
  /** Per-agent rate and concurrency, as on /mcp; null where the platform applies its own. */
  readonly gate: RequestGate | null;
}

/** Frame 1: the channel (or a front carrying it) refusing, with its JSON-RPC code. */
export const channelErrorFrame = (code: number, message: string): Uint8Array =>
  encodeFrame({ kind: 'error', error: { code, message } });

export const paramsTooLargeFrame = (): Uint8Array =>
  channelErrorFrame(jsonRpcCodes.invalidRequest, `The params are larger than ${maxChannelParamsBytes} bytes.`);

export const paramsMissingFrame = (): Uint8Array =>
  channelErrorFrame(
    jsonRpcCodes.invalidRequest,
    `No params arrived within ${channelParamsWaitMs / 1000} s: send the tools/call params as the first message.`,
  );

/** Runs one call sent on the channel and answers its one frame. Never throws. */
export const serveChannelCall = async (
  services: CallToolDeps,
  options: ChannelOptions,
  call: ChannelCall,
): Promise<Uint8Array> => {
  if (Buffer.byteLength(call.text, 'utf8') > maxChannelParamsBytes) return paramsTooLargeFrame();
  const read = readToolCallParams(call.text);
  if (read === null) return channelErrorFrame(jsonRpcCodes.parseError, 'Parse error: the params are not JSON.');
  const { params, toolArguments } = read;
  if (!isJsonObject(params) || typeof params.name !== 'string') {
    return channelErrorFrame(
      jsonRpcCodes.invalidParams,
      'Invalid params: expected the tools/call params, an object with the tool name as "name".',
    );
  }
  const { name } = params;
  const args = params.arguments ?? {};
  if (!isJsonObject(args)) {
    return channelErrorFrame(jsonRpcCodes.invalidParams, 'Invalid params: arguments must be an object.');
  }
  // Every call counts against the agent's limits, as on /mcp; a refusal is the result object.
  const admission = options.gate?.admit(call.agent.id, await limitsNow(services.controlPlane, call.agent)) ?? null;
  if (admission?.kind === 'refused') return resultFrame(toCallToolResult(resultObject(admission.refusal)));
  try {
    if (name === statusToolName) {
      return resultFrame(toCallToolResult(await getExecutionStatus(services, call.agent, args)));
    }
    const result = await callTool(services, call.agent, name, toolArguments, { traceparent: call.traceparent });
    return resultFrame(toCallToolResult(result));
  } catch (error) {
    // As on /mcp: the fault goes to the log, the caller reads the gateway's own words.
    services.log.warn('tools/call failed', {
      agent_id: call.agent.id,
      tool: name.slice(0, 200),
      transport: 'call-tool',
      error: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 1000) : 'unknown',
    });
    return channelErrorFrame(jsonRpcCodes.internalError, toolCallFaultMessage);
  } finally {
    if (admission?.kind === 'admitted') admission.release();
  }
};

const resultFrame = (result: ReturnType<typeof toCallToolResult>): Uint8Array =>
  encodeFrame({ kind: 'result', result: { ...result } });
