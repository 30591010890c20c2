// Building the HTTP request to a system from the canonical arguments, and continuing the caller's
// W3C trace into it.
//
// Long: one case per kind of parameter (path, query, header, body) and its wire form.
import { describe, expect, it } from 'vitest';
import type { FieldBinding, JsonObject } from '../../../shared/catalog/tool.js';
import type { ResolvedCredentials } from '../../../shared/config/resolved.js';
import { buildRequest, type CallContext } from '../../../shared/invoke/call.js';
import { continueTrace } from '../../../shared/invoke/trace.js';
import { verifies } from '../../support/requirements.js';
import { aSystem, aTool, httpTargetOf } from '../../support/systems.js';

const context: CallContext = {
  executionId: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55',
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
};

const field = (name: string, location: FieldBinding['in'], wire: string = name): FieldBinding => ({
  field: name,
  in: location,
  name: wire,
});

const gatewayHeaders = {
  accept: 'application/json',
  'x-request-id': context.executionId,
  traceparent: context.traceparent,
};

describe('building the outbound request', () => {
  it.each([
    ['a space', 'PO 77', 'PO%2077'],
    ['a slash', 'a/b', 'a%2Fb'],
    ['unicode', 'دبي-١', '%D8%AF%D8%A8%D9%8A-%D9%A1'],
    ['a hash', 'PO#1', 'PO%231'],
    ['a question mark', 'x?y=1', 'x%3Fy%3D1'],
    ['a template of another field', '{line}', '%7Bline%7D'],
  ])(
    verifies('invoke.outbound', 'substitutes and URI-encodes a path parameter holding %s'),
    (_label, value, encoded) => {
      const tool = aTool({
        path: '/orders/{id}/lines/{line}',
        fields: [field('id', 'path'), field('line', 'path')],
      });
      const request = buildRequest(httpTargetOf(tool), aSystem(), { id: value, line: 3 }, context);
      expect(request.url).toBe(`https://erp.example.com/orders/${encoded}/lines/3`);
      expect(request.method).toBe('GET');
    },
  );

  it(verifies('invoke.outbound', 'fills a path parameter from its field under its wire name'), () => {
    const tool = aTool({ path: '/orders/{orderId}', fields: [field('order_id', 'path', 'orderId')] });
    const request = buildRequest(httpTargetOf(tool), aSystem(), { order_id: 'PO-77' }, context);
    expect(request.url).toBe('https://erp.example.com/orders/PO-77');
  });

  const cancelTool = aTool({
    access: 'write',
    method: 'POST',
    path: '/orders/{id}/cancel',
    fields: [field('id', 'path')],
  });
  const prefixed = aSystem({ base_url: 'https://erp.example.com/api' });

  it.each(['.', '..', '%2e', '%2E%2E', '.%2e', '%2E.'])(
    verifies('invoke.outbound', 'refuses a path parameter of "%s", which a URL parser would resolve to another path'),
    (value) => {
      expect(() => buildRequest(httpTargetOf(cancelTool), prefixed, { id: value }, context)).toThrow(
        'A path parameter cannot be "." or "..".',
      );
    },
  );

  it.each([
    ['...', '...'],
    ['.hidden', '.hidden'],
    ['a..b', 'a..b'],
    ['../x', '..%2Fx'],
    ['%2e%2e%2e', '%252e%252e%252e'],
  ])(verifies('invoke.outbound', 'sends a path parameter of "%s" as one segment'), (value, encoded) => {
    const request = buildRequest(httpTargetOf(cancelTool), prefixed, { id: value }, context);
    expect(request.url).toBe(`https://erp.example.com/api/orders/${encoded}/cancel`);
    // As the HTTP client will parse it (WHATWG URL): still the operation's path.
    expect(new URL(request.url).pathname).toBe(`/api/orders/${encoded}/cancel`);
  });

  it(verifies('invoke.outbound', 'sends query parameters, repeating arrays, and skips absent fields'), () => {
    const tool = aTool({
      path: '/orders',
      fields: [
        field('status', 'query'),
        field('q', 'query'),
        field('limit', 'query'),
        field('open_only', 'query', 'openOnly'),
        field('page', 'query'),
      ],
    });
    const args: JsonObject = { status: ['open', 'held'], q: 'a b&c=d', limit: 10, open_only: true };
    const request = buildRequest(httpTargetOf(tool), aSystem(), args, context);
    expect(request.url).toBe(
      'https://erp.example.com/orders?status=open&status=held&q=a+b%26c%3Dd&limit=10&openOnly=true',
    );
    expect(request.body).toBeNull();
    expect(request.headers).toEqual(gatewayHeaders);
  });

  it(verifies('invoke.outbound', 'sends no query string when no query field is given'), () => {
    const tool = aTool({ path: '/orders', fields: [field('status', 'query')] });
    expect(buildRequest(httpTargetOf(tool), aSystem(), {}, context).url).toBe('https://erp.example.com/orders');
  });

  it(verifies('invoke.outbound', 'sends header parameters under their lowercased wire names'), () => {
    const tool = aTool({
      fields: [field('customer_ref', 'header', 'X-Customer-Ref'), field('attempt', 'header', 'X-Attempt')],
    });
    const request = buildRequest(httpTargetOf(tool), aSystem(), { customer_ref: 'C-9', attempt: 2 }, context);
    expect(request.headers).toEqual({ ...gatewayHeaders, 'x-customer-ref': 'C-9', 'x-attempt': '2' });
  });

  it(verifies('invoke.outbound', 'sends body fields as one JSON object with a JSON content type'), () => {
    const tool = aTool({
      access: 'write',
      method: 'POST',
      path: '/orders',
      fields: [field('sku', 'body'), field('quantity', 'body', 'qty'), field('lines', 'body'), field('note', 'body')],
    });
    const args: JsonObject = { sku: 'A-1', quantity: 2, lines: [{ n: 1 }], unbound: 'x' };
    const request = buildRequest(httpTargetOf(tool), aSystem(), args, context);
    expect(request.method).toBe('POST');
    expect(request.url).toBe('https://erp.example.com/orders');
    expect(request.body).toBe('{"sku":"A-1","qty":2,"lines":[{"n":1}]}');
    expect(request.headers).toEqual({ ...gatewayHeaders, 'content-type': 'application/json' });
  });

  it(verifies('invoke.outbound', 'keeps a body field named __proto__ as an own key of the JSON body'), () => {
    const tool = aTool({ access: 'write', method: 'POST', fields: [field('odd', 'body', '__proto__')] });
    const request = buildRequest(httpTargetOf(tool), aSystem(), { odd: { polluted: true } }, context);
    expect(request.body).toBe('{"__proto__":{"polluted":true}}');
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
  });

  it(verifies('invoke.outbound', 'sends a whole-body field as the body itself'), () => {
    const tool = aTool({
      access: 'write',
      method: 'PUT',
      path: '/orders/{id}/lines',
      fields: [field('id', 'path'), field('lines', 'whole-body', 'body')],
    });
    const request = buildRequest(httpTargetOf(tool), aSystem(), { id: 'PO-1', lines: [{ sku: 'A', qty: 1 }] }, context);
    expect(request.method).toBe('PUT');
    expect(request.url).toBe('https://erp.example.com/orders/PO-1/lines');
    expect(request.body).toBe('[{"sku":"A","qty":1}]');
    expect(request.headers['content-type']).toBe('application/json');
  });

  it(verifies('invoke.outbound', 'sends no body and no content type for a GET'), () => {
    const tool = aTool({ method: 'GET', path: '/orders/{id}', fields: [field('id', 'path')] });
    const request = buildRequest(httpTargetOf(tool), aSystem(), { id: 'PO-1' }, context);
    expect(request.body).toBeNull();
    expect(Object.hasOwn(request.headers, 'content-type')).toBe(false);
    expect(request.headers).toEqual(gatewayHeaders);
  });

  it.each<[string, ResolvedCredentials, Record<string, string>]>([
    ['none', { type: 'none' }, {}],
    ['bearer', { type: 'bearer', token: 'tok-123' }, { authorization: 'Bearer tok-123' }],
    [
      'basic',
      { type: 'basic', username: 'erp-user', password: 's3cr:t wörd' },
      { authorization: 'Basic ZXJwLXVzZXI6czNjcjp0IHfDtnJk' },
    ],
    ['api_key', { type: 'api_key', header: 'X-API-Key', value: 'k-456' }, { 'x-api-key': 'k-456' }],
  ])(
    verifies('invoke.outbound', 'authenticates with %s credentials from configuration'),
    (_label, credentials, expected) => {
      const request = buildRequest(httpTargetOf(aTool()), aSystem({ credentials }), {}, context);
      expect(request.headers).toEqual({ ...gatewayHeaders, ...expected });
    },
  );

  it.each<[string, ResolvedCredentials, string, string]>([
    ['authorization (bearer)', { type: 'bearer', token: 'tok-123' }, 'Authorization', 'Bearer tok-123'],
    ['authorization (basic)', { type: 'basic', username: 'u', password: 'p' }, 'authorization', 'Basic dTpw'],
    ['the api key header', { type: 'api_key', header: 'X-API-Key', value: 'k-456' }, 'x-api-key', 'k-456'],
    ['x-request-id', { type: 'none' }, 'X-Request-Id', context.executionId],
    ['traceparent', { type: 'none' }, 'TraceParent', context.traceparent],
  ])(
    verifies('invoke.outbound', "keeps the gateway's %s over a header parameter of the same name"),
    (_label, credentials, headerName, expected) => {
      const tool = aTool({ fields: [field('sneaky', 'header', headerName)] });
      const request = buildRequest(
        httpTargetOf(tool),
        aSystem({ credentials }),
        { sneaky: 'agent-chosen-value' },
        context,
      );
      expect(request.headers[headerName.toLowerCase()]).toBe(expected);
      expect(Object.values(request.headers)).not.toContain('agent-chosen-value');
      expect(Object.keys(request.headers).filter((name) => name.toLowerCase() === headerName.toLowerCase())).toEqual([
        headerName.toLowerCase(),
      ]);
    },
  );

  it(
    verifies(
      'invoke.outbound',
      'keeps the JSON content type over a content-type header parameter when there is a body',
    ),
    () => {
      const tool = aTool({
        access: 'write',
        method: 'POST',
        fields: [field('ct', 'header', 'Content-Type'), field('sku', 'body')],
      });
      const request = buildRequest(httpTargetOf(tool), aSystem(), { ct: 'text/xml', sku: 'A' }, context);
      expect(request.headers['content-type']).toBe('application/json');
    },
  );

  it(verifies('invoke.outbound', 'appends the path under a base URL that has a path prefix'), () => {
    const tool = aTool({ path: '/orders/{id}', fields: [field('id', 'path'), field('expand', 'query')] });
    const system = aSystem({ base_url: 'http://10.0.0.5:8080/erp/api/v2' });
    const request = buildRequest(httpTargetOf(tool), system, { id: 'PO-1', expand: 'lines' }, context);
    expect(request.url).toBe('http://10.0.0.5:8080/erp/api/v2/orders/PO-1?expand=lines');
  });

  it(verifies('invoke.outbound', "takes the deadline and the size cap from the system's configuration"), () => {
    const request = buildRequest(
      httpTargetOf(aTool()),
      aSystem({ timeout: 2_500, max_response_size: 65_536 }),
      {},
      context,
    );
    expect(request.deadlineMs).toBe(2_500);
    expect(request.maxResponseBytes).toBe(65_536);
  });
});

