// The /tool/call-tool WebSocket authorizer against a real issuer stand-in: an RSA key pair made
// here, its JWKS served on loopback, tokens signed by hand so that each test breaks exactly one
// thing, and the handler driven with API Gateway's $connect REQUEST authorizer event.
import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Fetcher } from 'aws-jwt-verify/https';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChannelAuthorizer } from '../../functions/call-tool-authorizer.js';
import { agentFromContext } from '../../functions/commons/channel-identity.js';
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

const logger = new Logger({ serviceName: 'call-tool-authorizer-test', logLevel: 'SILENT' });
/** The authorizer as the stack configures it: the agent pool's clients, its scope, the issuer's keys. */
const stackAuthorizer = () =>
  createChannelAuthorizer({
    authenticate: jwtAgentAuthenticator({
      issuer,
      audience: ['agent-client', 'other-client'],
      requiredScopes: ['approval-gateway/invoke'],
      claimNames: { agent: 'client_id', groups: 'groups', customer: 'customer_id' },
      jwksUri: `${issuer}/keys`,
      fetcher: loopbackFetcher,
    }),
    logger,
  });
const authorize = (handler: ReturnType<typeof createChannelAuthorizer>, headers: Record<string, string>) =>
  handler(connectEvent(headers), lambdaContext('call-tool-authorizer', 5_000));

const denied = { principalId: 'anonymous', policyDocument: { Statement: [{ Effect: 'Deny', Resource: methodArn }] } };

describe('the /tool/call-tool WebSocket authorizer', () => {
  it(
    verifies('aws.call-tool-authorizer', 'allows a valid token on the method ARN with the agent in its context'),
    async () => {
      const result = await authorize(stackAuthorizer(), { Authorization: `Bearer ${sign(claims())}` });
      expect(result).toEqual({
        principalId: 'agent-client',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: methodArn }],
        },
        context: { agentId: 'agent-client', agentGroups: '[finance procurement]', customerId: '' },
      });
      // What the $default function reads back is the same agent.
      expect(agentFromContext(result.context ?? {})).toEqual({
        id: 'agent-client',
        groups: ['finance', 'procurement'],
        customerId: null,
      });
      const acting = await authorize(stackAuthorizer(), {
        authorization: `bearer ${sign(claims({ customer_id: 'customer-1042' }))}`,
      });
      expect(agentFromContext(acting.context ?? {})).toMatchObject({ customerId: 'customer-1042' });
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
        'another audience': sign(claims({ client_id: 'someone-else' })),
        'an aud naming someone else': sign(claims({ aud: 'another-api' })),
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
      const handler = stackAuthorizer();
      for (const customer of [1042, ['customer-1042'], { id: 'customer-1042' }]) {
        const result = await authorize(handler, { Authorization: `Bearer ${sign(claims({ customer_id: customer }))}` });
        expect(result, JSON.stringify(customer)).toMatchObject(denied);
        expect(result).not.toHaveProperty('context');
      }
    },
  );

  it(verifies('aws.call-tool-authorizer', 'logs a refusal without anything of the token'), async () => {
    const info = vi.spyOn(logger, 'info');
    const token = sign(claims({ exp: now() - 60 }));
    await authorize(stackAuthorizer(), { Authorization: `Bearer ${token}` });
    expect(info).toHaveBeenCalledWith('connection refused', {
      connection_id: 'Vx1cDeAbIAMCJ5A=',
      reason: 'token not valid',
    });
    const logged = JSON.stringify(info.mock.calls);
    for (const part of token.split('.')) expect(logged).not.toContain(part);
    info.mockRestore();
  });
});
