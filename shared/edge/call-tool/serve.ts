// The gateway's /tool/call-tool channel, whatever carries it (a WebSocket message, an HTTP POST
// body, API Gateway's WebSocket API): one tools/call params document in, exactly one frame out.
// The params run through the same use-case as MCP's tools/call, for the same agent and under the
// same limits; frame 0 carries the result object exactly as MCP does (structuredContent, the first
// text block, isError). The channel's own refusals are frame 1, with these JSON-RPC codes:
//   -32700  the params are not JSON
//   -32602  the params are not { name: string, arguments?: object }
//   -32600  the params are larger than the channel takes, or never came (the fronts send these)
//   -32603  the gateway met a fault while running the call (its outcome is not known here)
// The agent's rate and concurrency gate is taken before the params are read, so a flood of
// unreadable params counts like any other call; a refusal is frame 0 (denied, the limit's code).
import { readToolCallParams } from '../../arguments/strict-json.js';
import type { AgentIdentity } from '../../auth/agent.js';
import { isJsonObject } from '../../catalog/tool.js';
import { jsonRpcCodes } from '../../json-rpc-codes.js';
import type { RequestGate } from '../../limits/request-gate.js';
import { type ResultObject, resultObject } from '../../result.js';
import type { CallToolDeps } from '../../use-cases/call-tool.js';
import { encodeFrame } from '../../wire/call-tool-frame.js';
import { answerToolCall, toolCallFault, underAgentGate } from '../tool-call/answer.js';
import { idempotencyKeyOf } from '../tool-call/idempotency-key.js';
import { toCallToolResult } from '../tool-call/tool-result.js';

/** Largest params document the channel takes, in bytes (as an MCP request body). */
export const maxChannelParamsBytes = 256 * 1024;

/** How long a connection may stay open without sending its params. */
export const channelParamsWaitMs = 10_000;

