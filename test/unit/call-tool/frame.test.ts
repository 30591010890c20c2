// The /tool/call-tool frame, byte for byte: what the gateway writes for each variant, what it reads
// back, and every way bytes fail to be a frame (empty, an unknown tag, a body that is not the
// variant's JSON).
import { describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame, type Frame, FrameDecodeError } from '../../../shared/wire/call-tool-frame.js';
import { verifies } from '../../support/requirements.js';

/** The bytes of ASCII text, one per character (refuses anything else, so byte arrays stay explicit). */
const ascii = (text: string): number[] =>
  [...text].map((character) => {
    const code = character.charCodeAt(0);
    if (code > 0x7f) throw new Error(`not ASCII: ${character}`);
    return code;
  });

const bytes = (...parts: (number | number[])[]): Uint8Array => new Uint8Array(parts.flat());

/** A result frame written out: tag 0, then {"s":"é 日本 😀"} in UTF-8. */
const resultBytes = bytes(
  0x00,
  ascii('{"s":"'),
  [0xc3, 0xa9], // é
  0x20,
  [0xe6, 0x97, 0xa5, 0xe6, 0x9c, 0xac], // 日本
  0x20,
  [0xf0, 0x9f, 0x98, 0x80], // 😀 (U+1F600, one astral character, no lone surrogate)
  ascii('"}'),
);
const resultFrame: Frame = { kind: 'result', result: { s: 'é 日本 😀' } };

/** An error frame written out: tag 1, then {"code":-32602,"message":"Ungültig"}. */
const errorBytes = bytes(0x01, ascii('{"code":-32602,"message":"Ung'), [0xc3, 0xbc], ascii('ltig"}'));
const errorFrame: Frame = { kind: 'error', error: { code: -32602, message: 'Ungültig' } };

const decodeError = (input: Uint8Array): FrameDecodeError => {
  try {
    decodeFrame(input);
  } catch (error) {
    if (error instanceof FrameDecodeError) return error;
    throw error;
  }
  throw new Error(`expected bytes ${[...input].join(',')} not to decode`);
};

describe('encoding', () => {
  it(verifies('channel.frame-codec', 'writes a result as tag 0 and its UTF-8 JSON, byte for byte'), () => {
    expect([...encodeFrame(resultFrame)]).toEqual([...resultBytes]);
  });

  it(verifies('channel.frame-codec', 'writes an error as tag 1 and its UTF-8 JSON, byte for byte'), () => {
    expect([...encodeFrame(errorFrame)]).toEqual([...errorBytes]);
  });

  it(verifies('channel.frame-codec', "keeps an error's data and writes members in their order"), () => {
    const frame: Frame = { kind: 'error', error: { code: -32601, message: 'x', data: { tool: 'é' } } };
    expect([...encodeFrame(frame)]).toEqual([
      ...bytes(0x01, ascii('{"code":-32601,"message":"x","data":{"tool":"'), [0xc3, 0xa9], ascii('"}}')),
    ]);
  });

  it(verifies('channel.frame-codec', 'writes a lone surrogate as its JSON escape, so the body stays UTF-8'), () => {
    const frame: Frame = { kind: 'result', result: { s: '\ud800' } };
    const encoded = encodeFrame(frame);
    expect([...encoded]).toEqual([...bytes(0x00, ascii('{"s":"\\ud800"}'))]);
    expect(decodeFrame(encoded)).toEqual(frame);
  });
});

describe('decoding', () => {
  it(verifies('channel.frame-codec', 'reads the written result back, non-ASCII text included'), () => {
    expect(decodeFrame(resultBytes)).toEqual(resultFrame);
  });

  it(verifies('channel.frame-codec', 'reads the written error back, and an error carrying data'), () => {
    expect(decodeFrame(errorBytes)).toEqual(errorFrame);
    const withData = bytes(0x01, ascii('{"code":-32603,"message":"m","data":[1,"'), [0xe6, 0x97, 0xa5], ascii('"]}'));
    expect(decodeFrame(withData)).toEqual({ kind: 'error', error: { code: -32603, message: 'm', data: [1, '日'] } });
  });

  it(verifies('channel.frame-codec', 'round-trips both variants through encode and decode'), () => {
    for (const frame of [resultFrame, errorFrame]) expect(decodeFrame(encodeFrame(frame))).toEqual(frame);
  });

  it(verifies('channel.frame-codec', 'refuses no bytes at all as empty'), () => {
    const error = decodeError(new Uint8Array());
    expect(error.kind).toBe('empty');
    expect(error.tag).toBeNull();
  });

  it(verifies('channel.frame-codec', 'refuses a tag alone (0 or 1 with no body) as a body error'), () => {
    for (const tag of [0, 1]) {
      const error = decodeError(bytes(tag));
      expect(error.kind).toBe('body');
      expect(error.tag).toBe(tag);
    }
  });

  it(verifies('channel.frame-codec', 'refuses tags 2 and 255 as unknown, naming the tag'), () => {
    for (const tag of [2, 255]) {
      const error = decodeError(bytes(tag, ascii('{}')));
      expect(error.kind).toBe('unknown_tag');
      expect(error.tag).toBe(tag);
      expect(error.message).toContain(String(tag));
    }
  });

  it(verifies('channel.frame-codec', 'refuses bytes after the JSON document'), () => {
    for (const body of ['{}x', '{} {}', '{"code":1,"message":"m"}\u0000']) {
      expect(decodeError(bytes(0x00, ascii(body))).kind).toBe('body');
      expect(decodeError(bytes(0x01, ascii(body))).kind).toBe('body');
    }
  });

  it(verifies('channel.frame-codec', 'refuses a body that is not UTF-8, a byte-order mark included'), () => {
    const invalid = [
      [0xff], // never UTF-8
      [0xc3], // a sequence cut short
      [0xc0, 0xaf], // an overlong encoding of "/"
      [0xed, 0xa0, 0x80], // a surrogate encoded as if it were a character
    ];
    for (const sequence of invalid) {
      expect(decodeError(bytes(0x00, ascii('{"s":"'), sequence, ascii('"}'))).kind).toBe('body');
    }
    expect(decodeError(bytes(0x00, [0xef, 0xbb, 0xbf], ascii('{}'))).kind).toBe('body');
  });

  it(verifies('channel.frame-codec', "refuses a body that is JSON but not the variant's shape"), () => {
    for (const body of ['[]', 'null', '"text"', '42']) expect(decodeError(bytes(0x00, ascii(body))).kind).toBe('body');
    for (const body of [
      '{"message":"m"}',
      '{"code":-32600}',
      '{"code":1.5,"message":"m"}',
      '{"code":"1","message":"m"}',
    ]) {
      const error = decodeError(bytes(0x01, ascii(body)));
      expect(error.kind).toBe('body');
      expect(error.tag).toBe(1);
    }
  });
});
