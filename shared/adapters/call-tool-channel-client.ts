// Runs a tool of a call-tool system through its proxy's /tool/call-tool channel: one WebSocket per
// call, the system's credentials on the upgrade, exactly one params message out and exactly one
// binary frame read back, within the call's whole deadline and up to its size cap. Nothing is ever
// retried, and the socket is dropped on every path once the answer (or its absence) is known.
import WebSocket, { type RawData } from 'ws';
import type { ResolvedCallToolSystem } from '../config/resolved.js';
import { errorText } from '../errors.js';
import { credentialHeaders } from '../invoke/credentials.js';
import {
  type ToolServerAnswer,
  type ToolServerClient,
  type ToolServerRequest,
  toolCallMeta,
} from '../invoke/tool-server.js';
import { decodeFrame, FrameDecodeError } from '../wire/call-tool-frame.js';

/** The channel's path under the proxy's base URL. */
const callToolPath = '/tool/call-tool';

/** The channel's WebSocket URL: http becomes ws and https wss; ws and wss stay as they are. */
export const channelUrl = (base: string): string =>
  `${base.replace(/^http(s?):\/\//i, (_, secure: string) => `ws${secure}://`).replace(/\/+$/, '')}${callToolPath}`;

/** The headers of the upgrade request: the system's credential, the execution id and the trace. */
const upgradeHeaders = (system: ResolvedCallToolSystem, request: ToolServerRequest): Record<string, string> => ({
  ...credentialHeaders(system.credentials),
  'x-request-id': request.executionId,
  traceparent: request.traceparent,
});

/**
 * The params message: the tool's own name and the canonical arguments' text as given, placed by
 * concatenation so an integer beyond 2^53 reaches the proxy digit for digit; an approved call's
 * receipt in its _meta.
 */
const paramsText = (request: ToolServerRequest): string => {
  const meta = toolCallMeta(request);
  const metaText = meta === null ? '' : `,"_meta":${JSON.stringify(meta)}`;
  return `{"name":${JSON.stringify(request.name)},"arguments":${request.argumentsJson}${metaText}}`;
};

/** ws reads a message only up to this many bytes (a signed 32-bit field); the cap never exceeds it. */
const largestPayload = 2 ** 31 - 1;

const errorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;

const bytesOf = (data: RawData): Uint8Array =>
  Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;

/**
 * JSON-RPC codes are 32-bit integers in practice; a larger one (1e21 prints as "1e+21") would not
 * make a code the gateway can record, so it is an answer that cannot be read.
 */
const isJsonRpcCode = (code: number): boolean => Number.isSafeInteger(code) && Math.abs(code) <= 2 ** 31;

/** What one frame says, as the port's answer: its result, or only the code of its error. */
const answerOf = (bytes: Uint8Array): ToolServerAnswer => {
  try {
    const frame = decodeFrame(bytes);
    if (frame.kind === 'result') return { kind: 'result', result: frame.result };
    return isJsonRpcCode(frame.error.code) ? { kind: 'error', code: frame.error.code } : { kind: 'unreadable' };
  } catch (error) {
    if (error instanceof FrameDecodeError) return { kind: 'unreadable' };
    throw error;
  }
};

export class CallToolChannelClient implements ToolServerClient {
  call(request: ToolServerRequest): Promise<ToolServerAnswer> {
    const { system } = request;
    // The adapter routes only call-tool systems here; anything else is a wiring bug.
    if (system.kind !== 'call-tool') throw new Error(`the system ${system.key} is not a call-tool system`);
    return new Promise<ToolServerAnswer>((resolve) => {
      let sent = false;
      let settled = false;
      let socket: WebSocket | null = null;
      const timer = setTimeout(() => settle({ kind: 'timeout', sent }), request.deadlineMs);
      function settle(answer: ToolServerAnswer): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // Dropped, not closed politely: the proxy ends the channel after its one frame anyway, and a
        // proxy that misbehaves gets nothing more from this connection (no close handshake to wait on).
        socket?.terminate();
        resolve(answer);
      }
      try {
        socket = new WebSocket(channelUrl(system.url), {
          headers: upgradeHeaders(system, request),
          followRedirects: false,
          perMessageDeflate: false,
          maxPayload: Math.min(Math.max(1, request.maxResponseBytes), largestPayload),
        });
      } catch (error) {
        // A URL or header ws refuses to send: nothing left the gateway.
        settle({ kind: 'connection_failed', sent: false, cause: errorText(error) });
        return;
      }
      // Errors after the answer (the drop above, a late fault) are expected and ignored.
      socket.on('error', (error) => {
        const code = errorCode(error);
        if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') settle({ kind: 'too_large' });
        // Bytes that are not WebSocket frames once the channel is open: an answer that cannot be read.
        else if (code?.startsWith('WS_ERR_') && sent) settle({ kind: 'unreadable' });
        else settle({ kind: 'connection_failed', sent, cause: errorText(error) });
      });
      // A refused upgrade (401, 404, a redirect, a 5xx): the params were never sent.
      socket.on('unexpected-response', (upgrade, response) => {
        response.destroy();
        upgrade.destroy();
        settle({ kind: 'connection_failed', sent: false, cause: `the upgrade was answered ${response.statusCode}` });
      });
      socket.on('open', () => {
        if (settled || socket === null) return;
        sent = true;
        socket.send(paramsText(request));
      });
      socket.on('message', (data, isBinary) => {
        // The answer is one binary frame; a text message is not one.
        settle(isBinary ? answerOf(bytesOf(data)) : { kind: 'unreadable' });
      });
      socket.on('close', () => settle({ kind: 'connection_failed', sent }));
    });
  }
}
