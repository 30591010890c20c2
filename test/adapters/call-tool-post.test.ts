// POST /tool/call-tool as the HTTP API hands it to the MCP function: payload 2.0 events with the
// agent authorizer's caller, the demo organization on dynalite with its ERP on loopback, and the
// answer read back from the Lambda result's base64 body as the frame it carries.
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpResult } from '../../functions/commons/middleware.js';
import { createMcpFunction } from '../../functions/mcp.js';
import { lambdaContext } from '../../infra/local/http-front.js';
import { maxChannelParamsBytes } from '../../shared/edge/call-tool/serve.js';
import { ResultObject } from '../../shared/result.js';
import { decodeFrame, type Frame } from '../../shared/wire/call-tool-frame.js';
import { type ChannelBed, startChannelBed } from '../support/channel-aws.js';
import { verifies } from '../support/requirements.js';

let bed: ChannelBed;
let mcp: ReturnType<typeof createMcpFunction>;

beforeAll(async () => {
  bed = await startChannelBed();
  mcp = createMcpFunction({
    services: bed.services,
    logger: new Logger({ serviceName: 'call-tool-post-test', logLevel: 'SILENT' }),
    allowedHostnames: null,
    allowedOrigins: [],
    publicUrl: null,
  });
}, 60_000);

afterAll(async () => {
  await bed?.close();
});

/** The caller as the authorizer passes it on (here the demo agents' entries, as the local front names them). */
const procurementClaims = { agentId: 'procurement-agent' };
const supportClaims = { agentId: 'support-agent' };

interface PostOptions {
  /** The authorizer's context; null for none at all. */
  readonly claims?: Readonly<Record<string, string>> | null;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The MCP function to hand the event to. @default the one with no Host or Origin list */
  readonly fn?: ReturnType<typeof createMcpFunction>;
}

const post = (
  body: string | Buffer,
  { claims = procurementClaims, contentType = 'application/json', headers = {}, fn = mcp }: PostOptions = {},
): Promise<HttpResult> => {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const text = typeof body === 'string' && contentType.startsWith('application/json');
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: 'POST /tool/call-tool',
    rawPath: '/tool/call-tool',
    rawQueryString: '',
    headers: {
      host: 'abc123.execute-api.eu-west-1.amazonaws.com',
      'content-type': contentType,
      'content-length': String(bytes.length),
      ...headers,
    },
    // The HTTP API base64-encodes a body it does not take for text.
    body: text ? body.toString() : bytes.toString('base64'),
    isBase64Encoded: !text,
    requestContext: {
      accountId: '111111111111',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: {
        method: 'POST',
        path: '/tool/call-tool',
        protocol: 'HTTP/1.1',
        sourceIp: '192.0.2.10',
        userAgent: 'agent/1.0',
      },
      requestId: 'Vx1cDFbXIAMFpbw=',
      routeKey: 'POST /tool/call-tool',
      stage: '$default',
      time: '01/Dec/2026:06:00:00 +0000',
      timeEpoch: Date.now(),
      ...(claims === null ? {} : { authorizer: { lambda: claims } }),
    },
  };
  return fn(event, lambdaContext('mcp', 30_000));
};

/** The frame of a binary answer, after checking that it is one. */
const frameOf = (result: HttpResult): Frame => {
  expect(result.headers).toMatchObject({ 'content-type': 'application/octet-stream' });
  expect(result.isBase64Encoded).toBe(true);
  return decodeFrame(new Uint8Array(Buffer.from(String(result.body), 'base64')));
};

const resultOf = (frame: Frame): ResultObject => {
  if (frame.kind !== 'result') throw new Error(`expected a result frame, got ${JSON.stringify(frame)}`);
  return ResultObject.parse(frame.result.structuredContent);
};

const order = (amount: string) =>
  JSON.stringify({
    name: 'erp.purchase_orders.create',
    arguments: { vendor_id: 'V-100', amount, currency: 'EUR' },
  });

