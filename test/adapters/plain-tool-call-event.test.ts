// The plain tools/call read straight from API Gateway's event: the MCP function with the plain path
// against the same function sending every request through the SDK (which reads the web Request built
// from the event), over the same services; the event's headers as the endpoint reads them against
// the web Request's; and a plain call served with no web Request to be had at all.
import { Logger } from '@aws-lambda-powertools/logger';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRequestHead, toWebRequest } from '../../functions/commons/http-event.js';
import type { HttpResult } from '../../functions/commons/middleware.js';
import { createMcpFunction } from '../../functions/mcp.js';
import { lambdaContext } from '../../infra/local/http-front.js';
import { createMcpEndpoint } from '../../shared/edge/mcp/endpoint.js';
import type { McpRequestHead } from '../../shared/edge/mcp/request-head.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { anAgent } from '../support/agents.js';
import { type ChannelBed, startChannelBed } from '../support/channel-aws.js';
import { verifies } from '../support/requirements.js';

const revision = '2026-07-28';
const host = 'abc123.execute-api.eu-west-1.amazonaws.com';

let bed: ChannelBed;
const functions: { plain: ReturnType<typeof createMcpFunction>; sdk: ReturnType<typeof createMcpFunction> }[] = [];

const functionsOver = (allowedHostnames: readonly string[] | null = null) => {
  const deps = {
    services: bed.services,
    logger: new Logger({ serviceName: 'plain-tool-call-event-test', logLevel: 'SILENT' }),
    allowedHostnames,
    allowedOrigins: ['console.example.com'],
    publicUrl: null,
  };
  const pair = { plain: createMcpFunction(deps), sdk: createMcpFunction({ ...deps, plainToolCalls: false }) };
  functions.push(pair);
  return pair;
};

beforeAll(async () => {
  bed = await startChannelBed();
}, 60_000);

afterAll(async () => {
  await bed?.close();
});

/** What the authorizer passes on for the procurement agent (its entry, as the local front names it). */
const authorized = { authorizer: { lambda: { agentId: 'procurement-agent' } } };

/** A tools/call event as the HTTP API delivers it, with the authorizer's caller. */
const callEvent = (
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
  cookies?: string[],
): APIGatewayProxyEventV2 => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: { [PROTOCOL_VERSION_META_KEY]: revision, 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
  return {
    version: '2.0',
    routeKey: 'ANY /mcp',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: {
      host,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': revision,
      'mcp-method': 'tools/call',
      'mcp-name': name,
      'x-forwarded-proto': 'https',
      ...headers,
    },
    ...(cookies === undefined ? {} : { cookies }),
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '111111111111',
      apiId: 'abc123',
      domainName: host,
      domainPrefix: 'abc123',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '192.0.2.10', userAgent: 'agent/1.0' },
      requestId: 'Vx1cDFbXIAMFpbw=',
      routeKey: 'ANY /mcp',
      stage: '$default',
      time: '02/Dec/2026:06:00:00 +0000',
      timeEpoch: Date.now(),
      ...authorized,
    },
  };
};

/** What varies between two runs of the same call: execution ids, the ERP's order numbers, times. */
const normalized = (result: HttpResult): HttpResult => ({
  ...result,
  body: String(result.body)
    .replaceAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replaceAll(/PO-\d+/g, 'PO-<n>')
    .replaceAll(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>'),
});

/**
 * Node defines its web globals lazily: the first read of any of these loads its fetch implementation
 * (tens of milliseconds in a fresh process). Answers which of them `run` read, watching each with
 * a getter in its place and putting the original back after.
 */
const lazyWebGlobals = ['Request', 'Response', 'Headers', 'FormData', 'WebSocket'] as const;
const readsOfWebGlobals = async (run: () => Promise<unknown>): Promise<string[]> => {
  const read = new Set<string>();
  const originals = lazyWebGlobals.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)] as const);
  for (const [name, original] of originals) {
    const value: unknown = original?.get === undefined ? original?.value : original.get.call(globalThis);
    Object.defineProperty(globalThis, name, {
      configurable: true,
      get: () => {
        read.add(name);
        return value;
      },
    });
  }
  try {
    await run();
  } finally {
    for (const [name, original] of originals) {
      if (original === undefined) Reflect.deleteProperty(globalThis, name);
      else Object.defineProperty(globalThis, name, original);
    }
  }
  return [...read].sort();
};

const invoke = async (fn: ReturnType<typeof createMcpFunction>, event: APIGatewayProxyEventV2) =>
  normalized(await fn(structuredClone(event), lambdaContext('mcp', 30_000)));

