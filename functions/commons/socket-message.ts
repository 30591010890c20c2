// A message of the /tool/call-tool WebSocket API as API Gateway hands it over (text, or base64
// when it says so) read into the params' bytes, and an answer API Gateway cannot carry (over its
// 128 KB message limit) replaced by one it can.

import { isJsonObject } from '../../shared/catalog/tool.js';
import { jsonRpcCodes } from '../../shared/json-rpc-codes.js';
import { decodeFrame, encodeFrame } from '../../shared/wire/call-tool-frame.js';

/** The largest message API Gateway's WebSocket API sends (or takes): 128 KB. */
export const maxSocketFrameBytes = 128 * 1024;

/**
 * A frame API Gateway cannot carry, replaced by one it can: the call ran and is recorded, so the
 * agent is told where its result is rather than left with nothing.
 */
export const tooLargeToSend = (frame: Uint8Array): Uint8Array => {
  const decoded = decodeFrame(frame);
  const content = decoded.kind === 'result' ? decoded.result.structuredContent : undefined;
  const executionId = isJsonObject(content) && typeof content.execution_id === 'string' ? content.execution_id : null;
  return encodeFrame({
    kind: 'error',
    error: {
      code: jsonRpcCodes.internalError,
      message: `The answer is larger than a WebSocket message may be (${maxSocketFrameBytes} bytes): read it with get_execution_status over POST /tool/call-tool or /mcp.`,
      data: { execution_id: executionId },
    },
  });
};

/** A message's bytes as API Gateway hands them over: base64 when it says so, else the text's UTF-8. */
export const messageBytes = (body: string, base64: boolean): Buffer =>
  base64 ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
