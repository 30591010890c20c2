// The local front and the Host header: a malformed one is the client's error (400, nothing
// logged), and no Host a client sends is written into the authentication challenge.
import type { Server } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalAuthorizer } from '../../../infra/local/authorizer.js';
import { startHttpFront } from '../../../infra/local/http-front.js';
import type { Listening } from '../../../infra/local/net.js';
import { rawExchange } from '../../support/http.js';
import { verifies } from '../../support/requirements.js';

const errors: unknown[] = [];
const seen: APIGatewayProxyEventV2[] = [];
let front: Listening<Server>;

beforeAll(async () => {
  const capture = async (event: APIGatewayProxyEventV2) => {
    seen.push(event);
    return { statusCode: 200, body: 'ok' };
  };
  front = await startHttpFront({
    host: '127.0.0.1',
    port: 0,
    authorize: createLocalAuthorizer({
      agents: () => [
        {
          id: 'procurement-agent',
          token: 'good-token',
          tokenFromEnvironment: false,
          subject: null,
          groups: [],
          customer: null,
        },
      ],
      anonymousAgent: null,
    }),
    publicUrl: null,
    onError: (error) => errors.push(error),
    routes: [
      { method: 'ANY', path: '/mcp', functionName: 'mcp', fn: capture, authorize: true, timeoutMs: 30_000 },
      { method: 'GET', path: '/open', functionName: 'open', fn: capture, authorize: false, timeoutMs: 5_000 },
    ],
  });
});
afterAll(async () => {
  await front.close();
});

describe('the Host header at the local front', () => {
  it.each([
    ['a space', 'exa mple'],
    ['an unclosed IPv6 bracket', '[::1'],
    ['a path and user info', 'user@evil.example/path'],
    ['a port out of range', '127.0.0.1:99999'],
    ['an empty value', ''],
  ])(
    verifies('http.host-header-checked', 'answers 400 to a Host with %s, logs no error and calls no function'),
    async (_label, host) => {
      const before = seen.length;
      for (const path of ['/mcp', '/open']) {
        const answer = await rawExchange(front.port, `POST ${path} HTTP/1.1\r\nHost: ${host}`, '{}');
        expect(answer.status).toBe(400);
        expect(answer.body).toContain('Host header');
      }
      expect(errors).toEqual([]);
      expect(seen.length).toBe(before);
    },
  );

  it(
    verifies('http.host-header-checked', 'names the bound address in the challenge, whatever Host the client sends'),
    async () => {
      for (const token of [null, 'wrong-token']) {
        const answer = await rawExchange(
          front.port,
          `POST /mcp HTTP/1.1\r\nHost: evil.example:${front.port}${token === null ? '' : `\r\nAuthorization: Bearer ${token}`}`,
          '{}',
        );
        expect(answer.status).toBe(401);
        expect(answer.headers).toContain(
          `resource_metadata="http://127.0.0.1:${front.port}/.well-known/oauth-protected-resource/mcp"`,
        );
        expect(answer.headers).not.toContain('evil.example');
      }
      // A well-formed Host still reaches the function (which checks it against its own list).
      const open = await rawExchange(front.port, 'GET /open HTTP/1.1\r\nHost: localhost');
      expect(open.status).toBe(200);
      expect(errors).toEqual([]);
    },
  );
});
