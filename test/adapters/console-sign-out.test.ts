// Signing out of the deployed console ends the provider's session too: the console's cookie is
// cleared and the browser sent to the provider's logout (Cognito's endpoint, with client_id and
// logout_uri; another issuer's end_session_endpoint from discovery), which sends it back to sign in.
// The provider's discovery is a small document served on loopback.

import { createServer, type Server } from 'node:http';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole } from '../../functions/console/app.js';
import { oidcSignIn } from '../../functions/console/oidc-sign-in.js';
import { lambdaContext } from '../../infra/local/http-front.js';
import { MemorySessionStore } from '../../shared/adapters/memory/console-sessions.js';
import { OidcSignIn } from '../../shared/adapters/oidc-sign-in.js';
import { encodeSession, HmacSessionSigner, newSession } from '../../shared/sessions/session.js';
import { approvalDepsFor } from '../support/approval-deps.js';
import { ManualClock } from '../support/clock.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';

const base = 'http://127.0.0.1:8787';
const back = `${base}/console/sign-in`;
const settings = { clientId: 'console', scopes: 'openid', idClaim: 'email', groupsClaim: 'groups', allowHttp: true };

/** An issuer whose discovery document says what `metadata` adds. */
const issuerServing = async (metadata: Record<string, string>): Promise<{ issuer: string; server: Server }> => {
  const issuerOf = () => {
    const address = server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  };
  const server = createServer((request, response) => {
    const issuer = issuerOf();
    if (request.url !== '/.well-known/openid-configuration') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        ...Object.fromEntries(Object.entries(metadata).map(([key, path]) => [key, `${issuer}${path}`])),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { issuer: issuerOf(), server };
};

describe("the provider's sign-out address", () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  it(verifies('deploy.console-sign-out', "is Cognito's logout endpoint with client_id and logout_uri"), async () => {
    const cognito = new OidcSignIn({
      ...settings,
      issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_pool',
      logoutUrl: 'https://gateway-approvers-0a1b2c3d.auth.eu-west-1.amazoncognito.com/logout',
    });
    const url = new URL((await cognito.signOutUrl(back)) ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(
      'https://gateway-approvers-0a1b2c3d.auth.eu-west-1.amazoncognito.com/logout',
    );
    expect(Object.fromEntries(url.searchParams)).toEqual({ client_id: 'console', logout_uri: back });
  });

  it(verifies('deploy.console-sign-out', "is another issuer's end_session_endpoint, or none"), async () => {
    const withEnd = await issuerServing({ end_session_endpoint: '/logout' });
    const without = await issuerServing({});
    servers.push(withEnd.server, without.server);
    const url = new URL((await new OidcSignIn({ ...settings, issuer: withEnd.issuer }).signOutUrl(back)) ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(`${withEnd.issuer}/logout`);
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe(back);
    expect(url.searchParams.get('client_id')).toBe('console');
    expect(await new OidcSignIn({ ...settings, issuer: without.issuer }).signOutUrl(back)).toBeNull();
  });
});

describe('POST /console/sign-out with OpenID Connect sign-in', () => {
  let local: TestStore;
  const clock = new ManualClock();
  const signer = new HmacSessionSigner(Buffer.alloc(32, 9));
  const silent = new Logger({ serviceName: 'sign-out-test', logLevel: 'SILENT' });
  beforeAll(async () => {
    local = await startTestStore(null, 'sign-out');
  });
  afterAll(async () => {
    await local?.close();
  });

  const signOut = async (signOutUrl: (returnUri: string) => Promise<string | null>) => {
    const provider = {
      start: async () => expect.unreachable(),
      startAgain: async () => expect.unreachable(),
      finish: async () => expect.unreachable(),
      signOutUrl,
    };
    const fn = createConsole(
      {
        services: approvalDepsFor(local.store, clock),
        signer,
        sessions: new MemorySessionStore(),
        logger: silent,
        publicUrl: base,
      },
      oidcSignIn(provider, silent),
      null,
    );
    const approver = { id: 'farah@example.com', name: 'Farah', groups: ['finance'] };
    const session = await encodeSession(signer, { ...newSession(approver, clock.now()), csrf: 'token' });
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey: '$default',
      rawPath: '/console/sign-out',
      rawQueryString: '',
      headers: { host: '127.0.0.1:8787', origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      cookies: [`gateway_session=${session}`],
      body: 'csrf=token',
      isBase64Encoded: false,
      requestContext: {
        accountId: '0',
        apiId: 'local',
        domainName: '127.0.0.1',
        domainPrefix: '127',
        http: { method: 'POST', path: '/console/sign-out', protocol: 'HTTP/1.1', sourceIp: '10.0.0.1', userAgent: 't' },
        requestId: 'r',
        routeKey: '$default',
        stage: '$default',
        time: '',
        timeEpoch: 0,
      },
    };
    return fn(event, lambdaContext('console', 30_000));
  };

  it(
    verifies('deploy.console-sign-out', "clears the session and sends the browser to the provider's logout"),
    async () => {
      const asked: string[] = [];
      const answer = await signOut(async (returnUri) => {
        asked.push(returnUri);
        return `https://login.example.com/logout?client_id=console&logout_uri=${encodeURIComponent(returnUri)}`;
      });
      expect(asked).toEqual([back]);
      expect(answer.statusCode).toBe(303);
      expect(answer.headers?.location).toBe(
        `https://login.example.com/logout?client_id=console&logout_uri=${encodeURIComponent(back)}`,
      );
      expect(answer.cookies?.some((cookie) => /^gateway_session=;.*Max-Age=0/.test(cookie))).toBe(true);
    },
  );

  it(
    verifies('deploy.console-sign-out', 'falls back to the sign-in page when the provider has no logout'),
    async () => {
      expect((await signOut(async () => null)).headers?.location).toBe(back);
      expect((await signOut(async () => Promise.reject(new Error('discovery failed')))).headers?.location).toBe(back);
    },
  );
});
