// What a system's answer means: succeeded, failed or unknown, with a code that is either the
// gateway's own, the system's short machine token, or http_<status>; never the system's free text.
//
// Long: one row per kind of answer, for reads and for writes.
import { describe, expect, it } from 'vitest';
import type { CatalogTool } from '../../../shared/catalog/tool.js';
import { type CallOutcome, classify, systemErrorCode } from '../../../shared/invoke/call.js';
import type { OutboundResult } from '../../../shared/invoke/system-client.js';
import { verifies } from '../../support/requirements.js';
import { aSystem, aTool } from '../../support/systems.js';
import { noSecretRules, readTool, writeTool } from './invoke-fixtures.js';

const response = (status: number, body: string | Buffer, contentType: string | null = 'application/json') =>
  ({
    kind: 'response',
    status,
    contentType,
    body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
  }) as const satisfies OutboundResult;

const json = (status: number, value: unknown) => response(status, JSON.stringify(value));

const tools: readonly (readonly [string, CatalogTool])[] = [
  ['read', readTool],
  ['write', writeTool],
];

const outcomeOf = (result: OutboundResult, tool: CatalogTool, errorCodeField?: string): CallOutcome =>
  classify(
    result,
    tool,
    aSystem(errorCodeField === undefined ? {} : { error_code_field: errorCodeField }),
    noSecretRules,
  );

describe('a successful answer', () => {
  it.each(tools)(
    verifies('invoke.outcomes', 'a 200 JSON answer to a %s succeeds with the parsed, redacted result'),
    (_, tool) => {
      const outcome = outcomeOf(
        json(200, { id: 'PO-1', total: '1500.25', api_key: 'sk-live-123', lines: [1, 2] }),
        tool,
      );
      expect(outcome).toEqual({
        status: 'succeeded',
        code: null,
        result: { id: 'PO-1', total: '1500.25', api_key: '[REDACTED]', lines: [1, 2] },
        httpStatus: 200,
      });
    },
  );

  it.each(tools)(verifies('invoke.outcomes', 'a 201 JSON answer to a %s succeeds with its status'), (_, tool) => {
    expect(outcomeOf(json(201, [{ id: 'PO-2', nested: { accessToken: 't' } }]), tool)).toEqual({
      status: 'succeeded',
      code: null,
      result: [{ id: 'PO-2', nested: { accessToken: '[REDACTED]' } }],
      httpStatus: 201,
    });
  });

  it.each(tools)(verifies('invoke.outcomes', 'a 204 with no body to a %s succeeds with a null result'), (_, tool) => {
    expect(outcomeOf(response(204, '', null), tool)).toEqual({
      status: 'succeeded',
      code: null,
      result: null,
      httpStatus: 204,
    });
  });

  it(
    verifies('invoke.outcomes', 'redacts the fields the system configuration lists and the response schema marks'),
    () => {
      const tool = aTool({
        responseSchema: {
          type: 'object',
          properties: {
            pnr: { type: 'string', 'x-sensitive': true },
            pin_hint: { type: 'string', format: 'password' },
          },
        },
      });
      const outcome = classify(
        json(200, { pnr: 'ABC123', pin_hint: 'x', booking_ref: 'BR-1', passenger_name: 'Lina' }),
        tool,
        aSystem(),
        { names: new Set(['booking_ref']) },
      );
      expect(outcome.result).toEqual({
        pnr: '[REDACTED]',
        pin_hint: '[REDACTED]',
        booking_ref: '[REDACTED]',
        passenger_name: 'Lina',
      });
    },
  );

  it.each(tools)(verifies('invoke.outcomes', 'a 2xx that is not JSON: %s'), (access, tool) => {
    const outcome = outcomeOf(response(200, '<html>Welcome, see the portal</html>', 'text/html'), tool);
    expect(outcome).toEqual({
      status: access === 'write' ? 'unknown' : 'failed',
      code: 'unreadable_response',
      result: null,
      httpStatus: 200,
    });
    expect(JSON.stringify(outcome)).not.toContain('portal');
  });

  it.each(tools)(
    verifies('invoke.outcomes', 'a 2xx nested deeper than 64 levels is unreadable: %s'),
    (access, tool) => {
      const nested = (depth: number) => `${'{"next":'.repeat(depth)}{"api_key":"sk-live-1"}${'}'.repeat(depth)}`;
      // A small answer nested 100 000 deep would overflow the stack of every walk over it.
      const outcome = outcomeOf(response(200, nested(100_000)), tool);
      expect(outcome).toEqual({
        status: access === 'write' ? 'unknown' : 'failed',
        code: 'unreadable_response',
        result: null,
        httpStatus: 200,
      });
      expect(outcomeOf(response(200, nested(63)), tool)).toMatchObject({ status: 'succeeded' });
    },
  );
});

