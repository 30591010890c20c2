// The endpoint's routing shortcut for 2026-07-28 requests (claimsModernRevision) against the SDK's
// own classification (isLegacyRequest): every body the shortcut sends to the modern path, the SDK
// would send there too, whatever the body, the headers and the claim's value.
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimsModernRevision } from '../../../shared/edge/mcp/endpoint.js';
import { verifies } from '../../support/requirements.js';

const post = (body: unknown, headers: Record<string, string> = {}): Request =>
  new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

const envelope = (version: unknown) => ({
  [PROTOCOL_VERSION_META_KEY]: version,
  'io.modelcontextprotocol/clientCapabilities': {},
});

const toolCall = (meta: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'erp.purchase_orders.create', arguments: {}, _meta: meta },
  ...extra,
});

describe('routing a request to the 2026-07-28 path', () => {
  it(
    verifies('perf.classified-once', 'a current client’s tools/call is routed by the shortcut, as the SDK routes it'),
    async () => {
      const body = toolCall(envelope('2026-07-28'));
      expect(claimsModernRevision(body)).toBe(true);
      expect(await isLegacyRequest(post(body), body)).toBe(false);
    },
  );

  it(
    verifies(
      'perf.classified-once',
      'bodies without the claim, initialize and responses are left to the SDK’s predicate',
    ),
    () => {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'c', version: '1' },
          _meta: envelope('x'),
        },
      };
      for (const body of [
        toolCall(undefined),
        toolCall({}),
        toolCall('2026-07-28'),
        initialize,
        { jsonrpc: '2.0', id: 1, result: {}, method: 'tools/call', params: { _meta: envelope('2026-07-28') } },
        {
          jsonrpc: '2.0',
          id: 1,
          error: { code: 1, message: 'x' },
          method: 'ping',
          params: { _meta: envelope('2026-07-28') },
        },
        [toolCall(envelope('2026-07-28'))],
        null,
        'text',
      ]) {
        expect(claimsModernRevision(body)).toBe(false);
      }
    },
  );

  it(
    verifies(
      'perf.classified-once',
      'whatever the body and headers, a body the shortcut routes is never a 2025-era one to the SDK',
    ),
    async () => {
      const version = fc.oneof(
        fc.constantFrom('2026-07-28', '2025-11-25', '2025-06-18', '1999-01-01', ''),
        fc.string(),
        fc.integer(),
        fc.constant(null),
      );
      const meta = fc.oneof(
        version.map(envelope),
        fc.dictionary(
          fc.constantFrom(PROTOCOL_VERSION_META_KEY, 'io.modelcontextprotocol/clientCapabilities', 'x'),
          fc.jsonValue(),
        ),
        fc.jsonValue(),
      );
      const body = fc.record(
        {
          jsonrpc: fc.constantFrom('2.0', '1.0'),
          id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
          method: fc.constantFrom(
            'tools/call',
            'tools/list',
            'initialize',
            'server/discover',
            'notifications/initialized',
            'ping',
          ),
          params: fc.oneof(
            { weight: 4, arbitrary: meta.map((m) => ({ name: 't', _meta: m })) },
            { weight: 1, arbitrary: fc.jsonValue() },
          ),
        },
        { requiredKeys: ['method', 'params'] },
      );
      // Now and then a response's member besides the request's.
      const member = fc.option(fc.constantFrom({ result: {} }, { error: { code: 1, message: 'x' } }), { freq: 5 });
      const headers = fc.record(
        {
          'mcp-protocol-version': fc.constantFrom('2026-07-28', '2025-11-25', 'junk'),
          'mcp-method': fc.constantFrom('tools/call', 'tools/list', 'initialize'),
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(body, member, headers, async (request, extra, sent) => {
          const message = { ...request, ...extra };
          if (!claimsModernRevision(message)) return;
          expect(await isLegacyRequest(post(message, sent), message)).toBe(false);
        }),
        { numRuns: 2000 },
      );
    },
  );
});