describe('POST /tool/call-tool on the MCP function', () => {
  it(
    verifies(
      ['aws.call-tool-post', 'channel.identity'],
      'refuses a Host outside ALLOWED_HOSTS and a browser Origin not in ALLOWED_ORIGINS with 403, as /mcp does',
    ),
    async () => {
      const guarded = createMcpFunction({
        services: bed.services,
        logger: new Logger({ serviceName: 'call-tool-post-test', logLevel: 'SILENT' }),
        allowedHostnames: ['gateway.example.com'],
        allowedOrigins: ['console.example.com'],
        publicUrl: null,
      });
      const lookup = JSON.stringify({ name: 'erp.purchase_orders.get', arguments: { order_id: 'PO-1' } });
      // The API's own execute-api address, where only the custom domain is allowed.
      expect((await post(lookup, { fn: guarded })).statusCode).toBe(403);
      const browser = { host: 'gateway.example.com', origin: 'https://elsewhere.example.net' };
      expect((await post(lookup, { fn: guarded, headers: browser })).statusCode).toBe(403);
      const allowed = await post(lookup, {
        fn: guarded,
        headers: { host: 'gateway.example.com', origin: 'https://console.example.com' },
      });
      expect(allowed.statusCode).toBe(200);
      expect(frameOf(allowed).kind).toBe('result');
    },
  );

  it(verifies('aws.call-tool-post', 'answers 200 with the result frame as a base64 binary body'), async () => {
    const before = bed.erp.calls().length;
    const answer = await post(order('250'), {
      headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    });
    expect(answer.statusCode).toBe(200);
    expect(resultOf(frameOf(answer))).toMatchObject({ status: 'succeeded' });
    expect(bed.erp.calls().length).toBe(before + 1);
    expect(bed.erp.calls().at(-1)?.headers.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-/);
    // A held call answers its pending_approval result the same way.
    const held = await post(order('5000'));
    expect(held.statusCode).toBe(200);
    expect(resultOf(frameOf(held))).toMatchObject({ status: 'pending_approval' });
  });

  it(
    verifies('aws.call-tool-post', 'answers the channel refusals with 200 and their frame: -32700, -32602'),
    async () => {
      const notJson = await post('{"name":');
      expect([notJson.statusCode, frameOf(notJson)]).toMatchObject([200, { kind: 'error', error: { code: -32700 } }]);
      const noName = await post('{"arguments":{}}');
      expect([noName.statusCode, frameOf(noName)]).toMatchObject([200, { kind: 'error', error: { code: -32602 } }]);
      const notUtf8 = await post(Buffer.from([0x7b, 0xff, 0x7d]));
      expect([notUtf8.statusCode, frameOf(notUtf8)]).toMatchObject([200, { kind: 'error', error: { code: -32700 } }]);
    },
  );

  it(verifies('aws.call-tool-post', 'answers 413 with the -32600 frame beyond 256 KB, and runs nothing'), async () => {
    const before = bed.erp.calls().length;
    const params = JSON.stringify({ name: 'erp.purchase_orders.create', arguments: { note: '' } });
    const padded = params.replace('"note":""', `"note":"${'a'.repeat(maxChannelParamsBytes + 1 - params.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(maxChannelParamsBytes + 1);
    const answer = await post(padded);
    expect(answer.statusCode).toBe(413);
    expect(frameOf(answer)).toMatchObject({ kind: 'error', error: { code: -32600 } });
    // At the cap exactly, the params are read (and refused by the tool's schema, not by size).
    const atCap = await post(padded.replace('"note":"a', '"note":"'));
    expect(atCap.statusCode).toBe(200);
    expect(bed.erp.calls().length).toBe(before);
  });

  it(
    verifies('aws.call-tool-post', 'answers 415 with a -32600 frame for a body not sent as application/json'),
    async () => {
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=latin1',
        '',
      ]) {
        const answer = await post(order('250'), { contentType });
        expect(answer.statusCode, contentType).toBe(415);
        expect(frameOf(answer), contentType).toMatchObject({ kind: 'error', error: { code: -32600 } });
      }
      expect((await post(order('250'), { contentType: 'application/json; charset=UTF-8' })).statusCode).toBe(200);
    },
  );

  it(
    verifies(
      'aws.call-tool-post',
      "takes the agent from the authorizer's caller only: another agent's id answers not_found",
    ),
    async () => {
      const held = resultOf(frameOf(await post(order('5000'))));
      const status = JSON.stringify({
        name: 'get_execution_status',
        arguments: { execution_id: held.execution_id },
        _meta: { agent: 'procurement-agent' },
      });
      const asSupport = await post(status, { claims: supportClaims, headers: { 'x-agent-id': 'procurement-agent' } });
      expect(resultOf(frameOf(asSupport))).toMatchObject({ status: 'unknown', code: 'not_found' });
      expect(resultOf(frameOf(await post(status)))).toMatchObject({ status: 'pending_approval' });
      const noAgent = await post(order('250'), { claims: {} });
      expect(noAgent.statusCode).toBe(401);
      expect(frameOf(noAgent)).toMatchObject({ kind: 'error', error: { code: -32600 } });
    },
  );
});
