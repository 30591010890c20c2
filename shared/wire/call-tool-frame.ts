// The /tool/call-tool response frame: one byte saying which variant, then that variant's JSON.
// Tag 0: the tool's CallToolResult. Tag 1: a JSON-RPC ErrorData ({ code, message, data? }), whose
// code travels unchanged (-32601 no such tool, -32602 wrong arguments). One frame answers one call.

import { isJsonObject, type JsonObject } from '../catalog/tool.js';
import { parseExactJson } from './exact-json.js';

const frameTags = { result: 0, error: 1 } as const;

/** A JSON-RPC error as MCP relays it. */
export interface FrameErrorData {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export type Frame =
  | { readonly kind: 'result'; readonly result: JsonObject }
  | { readonly kind: 'error'; readonly error: FrameErrorData };

/** Why bytes are not a frame: no bytes at all, a tag that is neither 0 nor 1, or a body that is not the variant's JSON. */
export type FrameErrorKind = 'empty' | 'unknown_tag' | 'body';

export class FrameDecodeError extends Error {
  override readonly name = 'FrameDecodeError';

  constructor(
    readonly kind: FrameErrorKind,
    message: string,
    /** The tag read, for `unknown_tag` and `body`. */
    readonly tag: number | null = null,
  ) {
    super(message);
  }
}

export const encodeFrame = (frame: Frame): Uint8Array => {
  const tag = frame.kind === 'result' ? frameTags.result : frameTags.error;
  const body = Buffer.from(JSON.stringify(frame.kind === 'result' ? frame.result : frame.error), 'utf8');
  const bytes = new Uint8Array(body.length + 1);
  bytes[0] = tag;
  bytes.set(body, 1);
  return bytes;
};

const isErrorData = (value: unknown): value is FrameErrorData =>
  isJsonObject(value) && Number.isInteger(value.code) && typeof value.message === 'string';

/** A result is an object; MCP's own parsing checks its members where it is used. */
const isResult = (value: unknown): value is JsonObject => isJsonObject(value);

export const decodeFrame = (bytes: Uint8Array): Frame => {
  const tag = bytes[0];
  if (tag === undefined) throw new FrameDecodeError('empty', 'the frame is empty');
  if (tag !== frameTags.result && tag !== frameTags.error) {
    throw new FrameDecodeError('unknown_tag', `the frame's tag ${tag} is neither 0 (result) nor 1 (error)`, tag);
  }
  let body: unknown;
  try {
    // Fatal decoding: bytes that are not UTF-8 are not JSON text either. A byte-order mark is kept
    // (ignoreBOM), so JSON.parse refuses it: it is not part of a JSON document (RFC 8259 §8.1).
    // Exactly: an integer beyond 2^53 in a tool's answer is kept digit for digit.
    body = parseExactJson(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(1)));
  } catch {
    throw new FrameDecodeError('body', `the frame's body (tag ${tag}) is not JSON`, tag);
  }
  if (tag === frameTags.result) {
    if (!isResult(body))
      throw new FrameDecodeError('body', 'the frame (tag 0) does not hold a CallToolResult object', tag);
    return { kind: 'result', result: body };
  }
  if (!isErrorData(body)) {
    throw new FrameDecodeError('body', 'the frame (tag 1) does not hold a JSON-RPC error { code, message }', tag);
  }
  return { kind: 'error', error: body };
};
