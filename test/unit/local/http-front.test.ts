// The local API Gateway stand-in produces the payload-2.0 events and Lambda contexts the deployed
// handlers receive, with the caller the agent authorizer would pass on.
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalAuthorizer } from '../../../infra/local/authorizer.js';
import { apiGatewayTime, httpApiEvent, startHttpFront } from '../../../infra/local/http-front.js';
import type { Listening } from '../../../infra/local/net.js';
import { verifies } from '../../support/requirements.js';

const seen: { event: APIGatewayProxyEventV2; remainingMs: number }[] = [];
let front: Listening<import('node:http').Server>;
let base: string;

beforeAll(async () => {
  const capture = async (event: APIGatewayProxyEventV2, context: Context) => {
    seen.push({ event, remainingMs: context.getRemainingTimeInMillis() });
    return { statusCode: 201, headers: { 'x-handled': 'yes' }, cookies: ['a=1'], body: 'ok' };
  };
  front = await startHttpFront({
    host: '127.0.0.1',
    port: 0,
    authorize: createLocalAuthorizer({
      agents: () => [
        {
          id: 'support-agent',
          token: 'support-token',
          tokenFromEnvironment: false,
          subject: null,
          groups: ['support', 'tier-2'],
          customer: 'customer-1042',
        },
      ],
      anonymousAgent: null,
    }),
    publicUrl: null,
    onError: () => undefined,
    routes: [
      { method: 'ANY', path: '/mcp', functionName: 'mcp', fn: capture, authorize: true, timeoutMs: 30_000 },
      { method: 'GET', path: '/open', functionName: 'open', fn: capture, authorize: false, timeoutMs: 5_000 },
    ],
  });
  base = `http://127.0.0.1:${front.port}`;
});
afterAll(async () => {
  await front.close();
});

describe('the local HTTP front', () => {
  it(
    verifies(
      'local.same-handlers',
      'invokes the handler with an HTTP API payload 2.0 event and the caller in the Lambda authorizer context',
    ),
    async () => {
      const response = await fetch(`${base}/mcp?trace=1`, {
        method: 'POST',
        headers: { authorization: 'Bearer support-token', 'content-type': 'application/json', cookie: 'c=1; d=2' },
        body: '{"jsonrpc":"2.0"}',
      });
      expect(response.status).toBe(201);
      expect(response.headers.get('x-handled')).toBe('yes');
      expect(response.headers.get('set-cookie')).toBe('a=1');
      expect(await response.text()).toBe('ok');
      const last = seen.at(-1);
      expect(last?.event).toMatchObject({
        version: '2.0',
        routeKey: 'ANY /mcp',
        rawPath: '/mcp',
        rawQueryString: 'trace=1',
        cookies: ['c=1', 'd=2'],
        body: '{"jsonrpc":"2.0"}',
        isBase64Encoded: false,
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'http' },
        requestContext: {
          http: { method: 'POST', path: '/mcp' },
          stage: '$default',
          authorizer: {
            lambda: { agentId: 'support-agent' },
          },
        },
      });
      // The request time is the API's: the epoch and its text name the same second.
      const context = last?.event.requestContext;
      expect(context?.time).toBe(apiGatewayTime(context?.timeEpoch ?? Number.NaN));
      expect(last?.remainingMs).toBeGreaterThan(29_000);
      expect(last?.remainingMs).toBeLessThanOrEqual(30_000);
    },
  );

  it(
    verifies('local.same-handlers', 'base64-encodes binary bodies and leaves public routes unauthenticated'),
    async () => {
      await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { authorization: 'Bearer support-token', 'content-type': 'application/octet-stream' },
        body: new Uint8Array([0, 1, 2, 255]),
      });
      expect(seen.at(-1)?.event).toMatchObject({ body: 'AAEC/w==', isBase64Encoded: true });
      const open = await fetch(`${base}/open`);
      expect(open.status).toBe(201);
      expect(seen.at(-1)?.event.requestContext).not.toHaveProperty('authorizer');
    },
  );

  it(
    verifies('auth.bearer-required', 'answers 401 itself for a missing or unknown token, and 404 for an unknown route'),
    async () => {
      const before = seen.length;
      const missing = await fetch(`${base}/mcp`, { method: 'POST' });
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toContain('resource_metadata="http://127.0.0.1:');
      const wrong = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
      expect(seen.length).toBe(before);
    },
  );
});

describe("the local front's events", () => {
  it(verifies('local.same-handlers', 'name the second each request arrived in, at either side of a second'), () => {
    vi.useFakeTimers();
    try {
      const request = {
        method: 'GET',
        url: new URL('http://front.local/open'),
        routeKey: 'GET /open',
        headers: {},
        body: Buffer.alloc(0),
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
      };
      // API Gateway's own form: day/month/year:time and the zone, each part two digits.
      for (const [at, text] of [
        [1_700_000_000_999, '14/Nov/2023:22:13:20 +0000'],
        [1_700_000_001_000, '14/Nov/2023:22:13:21 +0000'],
        [1_700_000_001_999, '14/Nov/2023:22:13:21 +0000'],
        [1_700_000_002_000, '14/Nov/2023:22:13:22 +0000'],
        [1_700_000_000_500, '14/Nov/2023:22:13:20 +0000'],
        [Date.UTC(2026, 2, 5, 7, 8, 9), '05/Mar/2026:07:08:09 +0000'],
      ] as const) {
        vi.setSystemTime(at);
        const { requestContext } = httpApiEvent(request);
        expect(requestContext.timeEpoch).toBe(at);
        expect(requestContext.time).toBe(text);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the local authorizer', () => {
  it(
    verifies('auth.anonymous-local-only', 'maps a request without a token to the named agent only when configured'),
    async () => {
      const agents = () => [
        { id: 'procurement-agent', token: 't', tokenFromEnvironment: false, subject: null, groups: [], customer: null },
      ];
      const off = createLocalAuthorizer({ agents, anonymousAgent: null });
      expect(await off(undefined)).toEqual({ kind: 'refused', tokenPresented: false });
      const on = createLocalAuthorizer({ agents, anonymousAgent: 'procurement-agent' });
      expect(await on(undefined)).toEqual({
        kind: 'authorized',
        caller: { kind: 'listed', agentId: 'procurement-agent' },
      });
      // A token that is presented is still checked.
      expect(await on('Bearer wrong')).toEqual({ kind: 'refused', tokenPresented: true });
    },
  );

  it(
    verifies('auth.bearer-required', 'follows the configuration: a token replaced by a reload stops working at once'),
    async () => {
      const agent = {
        id: 'procurement-agent',
        token: 'first',
        tokenFromEnvironment: false,
        subject: null,
        groups: [],
        customer: null,
      };
      let agents = [agent];
      const authorize = createLocalAuthorizer({
        agents: () => agents,
        anonymousAgent: null,
      });
      expect(await authorize('Bearer first')).toMatchObject({ kind: 'authorized' });
      agents = [{ ...agent, token: 'second' }];
      expect(await authorize('Bearer first')).toEqual({ kind: 'refused', tokenPresented: true });
      expect(await authorize('Bearer second')).toEqual({
        kind: 'authorized',
        caller: { kind: 'listed', agentId: 'procurement-agent' },
      });
    },
  );
});