describe('an answer that is not a success', () => {
  it.each(
    tools.flatMap(([access, tool]) => [301, 302, 303, 307, 308].map((status) => [access, status, tool] as const)),
  )(verifies('invoke.outcomes', 'a redirect to a %s (%i) is refused'), (access, status, tool) => {
    const outcome = outcomeOf(response(status, '{"location":"https://elsewhere.example"}'), tool);
    expect(outcome).toEqual({
      status: access === 'write' ? 'unknown' : 'failed',
      code: 'redirect_refused',
      result: null,
      httpStatus: status,
    });
  });

  it.each(tools.flatMap(([access, tool]) => [500, 502, 503, 504].map((status) => [access, status, tool] as const)))(
    verifies('invoke.outcomes', 'a server error to a %s (%i) is http_<status>'),
    (access, status, tool) => {
      const outcome = outcomeOf(json(status, { code: 'DB_DOWN', message: 'Database cluster db-7 is down' }), tool);
      expect(outcome).toEqual({
        status: access === 'write' ? 'unknown' : 'failed',
        code: `http_${status}`,
        result: null,
        httpStatus: status,
      });
      expect(JSON.stringify(outcome)).not.toContain('db-7');
    },
  );

  it.each(tools)(
    verifies('invoke.outcomes', 'an informational 1xx status to a %s is no usable answer'),
    (access, tool) => {
      expect(outcomeOf(response(101, ''), tool)).toEqual({
        status: access === 'write' ? 'unknown' : 'failed',
        code: 'http_101',
        result: null,
        httpStatus: 101,
      });
    },
  );

  it.each(tools)(
    verifies('invoke.outcomes', 'an answer over the size cap to a %s is response_too_large'),
    (access, tool) => {
      expect(outcomeOf({ kind: 'too_large', status: 200 }, tool)).toEqual({
        status: access === 'write' ? 'unknown' : 'failed',
        code: 'response_too_large',
        result: null,
        httpStatus: 200,
      });
    },
  );

  it.each(tools)(verifies('invoke.outcomes', 'a timeout after sending to a %s'), (access, tool) => {
    expect(outcomeOf({ kind: 'timeout', sent: true }, tool)).toEqual({
      status: access === 'write' ? 'unknown' : 'failed',
      code: 'timeout',
      result: null,
      httpStatus: null,
    });
  });

  it.each(tools)(verifies('invoke.outcomes', 'a timeout before anything was sent fails a %s'), (_, tool) => {
    expect(outcomeOf({ kind: 'timeout', sent: false }, tool)).toEqual({
      status: 'failed',
      code: 'timeout',
      result: null,
      httpStatus: null,
    });
  });

  it.each(tools)(verifies('invoke.outcomes', 'a connection refused before sending fails a %s'), (_, tool) => {
    expect(outcomeOf({ kind: 'connection_failed', sent: false }, tool)).toEqual({
      status: 'failed',
      code: 'connection_failed',
      result: null,
      httpStatus: null,
    });
  });

  it.each(tools)(verifies('invoke.outcomes', 'a connection dropped after sending a %s'), (access, tool) => {
    expect(outcomeOf({ kind: 'connection_failed', sent: true }, tool)).toEqual({
      status: access === 'write' ? 'unknown' : 'failed',
      code: 'connection_failed',
      result: null,
      httpStatus: null,
    });
  });

  it(verifies('invoke.outcomes', 'only writes can end unknown'), () => {
    const results: OutboundResult[] = [
      json(200, {}),
      response(200, 'nope'),
      response(302, ''),
      json(409, { code: 'X' }),
      response(503, ''),
      { kind: 'too_large', status: 200 },
      { kind: 'timeout', sent: true },
      { kind: 'timeout', sent: false },
      { kind: 'connection_failed', sent: true },
      { kind: 'connection_failed', sent: false },
    ];
    expect(results.map((result) => outcomeOf(result, readTool).status)).toEqual([
      'succeeded',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
    expect(results.map((result) => outcomeOf(result, writeTool).status)).toEqual([
      'succeeded',
      'unknown',
      'unknown',
      'failed',
      'unknown',
      'unknown',
      'unknown',
      'failed',
      'unknown',
      'failed',
    ]);
  });
});

describe("a refusal (4xx) and the system's error code", () => {
  it.each(tools)(
    verifies(
      ['invoke.outcomes', 'invoke.no-free-text'],
      "a 409 with a machine code fails a %s with the system's code, lowercased",
    ),
    (_, tool) => {
      const outcome = outcomeOf(json(409, { code: 'DUPLICATE_ORDER', message: 'Order exists: see PO-77' }), tool);
      expect(outcome).toEqual({ status: 'failed', code: 'duplicate_order', result: null, httpStatus: 409 });
      expect(JSON.stringify(outcome)).not.toContain('PO-77');
    },
  );

  it.each([
    ['error.code', { error: { code: 'x', message: 'Free text here' } }, undefined, 'x'],
    ['error_code', { error_code: 'y', detail: 'Free text here' }, undefined, 'y'],
    ['code before error_code', { code: 'first', error_code: 'second' }, undefined, 'first'],
    ['error_code before error.code', { error_code: 'second', error: { code: 'third' } }, undefined, 'second'],
    [
      'a configured pointer',
      { detail: { reason: 'credit.limit-exceeded' }, code: 'ignored' },
      '/detail/reason',
      'credit.limit-exceeded',
    ],
    ['a configured pointer with an escaped slash', { 'a/b': { 'c~d': 'OUT_OF_STOCK' } }, '/a~1b/c~0d', 'out_of_stock'],
    ['a 64-character code', { code: `e${'x'.repeat(63)}` }, undefined, `e${'x'.repeat(63)}`],
  ])(
    verifies(['invoke.outcomes', 'invoke.no-free-text'], 'a 4xx takes the code from %s'),
    (_label, body, pointer, code) => {
      for (const [, tool] of tools) {
        expect(outcomeOf(json(422, body), tool, pointer)).toEqual({
          status: 'failed',
          code,
          result: null,
          httpStatus: 422,
        });
      }
    },
  );

  it.each<[string, unknown, string | undefined, number]>([
    ['free text', { code: 'Order exists: see PO-77' }, undefined, 409],
    ['free text under error.code', { error: { code: 'Order exists: see PO-77' } }, undefined, 400],
    ['free text under a configured pointer', { detail: { reason: 'Order exists: see PO-77' } }, '/detail/reason', 409],
    ['a code of 65 characters', { code: `e${'x'.repeat(64)}`, note: 'Order exists: see PO-77' }, undefined, 400],
    ['a number', { code: 4091, message: 'Order exists: see PO-77' }, undefined, 409],
    ['an object', { code: { value: 'dup' }, message: 'Order exists: see PO-77' }, undefined, 409],
    ['null', { code: null, message: 'Order exists: see PO-77' }, undefined, 404],
    ['a code starting with punctuation', { code: '_dup', message: 'Order exists: see PO-77' }, undefined, 409],
    ['no code at all', { message: 'Order exists: see PO-77' }, undefined, 403],
    ['a code only where the configured pointer does not look', { code: 'dup' }, '/detail/reason', 409],
    ['an array body', ['Order exists: see PO-77'], undefined, 400],
    ['a JSON string body', 'Order exists: see PO-77', undefined, 400],
  ])(
    verifies(
      ['invoke.outcomes', 'invoke.no-free-text'],
      'a 4xx whose code is %s fails with http_<status> and none of its text',
    ),
    (_label, body, pointer, status) => {
      for (const [, tool] of tools) {
        const outcome = outcomeOf(json(status, body), tool, pointer);
        expect(outcome).toEqual({ status: 'failed', code: `http_${status}`, result: null, httpStatus: status });
        const shown = JSON.stringify(outcome);
        expect(shown).not.toContain('Order exists');
        expect(shown).not.toContain('PO-77');
        expect(shown).not.toContain('xxxx');
      }
    },
  );

  it.each(tools)(
    verifies(
      ['invoke.outcomes', 'invoke.no-free-text'],
      'a 4xx that is not JSON fails a %s with http_<status> and none of its text',
    ),
    (_, tool) => {
      const outcome = outcomeOf(response(404, 'Not Found: order PO-77 does not exist', 'text/plain'), tool);
      expect(outcome).toEqual({ status: 'failed', code: 'http_404', result: null, httpStatus: 404 });
      expect(JSON.stringify(outcome)).not.toContain('PO-77');
    },
  );

  it.each(tools)(verifies('invoke.outcomes', 'an empty 4xx fails a %s with http_<status>'), (_, tool) => {
    expect(outcomeOf(response(429, '', null), tool)).toEqual({
      status: 'failed',
      code: 'http_429',
      result: null,
      httpStatus: 429,
    });
  });
});

describe('systemErrorCode', () => {
  it.each<[string, unknown, string | undefined, string | null]>([
    ['/code', { code: 'DUPLICATE_ORDER' }, undefined, 'duplicate_order'],
    ['/error_code', { error_code: 'Rate.Limited' }, undefined, 'rate.limited'],
    ['/error/code', { error: { code: 'po-closed' } }, undefined, 'po-closed'],
    ['/code over /error_code', { code: 'a1', error_code: 'b2' }, undefined, 'a1'],
    ['the next default when /code is free text', { code: 'Some thing', error_code: 'b2' }, undefined, 'b2'],
    ['the configured pointer only', { code: 'a1', detail: { reason: 'r1' } }, '/detail/reason', 'r1'],
    ['nothing when the configured pointer misses', { code: 'a1' }, '/detail/reason', null],
    ['the whole body for the empty pointer', 'CONFLICT', '', 'conflict'],
    ['a digit-first code', { code: '409' }, undefined, '409'],
    ['nothing for a space', { code: 'not found' }, undefined, null],
    ['nothing for a colon', { code: 'dup:1' }, undefined, null],
    ['nothing for a leading dot', { code: '.dup' }, undefined, null],
    ['nothing for an empty string', { code: '' }, undefined, null],
    ['nothing for 65 characters', { code: 'a'.repeat(65) }, undefined, null],
    ['64 characters', { code: 'a'.repeat(64) }, undefined, 'a'.repeat(64)],
    ['nothing for a non-ASCII letter', { code: 'dupé' }, undefined, null],
    ['nothing for a number', { code: 7 }, undefined, null],
    ['nothing for a boolean', { code: true }, undefined, null],
    ['nothing through an array', { error: [{ code: 'x' }] }, undefined, null],
    ['nothing for null', null, undefined, null],
    ['nothing for a string body with the default pointers', 'CONFLICT', undefined, null],
    ['nothing from the prototype', {}, '/constructor', null],
  ])(verifies('invoke.no-free-text', 'finds %s'), (_label, body, pointer, expected) => {
    expect(systemErrorCode(body, pointer)).toBe(expected);
  });
});
