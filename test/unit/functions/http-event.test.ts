// The MCP function hands a POST of JSON to the endpoint as text, not as a web Request's body: the
// text must be exactly what reading that body would have given, and the cap counts the same bytes.
import { readRequestBody } from '@modelcontextprotocol/server';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  eventBody,
  eventBodyBytes,
  eventBodyExceeds,
  eventBodyText,
  toWebRequest,
} from '../../../functions/commons/http-event.js';
import { verifies } from '../../support/requirements.js';

const eventWith = (body: string | undefined, isBase64Encoded: boolean): APIGatewayProxyEventV2 => ({
  version: '2.0',
  routeKey: 'POST /mcp',
  rawPath: '/mcp',
  rawQueryString: '',
  headers: { host: 'gateway.test', 'content-type': 'application/json' },
  requestContext: {
    accountId: '000000000000',
    apiId: 'local',
    domainName: 'gateway.test',
    domainPrefix: 'gateway',
    http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: '' },
    requestId: 'r',
    routeKey: 'POST /mcp',
    stage: '$default',
    time: '',
    timeEpoch: 0,
  },
  ...(body === undefined ? {} : { body }),
  isBase64Encoded,
});

/** What the endpoint read from the body of the Request built from the event (as it did before). */
const readAsRequest = async (event: APIGatewayProxyEventV2): Promise<string> => {
  const read = await readRequestBody(toWebRequest(event, eventBody(event)), Number.POSITIVE_INFINITY);
  if (read.tooLarge) throw new Error('unexpectedly too large');
  return read.text;
};

/** Text with what makes decoding differ: byte order marks, lone surrogates, astral and invisible characters. */
const awkwardText = fc
  .array(
    fc.oneof(
      fc.constantFrom('\uFEFF\uFEFF', '\uFEFF', '\uD800', '\uDC00', '😀', '\u200B', '"', '{', 'é', '\u0000'),
      fc.string({ maxLength: 4 }),
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(''));

describe('the body of a POST of JSON, as text', () => {
  it(verifies('mcp.read-once', 'is what reading the request body would give, for text and base64 events'), async () => {
    await fc.assert(
      fc.asyncProperty(awkwardText, async (text) => {
        const event = eventWith(text, false);
        expect(eventBodyText(event)).toBe(await readAsRequest(event));
        expect(eventBodyBytes(event)).toBe(eventBody(event)?.length);
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 24 }), fc.boolean(), async (bytes, bom) => {
        const raw = Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(bytes)]);
        const event = eventWith(raw.toString('base64'), true);
        expect(eventBodyText(event)).toBe(await readAsRequest(event));
        expect(eventBodyBytes(event)).toBe(raw.length);
      }),
      { numRuns: 300 },
    );
  });

  it(verifies('mcp.read-once', 'is over a cap exactly when its bytes are, counted or not'), () => {
    // The check counts only a body that could be over the cap: every size either side of it agrees.
    fc.assert(
      fc.property(awkwardText, fc.boolean(), fc.nat({ max: 60 }), (text, base64, limit) => {
        const event = eventWith(base64 ? Buffer.from(text).toString('base64') : text, base64);
        expect(eventBodyExceeds(event, limit)).toBe(eventBodyBytes(event) > limit);
      }),
      { numRuns: 500 },
    );
  });

  it(verifies('mcp.read-once', 'is empty, of no bytes, for an event without a body'), async () => {
    const event = eventWith(undefined, false);
    expect(eventBodyText(event)).toBe(await readAsRequest(event));
    expect(eventBodyBytes(event)).toBe(0);
  });
});
