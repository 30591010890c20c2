// The agent authorizer against a real issuer stand-in: an RSA key pair made here, its JWKS served
// on loopback, tokens signed by hand so that each test breaks exactly one thing, and the handler
// driven with API Gateway's events: the WebSocket API's $connect REQUEST authorizer event and the
// HTTP API's payload 2.0 REQUEST authorizer event.
//
// Long: one test per way a token can be wrong, each driven through both APIs' authorizer events.
import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Fetcher } from 'aws-jwt-verify/https';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAgentAuthorizer } from '../../functions/agent-authorizer.js';
import { callerFromContext } from '../../functions/commons/caller-context.js';
import { lambdaContext } from '../../infra/local/http-front.js';
import { jwtAgentAuthenticator } from '../../shared/adapters/jwt-agent-authenticator.js';
import { verifies } from '../support/requirements.js';

const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = 'key-1';
const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const sign = (payload: Record<string, unknown>, key: KeyObject = signing.privateKey): string => {
  const input = `${base64url({ alg: 'RS256', kid, typ: 'JWT' })}.${base64url(payload)}`;
  const signer = createSign('SHA256');
  signer.update(input);
  return `${input}.${signer.sign(key).toString('base64url')}`;
};

let server: Server;
let issuer: string;
const loopbackFetcher: Fetcher = {
  fetch: async (uri) => {
    const response = await fetch(uri);
    if (response.status !== 200) throw new Error(`${uri} answered ${response.status}`);
    return response.arrayBuffer();
  },
};