const w3c = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const incoming = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const parts = (traceparent: string): { traceId: string; spanId: string; flags: string } => {
  const [, traceId = '', spanId = '', flags = ''] = traceparent.split('-');
  return { traceId, spanId, flags };
};

describe('continuing the trace', () => {
  it.each([
    ['sampled', incoming, '01'],
    ['not sampled', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', '00'],
    ['padded with spaces', `  ${incoming} `, '01'],
  ])(
    verifies('invoke.outbound', 'continues a valid %s traceparent with a new span of the gateway'),
    (_label, header, flags) => {
      const trace = continueTrace(header);
      expect(trace.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(trace.traceparent).toMatch(w3c);
      const sent = parts(trace.traceparent);
      expect(sent.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(sent.flags).toBe(flags);
      expect(sent.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(sent.spanId).not.toBe('00f067aa0ba902b7');
      expect(sent.spanId).not.toBe('0000000000000000');
    },
  );

  it(verifies('invoke.outbound', 'never repeats an id across many pool refills'), () => {
    // 24 random bytes per fresh trace: 1000 traces draw several 4 KB pools.
    const traces = Array.from({ length: 1000 }, () => parts(continueTrace(null).traceparent));
    expect(new Set(traces.map((trace) => trace.traceId)).size).toBe(1000);
    expect(new Set(traces.map((trace) => trace.spanId)).size).toBe(1000);
    for (const trace of traces) expect(`00-${trace.traceId}-${trace.spanId}-01`).toMatch(w3c);
  });

  it(verifies('invoke.outbound', 'mints a new span for each call of the same trace'), () => {
    const spans = new Set(Array.from({ length: 20 }, () => parts(continueTrace(incoming).traceparent).spanId));
    expect(spans.size).toBe(20);
  });

  it.each<[string, string | null | undefined]>([
    ['missing (undefined)', undefined],
    ['missing (null)', null],
    ['empty', ''],
    ['garbage', 'not-a-traceparent'],
    ['an unknown version', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['a non-hex trace id', '00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01'],
    ['trailing fields', `${incoming}-extra`],
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
  ])(verifies('invoke.outbound', 'starts a fresh trace when the traceparent is %s'), (_label, header) => {
    const trace = continueTrace(header);
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(trace.traceId).not.toMatch(/^0+$/);
    expect(trace.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(trace.traceparent).toMatch(w3c);
    expect(parts(trace.traceparent)).toEqual({ traceId: trace.traceId, spanId: expect.any(String), flags: '01' });
    expect(parts(trace.traceparent).spanId).toMatch(/^[0-9a-f]{16}$/);
  });

  it(
    verifies('invoke.outbound', 'starts a fresh trace when the parent span id is all zeros (W3C: ignore the header)'),
    () => {
      const trace = continueTrace('00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01');
      expect(trace.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(trace.traceparent).toMatch(w3c);
    },
  );

  it(verifies('invoke.outbound', 'takes no flags from an ignored traceparent (all-zero trace id, not sampled)'), () => {
    const trace = continueTrace('00-00000000000000000000000000000000-00f067aa0ba902b7-00');
    expect(trace.traceId).not.toMatch(/^0+$/);
    expect(parts(trace.traceparent).flags).toBe('01');
  });

  it(verifies('invoke.outbound', 'mints distinct fresh traces'), () => {
    const first = continueTrace(undefined);
    const second = continueTrace(undefined);
    expect(first.traceId).not.toBe(second.traceId);
  });
});
