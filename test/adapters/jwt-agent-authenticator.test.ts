// The gRPC service's token check against a real issuer stand-in: an RSA key pair made here, its
// JWKS and OpenID configuration served on loopback, tokens signed by hand so that each test can
// break exactly one thing about them.
import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fetcher } from 'aws-jwt-verify/https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtAgentAuthenticator, TokenCheckUnavailable } from '../../shared/adapters/jwt-agent-authenticator.js';
import { verifies } from '../support/requirements.js';

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const signing = rsa();
const stranger = rsa();
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const kid = 'key-1';

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

const sign = (
  payload: Record<string, unknown>,
  { key = signing.privateKey, header = {} }: { key?: KeyObject; header?: Record<string, unknown> } = {},
): string => {
  const alg = typeof header.alg === 'string' ? header.alg : 'RS256';
  const input = `${base64url({ alg, kid, typ: 'JWT', ...header })}.${base64url(payload)}`;
  if (alg === 'none') return `${input}.`;
  const signer = createSign('SHA256');
  signer.update(input);
  const signature = signer.sign(alg.startsWith('ES') ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${signature.toString('base64url')}`;
};

let server: Server;
let issuer: string;
const requests: string[] = [];
/** Loopback serves plain HTTP; aws-jwt-verify's own fetcher speaks HTTPS only. */
const loopbackFetcher: Fetcher = {
  fetch: async (uri) => {
    const response = await fetch(uri);
    if (response.status !== 200) throw new Error(`${uri} answered ${response.status}`);
    return response.arrayBuffer();
  },
};

beforeAll(async () => {
  const jwks = {
    keys: [
      { ...signing.publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
      { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    ],
  };
  server = createServer((request, response) => {
    requests.push(request.url ?? '');
    const body =
      request.url === '/.well-known/openid-configuration'
        ? { issuer, jwks_uri: `${issuer}/keys` }
        : request.url === '/keys'
          ? jwks
          : undefined;
    response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const now = () => Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: issuer,
  aud: 'gateway',
  sub: 'billing-agent',
  groups: ['finance', 'billing'],
  customer_id: 'customer-7',
  iat: now() - 10,
  exp: now() + 600,
  ...extra,
});
const authenticator = (extra: Partial<Parameters<typeof jwtAgentAuthenticator>[0]> = {}) =>
  jwtAgentAuthenticator({
    issuer,
    audience: ['gateway', 'other-gateway'],
    claimNames: { agent: 'sub', groups: 'groups', customer: 'customer_id' },
    fetcher: loopbackFetcher,
    ...extra,
  });

describe('jwtAgentAuthenticator', () => {
  it(verifies('grpc.jwt-identity', 'finds the keys by discovery and maps a valid token to its agent'), async () => {
    requests.length = 0;
    const authenticate = authenticator();
    const expected = {
      kind: 'token',
      subject: 'billing-agent',
      groups: ['billing', 'finance'],
      customerId: 'customer-7',
      expiresAt: expect.any(Number),
    };
    expect(await authenticate(sign(claims()))).toEqual(expected);
    expect(await authenticate(sign(claims({ aud: ['someone', 'other-gateway'] })))).toEqual(expected);
    // Discovery once, the key set once: both are cached for the tokens after.
    expect(requests).toEqual(['/.well-known/openid-configuration', '/keys']);
  });

  it(verifies('grpc.jwt-identity', 'reads the agent from the claims named, as the HTTP path does'), async () => {
    const authenticate = authenticator({
      jwksUri: `${issuer}/keys`,
      claimNames: { agent: 'client_id', groups: 'cognito:groups', customer: 'acting_for' },
    });
    const token = sign(claims({ client_id: 'support-agent', 'cognito:groups': '[support]', acting_for: 'c-1' }));
    expect(await authenticate(token)).toMatchObject({
      subject: 'support-agent',
      groups: ['support'],
      customerId: 'c-1',
    });
    expect(await authenticate(sign(claims({ client_id: undefined })))).toBeNull();
  });

  it(verifies('grpc.jwt-identity', 'accepts a Cognito access token by client_id and scope'), async () => {
    const authenticate = authenticator({
      jwksUri: `${issuer}/keys`,
      audience: ['client-a', 'client-b'],
      claimNames: { agent: 'client_id', groups: null, customer: null },
      requiredScopes: ['approval-gateway/invoke'],
    });
    const access = (extra: Record<string, unknown>) =>
      sign(claims({ aud: undefined, client_id: 'client-b', scope: 'approval-gateway/invoke', ...extra }));
    expect(await authenticate(access({}))).toMatchObject({ subject: 'client-b' });
    expect(await authenticate(access({ scope: 'openid approval-gateway/invoke' }))).toMatchObject({
      subject: 'client-b',
    });
    expect(await authenticate(access({ scope: 'approval-gateway/read' }))).toBeNull();
    expect(await authenticate(access({ scope: undefined }))).toBeNull();
    expect(await authenticate(access({ client_id: 'client-c' }))).toBeNull();
    // With an aud, the aud decides, as API Gateway's authorizer does.
    expect(await authenticate(access({ aud: 'elsewhere' }))).toBeNull();
  });

  it(verifies('grpc.jwt-identity', 'refuses expired, not yet valid and future-issued tokens'), async () => {
    const authenticate = authenticator();
    expect(await authenticate(sign(claims({ exp: now() - 5 })))).toBeNull();
    expect(await authenticate(sign(claims({ nbf: now() + 300 })))).toBeNull();
    expect(await authenticate(sign(claims({ iat: now() + 300 })))).toBeNull();
    expect(await authenticate(sign(claims({ exp: undefined })))).toBeNull();
  });

  it(verifies('grpc.jwt-identity', 'refuses another issuer and another audience'), async () => {
    const authenticate = authenticator();
    expect(await authenticate(sign(claims({ iss: 'https://elsewhere.example.com' })))).toBeNull();
    expect(await authenticate(sign(claims({ aud: 'not-the-gateway' })))).toBeNull();
    expect(await authenticate(sign(claims({ aud: undefined })))).toBeNull();
    // The audience check is only skipped when asked for.
    const scoped = authenticator({ audience: null, requiredScopes: ['gateway/invoke'] });
    expect(await scoped(sign(claims({ aud: 'anyone', scope: 'gateway/invoke' })))).toMatchObject({
      subject: 'billing-agent',
    });
  });

  it(verifies('grpc.jwt-identity', 'refuses a bad signature, alg none and non-RSA algorithms'), async () => {
    const authenticate = authenticator();
    expect(await authenticate(sign(claims(), { key: stranger.privateKey }))).toBeNull();
    const [header, payload] = sign(claims()).split('.');
    const altered = sign(claims({ sub: 'admin-agent' })).split('.')[1];
    expect(await authenticate(`${header}.${altered}.${sign(claims()).split('.')[2]}`)).toBeNull();
    expect(await authenticate(`${header}.${payload}.`)).toBeNull();
    expect(await authenticate(sign(claims(), { header: { alg: 'none' } }))).toBeNull();
    expect(await authenticate(sign(claims(), { header: { alg: 'HS256' } }))).toBeNull();
    // A key the JWKS does hold, but API Gateway's authorizer accepts RSA signatures only.
    expect(
      await authenticate(sign(claims(), { key: ec.privateKey, header: { alg: 'ES256', kid: 'ec-1' } })),
    ).toBeNull();
    expect(await authenticate(sign(claims(), { header: { kid: 'unknown-key' } }))).toBeNull();
  });

  it(verifies('grpc.jwt-identity', 'answers null, never throws, for garbage'), async () => {
    const authenticate = authenticator();
    for (const token of ['', 'garbage', 'a.b.c', '...', `${base64url({ alg: 'RS256' })}.e30`, 'Bearer x.y.z']) {
      await expect(authenticate(token)).resolves.toBeNull();
    }
  });

  it(
    verifies('grpc.jwt-identity', 'tells an unreachable issuer as an outage, never as a bad token, and recovers'),
    async () => {
      let reachable = false;
      const flaky: Fetcher = {
        fetch: async (uri, options) => {
          if (!reachable) throw new Error('connection refused');
          return loopbackFetcher.fetch(uri, options);
        },
      };
      const authenticate = authenticator({ fetcher: flaky });
      await expect(authenticate(sign(claims()))).rejects.toBeInstanceOf(TokenCheckUnavailable);
      // A bad token is still a bad token, whatever the issuer's state: it is judged once keys are had.
      reachable = true;
      expect(await authenticate('garbage')).toBeNull();
      expect(await authenticate(sign(claims()))).toMatchObject({ subject: 'billing-agent' });
    },
  );
});