describe('the MCP function answers a plain tools/call from the event', () => {
  it(
    verifies(
      'perf.plain-from-event',
      'with the very result the SDK’s path gives from the web Request: writes, reads, held calls, refusals',
    ),
    async () => {
      const pair = functionsOver([host]);
      const events: [APIGatewayProxyEventV2, number, string][] = [
        [
          callEvent('erp.purchase_orders.create', { vendor_id: 'V-100', amount: '250', currency: 'EUR' }),
          200,
          'succeeded',
        ],
        [callEvent('erp.shipments.track', { tracking_number: '1Z999AA10123456784' }), 200, 'succeeded'],
        [
          callEvent('erp.purchase_orders.create', { vendor_id: 'V-100', amount: '1500', currency: 'EUR' }),
          200,
          'pending_approval',
        ],
        [callEvent('erp.purchase_orders.create', { vendor_id: 'V-100' }), 200, 'invalid_arguments'],
        [callEvent('erp.no_such_tool', {}), 200, 'unknown_tool'],
        // Header values padded with whitespace, which the web Request drops: still plain, still alike.
        [
          callEvent(
            'erp.shipments.track',
            { tracking_number: '1Z999AA10123456784' },
            {
              'mcp-name': ' erp.shipments.track\t',
              'mcp-method': 'tools/call ',
            },
          ),
          200,
          'succeeded',
        ],
        // Refused before any call: a Host not on the list, an Origin not allowed, the SDK's own answers.
        [callEvent('erp.shipments.track', { tracking_number: '1' }, { host: 'rebound.example' }), 403, 'Invalid Host'],
        [
          callEvent('erp.shipments.track', { tracking_number: '1' }, { origin: 'https://evil.example' }),
          403,
          'Invalid Origin',
        ],
        // Not plain (the header names another tool): the SDK refuses it from the web Request.
        [callEvent('erp.shipments.track', { tracking_number: '1' }, { 'mcp-name': 'erp.vendors.get' }), 400, ''],
      ];
      for (const [event, status, says] of events) {
        const reference = await invoke(pair.sdk, event);
        const answer = await invoke(pair.plain, event);
        expect(answer).toEqual(reference);
        expect(answer.statusCode).toBe(status);
        expect(answer.body).toContain(says);
      }
    },
  );

  it(verifies('perf.plain-from-event', 'the event’s headers read as the web Request built from it gives them'), () => {
    // Any header but Host, whose value becomes part of the web Request's URL (kept valid here).
    const names = ['origin', 'content-type', 'content-length', 'mcp-name', 'mcp-method', 'traceparent', 'cookie'];
    const padding = fc.constantFrom('', ' ', '\t', ' \t ', '\r\n');
    const value = fc.tuple(padding, fc.stringMatching(/^[!-~]([ !-~]{0,10}[!-~])?$/), padding);
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...names), value),
        fc.option(fc.array(fc.stringMatching(/^[a-z]{1,5}=[a-z0-9]{0,5}$/), { minLength: 1, maxLength: 3 })),
        (headers, cookies) => {
          const event = callEvent('erp.shipments.track', {}, {}, cookies ?? undefined);
          event.headers = Object.fromEntries(Object.entries(headers).map(([name, parts]) => [name, parts.join('')]));
          event.headers.host = host;
          const head = eventRequestHead(event);
          const web = toWebRequest(event, undefined);
          for (const name of [...names, 'host', 'absent-header']) {
            expect(head.header(name), name).toBe(web.headers.get(name));
            expect(head.header(name.toUpperCase()), name).toBe(web.headers.get(name));
          }
          expect(head.method).toBe(web.method);
          expect(head.web().url).toBe(web.url);
        },
      ),
      { numRuns: 300 },
    );
  });

  it(
    verifies('perf.plain-from-event', 'a plain call never asks for the web Request; any other request does'),
    async () => {
      const endpoint = createMcpEndpoint(bed.services, {
        allowedHostnames: [host],
        allowedOrigins: [],
        requestGate: new RequestGate(bed.services.clock),
      });
      try {
        const event = callEvent('erp.shipments.track', { tracking_number: '1Z999AA10123456784' });
        const without = (head: McpRequestHead): McpRequestHead => ({
          method: head.method,
          header: (name) => head.header(name),
          web: () => {
            throw new Error('the web Request was asked for');
          },
        });
        const agent = anAgent('procurement-agent', ['procurement']);
        const answer = await endpoint.serve(without(eventRequestHead(event)), agent, String(event.body));
        expect(answer).not.toBeInstanceOf(Response);
        expect(answer).toMatchObject({ status: 200, contentType: 'application/json' });
        expect(JSON.parse((answer as { body: string }).body).result.structuredContent.status).toBe('succeeded');
        // The same request as a tools/list is the SDK's: it needs the web Request.
        const list = { ...event, body: String(event.body).replace('"tools/call"', '"tools/list"') };
        list.headers = { ...list.headers, 'mcp-method': 'tools/list' };
        await expect(endpoint.serve(without(eventRequestHead(list)), agent, String(list.body))).rejects.toThrow(
          /web Request was asked for/,
        );
      } finally {
        await endpoint.close();
      }
    },
  );

  it(
    verifies('perf.plain-no-web-globals', 'a plain call reads none of the web globals; a tools/list does'),
    async () => {
      const { plain } = functionsOver([host]);
      const call = callEvent('erp.shipments.track', { tracking_number: '1Z999AA10123456784' });
      // Warm once, so what is read on first use only (a client, a cache) is not what is counted.
      await invoke(plain, call);
      const read = await readsOfWebGlobals(() => invoke(plain, call));
      expect(read).toEqual([]);
      // The same watch sees a request the SDK serves: it builds the web Request and reads the Response.
      const list = { ...call, body: String(call.body).replace('"tools/call"', '"tools/list"') };
      list.headers = { ...list.headers, 'mcp-method': 'tools/list' };
      expect(await readsOfWebGlobals(() => invoke(plain, list))).toEqual(expect.arrayContaining(['Request']));
    },
  );
});