beforeAll(async () => {
  const jwks = { keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] };
  server = createServer((request, response) => {
    response.writeHead(request.url === '/keys' ? 200 : 404, { 'content-type': 'application/json' });
    response.end(JSON.stringify(request.url === '/keys' ? jwks : {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const now = () => Math.floor(Date.now() / 1000);
/** A Cognito-style access token, as the stack's default agent pool issues them. */
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: issuer,
  client_id: 'agent-client',
  token_use: 'access',
  scope: 'approval-gateway/invoke',
  groups: ['procurement', 'finance'],
  iat: now() - 10,
  exp: now() + 600,
  ...extra,
});

const methodArn = 'arn:aws:execute-api:eu-west-1:111111111111:abc123/live/$connect';
const connectEvent = (headers: Record<string, string>) => ({
  type: 'REQUEST',
  methodArn,
  headers: { Host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'Sec-WebSocket-Version': '13', ...headers },
  requestContext: {
    routeKey: '$connect',
    eventType: 'CONNECT',
    connectionId: 'Vx1cDeAbIAMCJ5A=',
    apiId: 'abc123',
    stage: 'live',
  },
});

const routeEvent = (headers: Record<string, string>) => ({
  version: '2.0',
  type: 'REQUEST',
  routeArn: 'arn:aws:execute-api:eu-west-1:111111111111:def456/$default/POST/mcp',
  identitySource: [headers.authorization ?? ''],
  routeKey: 'POST /mcp',
  rawPath: '/mcp',
  headers,
  requestContext: { requestId: 'req-1', routeKey: 'POST /mcp', http: { method: 'POST', path: '/mcp' } },
});

const logger = new Logger({ serviceName: 'agent-authorizer-test', logLevel: 'SILENT' });
/**
 * The authorizer as the stack configures it with its Cognito pool: the pool's issuer and keys and
 * the agent scope, no audience (any app client granted the scope), the caller by `client_id`, and
 * no groups or customer read from the token.
 */
const stackAuthorizer = (
  options: Partial<Parameters<typeof jwtAgentAuthenticator>[0]> = {},
): ReturnType<typeof createAgentAuthorizer> =>
  createAgentAuthorizer({
    authenticate: jwtAgentAuthenticator({
      issuer,
      audience: null,
      requiredScopes: ['approval-gateway/invoke'],
      claimNames: { agent: 'client_id', groups: null, customer: null },
      jwksUri: `${issuer}/keys`,
      fetcher: loopbackFetcher,
      ...options,
    }),
    logger,
  });
/** An outside issuer's deployment that names an audience and the claims an unlisted agent's groups and customer come from. */
const outsideAuthorizer = () =>
  stackAuthorizer({
    audience: ['gateway'],
    requiredScopes: [],
    claimNames: { agent: 'sub', groups: 'groups', customer: 'customer_id' },
  });
const authorize = async (handler: ReturnType<typeof createAgentAuthorizer>, headers: Record<string, string>) => {
  const result = await handler(connectEvent(headers), lambdaContext('agent-authorizer', 5_000));
  if (!('policyDocument' in result)) throw new Error('a $connect event got an HTTP API answer');
  return result;
};
const authorizeRoute = async (handler: ReturnType<typeof createAgentAuthorizer>, headers: Record<string, string>) => {
  const result = await handler(routeEvent(headers), lambdaContext('agent-authorizer', 5_000));
  if (!('isAuthorized' in result)) throw new Error('an HTTP API event got a WebSocket answer');
  return result;
};

const denied = { principalId: 'anonymous', policyDocument: { Statement: [{ Effect: 'Deny', Resource: methodArn }] } };

describe('the agent authorizer on the /tool/call-tool WebSocket API', () => {
  it(
    verifies('aws.call-tool-authorizer', 'allows a valid token on the method ARN with the caller in its context'),
    async () => {
      const expiry = now() + 600;
      const result = await authorize(stackAuthorizer(), { Authorization: `Bearer ${sign(claims({ exp: expiry }))}` });
      expect(result).toEqual({
        principalId: 'agent-client',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: methodArn }],
        },
        // The Cognito pool's tokens name no groups the gateway reads: the configuration gives them.
        context: { subject: 'agent-client', groups: '[]', customerId: '', expiresAt: String(expiry) },
      });
      // What the $default function reads back is the same caller.
      expect(callerFromContext(result.context ?? {})).toEqual({
        kind: 'token',
        subject: 'agent-client',
        groups: [],
        customerId: null,
        expiresAt: expiry,
      });
      const acting = await authorize(outsideAuthorizer(), {
        authorization: `bearer ${sign(claims({ sub: 'outside-agent', aud: 'gateway', customer_id: 'customer-1042' }))}`,
      });
      expect(callerFromContext(acting.context ?? {})).toMatchObject({
        subject: 'outside-agent',
        groups: ['finance', 'procurement'],
        customerId: 'customer-1042',
      });
    },
  );

  it(
    verifies(
      'aws.call-tool-authorizer',
      'denies an expired, foreign-issuer, wrongly addressed, unscoped or wrongly signed token, and a missing one',
    ),
    async () => {
      const handler = stackAuthorizer();
      const tokens = {
        expired: sign(claims({ exp: now() - 60 })),
        'no expiry': sign(claims({ exp: undefined })),
        'another issuer': sign(claims({ iss: 'https://elsewhere.example.com' })),
        'no client_id': sign(claims({ client_id: undefined })),
        'no required scope': sign(claims({ scope: 'openid' })),
        'signed by another key': sign(claims(), stranger.privateKey),
        'not a JWT': 'not-a-token',
      };
      for (const [what, token] of Object.entries(tokens)) {
        const result = await authorize(handler, { Authorization: `Bearer ${token}` });
        expect(result, what).toMatchObject(denied);
        expect(result, what).not.toHaveProperty('context');
      }
      const refusedHeaders: Record<string, string>[] = [
        {},
        { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      ];
      for (const headers of refusedHeaders) {
        expect(await authorize(handler, headers)).toMatchObject(denied);
      }
    },
  );

  it(
    verifies(
      ['aws.call-tool-authorizer', 'auth.agent-from-claims'],
      'denies a token whose customer claim is not text, rather than let its agent in as an inside agent',
    ),
    async () => {
      const handler = outsideAuthorizer();
      for (const customer of [1042, ['customer-1042'], { id: 'customer-1042' }]) {
        const token = sign(claims({ sub: 'outside-agent', aud: 'gateway', customer_id: customer }));
        const result = await authorize(handler, { Authorization: `Bearer ${token}` });
        expect(result, JSON.stringify(customer)).toMatchObject(denied);
        expect(result).not.toHaveProperty('context');
      }
    },
  );

  it(verifies('aws.call-tool-authorizer', 'logs a refusal without anything of the token'), async () => {
    const info = vi.spyOn(logger, 'info');
    const token = sign(claims({ exp: now() - 60 }));
    await authorize(stackAuthorizer(), { Authorization: `Bearer ${token}` });
    expect(info).toHaveBeenCalledWith('token refused', {
      connection_id: 'Vx1cDeAbIAMCJ5A=',
      reason: 'token not valid',
    });
    const logged = JSON.stringify(info.mock.calls);
    for (const part of token.split('.')) expect(logged).not.toContain(part);
    info.mockRestore();
  });
});

describe('the agent authorizer while the issuer is down', () => {
  it(
    verifies('grpc.jwt-identity', 'fails the request with a log line instead of telling a good token it is not valid'),
    async () => {
      const warn = vi.spyOn(logger, 'warn');
      const down = stackAuthorizer({
        fetcher: {
          fetch: async () => {
            throw new Error('connect ECONNREFUSED');
          },
        },
      });
      await expect(authorizeRoute(down, { Authorization: `Bearer ${sign(claims())}` })).rejects.toThrow(
        /could not be had/,
      );
      expect(warn).toHaveBeenCalledWith("an agent's token could not be checked now", expect.anything());
      warn.mockRestore();
    },
  );
});

describe('the agent authorizer on the HTTP API', () => {
  it(
    verifies(
      'agents.any-app-client',
      'lets in any app client of the pool granted the agent scope, one created after synth included, with its caller in the context',
    ),
    async () => {
      const handler = stackAuthorizer();
      for (const client of ['demo-agent-client', 'created-after-deploy']) {
        const expiry = now() + 300;
        const token = sign(claims({ client_id: client, sub: client, exp: expiry, groups: ['admins'] }));
        expect(await authorizeRoute(handler, { authorization: `Bearer ${token}` })).toEqual({
          isAuthorized: true,
          context: { subject: client, groups: '[]', customerId: '', expiresAt: String(expiry) },
        });
      }
    },
  );

  it(
    verifies(
      'agents.unauthorized-challenge',
      'passes a token that is not valid on with no caller, for the MCP function to answer 401 with its challenge',
    ),
    async () => {
      const handler = stackAuthorizer();
      const tokens = [
        sign(claims({ exp: now() - 60 })),
        sign(claims({ scope: 'openid' })),
        sign(claims({ iss: 'https://elsewhere.example.com' })),
        sign(claims(), stranger.privateKey),
      ];
      for (const token of tokens) {
        expect(await authorizeRoute(handler, { authorization: `Bearer ${token}` })).toEqual({
          isAuthorized: true,
          context: {},
        });
      }
      expect(await authorizeRoute(handler, { authorization: 'Basic YTpi' })).toEqual({
        isAuthorized: true,
        context: {},
      });
    },
  );

  it(
    verifies('agents.any-app-client', 'keeps checking the audience of an outside issuer configured with one'),
    async () => {
      const handler = outsideAuthorizer();
      const addressed = sign(claims({ sub: 'outside-agent', aud: 'gateway' }));
      expect((await authorizeRoute(handler, { authorization: `Bearer ${addressed}` })).context).toMatchObject({
        subject: 'outside-agent',
      });
      for (const aud of ['another-api', undefined]) {
        const token = sign(claims({ sub: 'outside-agent', aud }));
        expect(await authorizeRoute(handler, { authorization: `Bearer ${token}` }), String(aud)).toEqual({
          isAuthorized: true,
          context: {},
        });
      }
    },
  );

  it(
    verifies(
      'agents.identity-from-config',
      "names the caller by client_id, never by a `sub` that spells a listed client's id",
    ),
    async () => {
      const token = sign(claims({ client_id: 'plain-client', sub: 'listed-client' }));
      expect((await authorizeRoute(stackAuthorizer(), { authorization: `Bearer ${token}` })).context).toMatchObject({
        subject: 'plain-client',
      });
    },
  );

  it(verifies('agents.any-app-client', 'refuses to be built with neither an audience nor a scope'), () => {
    expect(() => stackAuthorizer({ audience: [], requiredScopes: [] })).toThrow(/audience or a required scope/);
  });
});