export interface ChannelCall {
  readonly agent: AgentIdentity;
  /** The params as the front received them: a WebSocket message's bytes (text or binary), a POST body. */
  readonly bytes: Uint8Array;
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

export const paramsMissingFrame = (waitMs: number = channelParamsWaitMs): Uint8Array =>
  channelErrorFrame(
    jsonRpcCodes.invalidRequest,
    `No params arrived within ${waitMs / 1000} s: send the tools/call params as the first message.`,
  );

/** Frame 1 -32700: params that are not JSON (bytes that are not UTF-8 are not JSON text either). */
const unreadableParamsFrame = (): Uint8Array =>
  channelErrorFrame(jsonRpcCodes.parseError, 'Parse error: the params are not JSON.');

/**
 * The params' text from the bytes a front received (a binary message, an HTTP body), or null when
 * they are not UTF-8. A byte-order mark is kept, so the reader refuses it as it refuses any other
 * character before the document.
 */
export const channelParamsText = (bytes: Uint8Array): string | null => {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
};

/** One call's answer, with what a front logs about it (never the arguments). */
export interface ChannelAnswer {
  readonly frame: Uint8Array;
  /** The tool named, clipped; null when the params did not name one. */
  readonly tool: string | null;
  /** The result's status and code, or the error frame's JSON-RPC code. */
  readonly outcome: { readonly status: string; readonly code: string | null } | { readonly error: number };
}

/** Media types a POST may carry the params as: JSON text, or its UTF-8 bytes as a binary body. */
const postedMediaTypes: ReadonlySet<string> = new Set(['application/json', 'application/octet-stream']);

/**
 * Whether a POST's Content-Type may carry the params: null when it may, else the frame that
 * refuses it (415). A charset other than UTF-8 is not the params' text. One rule for every front.
 */
export const postedParamsRefusal = (contentType: string | null | undefined): Uint8Array | null => {
  const [type, ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  const utf8 = parameters.every(
    (parameter) => !parameter.startsWith('charset=') || /^charset="?utf-8"?$/.test(parameter),
  );
  if (type !== undefined && postedMediaTypes.has(type) && utf8) return null;
  return channelErrorFrame(
    jsonRpcCodes.invalidRequest,
    'Send the params as application/json (or their UTF-8 bytes as application/octet-stream).',
  );
};

/**
 * Answers params as a front received them, as bytes (a WebSocket message, text or binary; a POST
 * body): beyond the cap, or not UTF-8, they are refused before anything is read. Never throws.
 */
export const answerChannelBytes = (
  services: CallToolDeps,
  options: ChannelOptions,
  call: ChannelCall,
): Promise<ChannelAnswer> => {
  if (call.bytes.length > maxChannelParamsBytes) {
    return Promise.resolve({
      frame: paramsTooLargeFrame(),
      tool: null,
      outcome: { error: jsonRpcCodes.invalidRequest },
    });
  }
  const text = channelParamsText(call.bytes);
  if (text === null) {
    return Promise.resolve({ frame: unreadableParamsFrame(), tool: null, outcome: { error: jsonRpcCodes.parseError } });
  }
  return answerChannelCall(services, options, call, text);
};

const errorAnswer = (tool: string | null, code: number, message: string): ChannelAnswer => ({
  frame: channelErrorFrame(code, message),
  tool,
  outcome: { error: code },
});

const resultAnswer = (tool: string | null, result: ResultObject, receipt: string | null = null): ChannelAnswer => ({
  frame: encodeFrame({ kind: 'result', result: { ...toCallToolResult(result, receipt) } }),
  tool,
  outcome: { status: result.status, code: result.code },
});

/** Runs one call whose params text is within the cap, saying what it was and how it ended. Never throws. */
const answerChannelCall = async (
  services: CallToolDeps,
  options: ChannelOptions,
  call: ChannelCall,
  text: string,
): Promise<ChannelAnswer> => {
  try {
    // Every call counts against the agent's limits, as on /mcp, before its params are even read: a
    // flood of unreadable params costs a gate check each. A refusal is the result object.
    return await underAgentGate(
      services,
      { gate: options.gate },
      call.agent,
      { bytes: Buffer.byteLength(text, 'utf8') },
      (refusal) =>
        refusal === null
          ? answerChannelParams(services, call, text)
          : Promise.resolve(resultAnswer(null, resultObject(refusal))),
    );
  } catch (error) {
    // A fault outside the call itself (the agent's limits could not be read, say): logged and
    // answered as any other (answer.ts).
    const fault = toolCallFault(services, { agent: call.agent, tool: null, transport: 'call-tool' }, error);
    return errorAnswer(null, fault.code, fault.message);
  }
};

/** Reads an admitted call's params and answers it. Never throws. */
const answerChannelParams = async (services: CallToolDeps, call: ChannelCall, text: string): Promise<ChannelAnswer> => {
  const read = readToolCallParams(text);
  if (read === null) return errorAnswer(null, jsonRpcCodes.parseError, 'Parse error: the params are not JSON.');
  const { params, toolArguments } = read;
  if (!isJsonObject(params) || typeof params.name !== 'string') {
    return errorAnswer(
      null,
      jsonRpcCodes.invalidParams,
      'Invalid params: expected the tools/call params, an object with the tool name as "name".',
    );
  }
  const { name } = params;
  const tool = name.slice(0, 200);
  // Absent arguments are none; null is not an object (MCP's own params schema refuses it too).
  const args = params.arguments === undefined ? {} : params.arguments;
  if (!isJsonObject(args)) {
    return errorAnswer(tool, jsonRpcCodes.invalidParams, 'Invalid params: arguments must be an object.');
  }
  const answer = await answerToolCall(services, {
    agent: call.agent,
    name,
    args,
    toolArguments,
    request: { traceparent: call.traceparent, ...idempotencyKeyOf(params) },
    transport: 'call-tool',
  });
  return answer.kind === 'result'
    ? resultAnswer(tool, answer.result, answer.receipt)
    : errorAnswer(tool, answer.code, answer.message);
};
