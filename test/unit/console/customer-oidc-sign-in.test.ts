// The customers' OpenID Connect sign-in in isolation: the auth_time rule held against a sign-in's
// start, the console's environment that turns it on (both variables or neither), and the routes
// with a stand-in provider (what the sign-in cookie remembers, where the callback leads, what a
// failed or foreign sign-in leaves behind). The real provider is in test/e2e/customer-oidc.test.ts.

import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { customerOidcSettings, parseConsoleEnvironment } from '../../../functions/commons/console-environment.js';
import { createConsoleFunction } from '../../../functions/console.js';
import { lambdaContext } from '../../../infra/local/http-front.js';
import { MemorySessionStore } from '../../../shared/adapters/memory/console-sessions.js';
import { MemoryExecutionStore } from '../../../shared/adapters/memory/execution-store.js';
import {
  authTimeSkewMs,
  CustomerOidcSignIn,
  freshAuthentication,
  type OidcFlow,
  OidcSignIn,
} from '../../../shared/adapters/oidc-sign-in.js';
import type { Customer } from '../../../shared/approvals/approver.js';
import { encodeSession, HmacSessionSigner, newSignIn } from '../../../shared/sessions/session.js';
import { approvalDepsFor } from '../../support/approval-deps.js';
import { ManualClock } from '../../support/clock.js';
import { quietLog } from '../../support/logs.js';
import { verifies } from '../../support/requirements.js';

const started = Date.parse('2026-11-29T12:00:00.000Z');
const seconds = (ms: number) => ms / 1000;
const flow: OidcFlow = { state: 's', nonce: 'n', verifier: 'v', started };

describe('a fresh authentication', () => {
  it(
    verifies(
      'customer.oidc-fresh-login',
      "accepts an auth_time at or after the sign-in's start, or less than the clock skew before it",
    ),
    () => {
      expect(authTimeSkewMs).toBe(60_000);
      for (const authTime of [started, started + 5_000, started - authTimeSkewMs + 1_000]) {
        expect(() => freshAuthentication({ auth_time: seconds(authTime) }, flow)).not.toThrow();
      }
    },
  );

  it(
    verifies(
      'customer.oidc-fresh-login',
      "refuses an auth_time older than the sign-in's start (past the skew), a missing one, and a sign-in that did not record its start",
    ),
    () => {
      expect(() => freshAuthentication({ auth_time: seconds(started - authTimeSkewMs - 1_000) }, flow)).toThrow(
        /reused an authentication/,
      );
      expect(() => freshAuthentication({}, flow)).toThrow(/no auth_time/);
      expect(() => freshAuthentication({ auth_time: Number.NaN }, flow)).toThrow(/no auth_time/);
      const { started: _, ...unrecorded } = flow;
      expect(() => freshAuthentication({ auth_time: seconds(started) }, unrecorded)).toThrow(/did not record/);
    },
  );
});

const consoleVariables = {
  EXECUTIONS_TABLE: 'executions',
  CONFIG_TABLE: 'config',
  CONFIG_BUCKET: 'config-bundles',
  CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
  DATA_KEY_ID: 'alias/data',
  STATE_MACHINE_ARN: 'arn:aws:states:eu-west-1:111111111111:stateMachine:approvals',
  SESSION_KEY_ID: 'alias/sessions',
  OIDC_ISSUER: 'https://login.example.com',
  OIDC_CLIENT_ID: 'console',
};

describe("the console's customer sign-in variables", () => {
  it(verifies('customer.sign-in-unconfigured', 'without CUSTOMER_OIDC_* the console has no customer sign-in'), () => {
    expect(customerOidcSettings(parseConsoleEnvironment(consoleVariables))).toBeNull();
  });

  it(
    verifies(
      'customer.oidc-customer-claim',
      'with the issuer and client id, the claim defaults to custom:customer_id and the scope to openid',
    ),
    () => {
      const environment = parseConsoleEnvironment({
        ...consoleVariables,
        CUSTOMER_OIDC_ISSUER: 'https://customers.example.com',
        CUSTOMER_OIDC_CLIENT_ID: 'customer-pages',
      });
      expect(customerOidcSettings(environment)).toEqual({
        issuer: 'https://customers.example.com',
        clientId: 'customer-pages',
        idClaim: 'custom:customer_id',
        scopes: 'openid',
      });
    },
  );

  it(verifies('customer.sign-in-unconfigured', 'refuses an issuer without a client id, naming both'), () => {
    expect(() =>
      parseConsoleEnvironment({ ...consoleVariables, CUSTOMER_OIDC_ISSUER: 'https://customers.example.com' }),
    ).toThrow(/CUSTOMER_OIDC_CLIENT_ID: set CUSTOMER_OIDC_ISSUER and CUSTOMER_OIDC_CLIENT_ID together/);
  });
});

const base = 'https://gateway.example.com';
const executionId = '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55';
const callPath = `/customer/calls/${executionId}`;
const signer = new HmacSessionSigner(Buffer.alloc(32, 7));
const context = lambdaContext('console', 30_000);

const eventOf = (path: string, cookies: string[] = [], method = 'GET'): APIGatewayProxyEventV2 => {
  const [rawPath = path, rawQueryString = ''] = path.split('?');
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: { host: 'gateway.example.com' },
    cookies,
    isBase64Encoded: false,
    requestContext: {
      accountId: '0',
      apiId: 'api',
      domainName: 'gateway.example.com',
      domainPrefix: 'gateway',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
  };
};

/** A provider that answers as told and records what it was asked. */
class StandInProvider extends CustomerOidcSignIn {
  readonly starts: { redirectUri: string; now: number }[] = [];
  readonly finishes: { callback: string; flow: OidcFlow }[] = [];

  constructor(private readonly answer: () => Promise<Customer>) {
    super({ issuer: 'https://customers.example.com', clientId: 'customer-pages', idClaim: 'sub', scopes: 'openid' });
  }

  override async start(redirectUri: string, now: number) {
    this.starts.push({ redirectUri, now });
    return {
      url: 'https://customers.example.com/authorize?prompt=login&max_age=0',
      flow: { state: 'st', nonce: 'no', verifier: 've', started: now },
    };
  }

  override async finish(callbackUrl: URL, pending: OidcFlow) {
    this.finishes.push({ callback: callbackUrl.href, flow: pending });
    return this.answer();
  }
}

const consoleWith = (provider: StandInProvider, clock: ManualClock) =>
  createConsoleFunction({
    services: approvalDepsFor(new MemoryExecutionStore(quietLog), clock),
    signer,
    sessions: new MemorySessionStore(),
    signIn: {
      kind: 'oidc',
      provider: new OidcSignIn({
        issuer: 'https://login.example.com',
        clientId: 'console',
        idClaim: 'email',
        groupsClaim: 'groups',
        scopes: 'openid',
      }),
    },
    customerSignIn: provider,
    logger: new Logger({ serviceName: 'customer-oidc-test', logLevel: 'SILENT' }),
    publicUrl: base,
  });

const cookieNamed = (cookies: readonly string[] | undefined, name: string) =>
  (cookies ?? []).find((line) => line.startsWith(`${name}=`));
const payloadOf = (line: string | undefined): Record<string, unknown> =>
  JSON.parse(Buffer.from((line ?? '').split('=')[1]?.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;

describe("the customers' OIDC sign-in routes", () => {
  it(
    verifies(
      'customer.oidc-fresh-login',
      'sends the customer to the provider from the sign-in page, remembering the call and when the sign-in started',
    ),
    async () => {
      const clock = new ManualClock();
      const provider = new StandInProvider(async () => ({ id: 'customer-1042', name: null }));
      const fn = consoleWith(provider, clock);
      const sent = await fn(eventOf(`/customer/sign-in?next=${encodeURIComponent(callPath)}`), context);
      expect(sent.statusCode).toBe(303);
      expect(sent.headers?.location).toBe('https://customers.example.com/authorize?prompt=login&max_age=0');
      expect(provider.starts).toEqual([{ redirectUri: `${base}/customer/callback`, now: clock.now() }]);
      const pending = cookieNamed(sent.cookies, '__Host-gateway_sign_in');
      expect(pending).toMatch(/; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
      expect(payloadOf(pending)).toMatchObject({
        use: 'sign-in',
        flow: { state: 'st', nonce: 'no', verifier: 've', next: callPath, started: clock.now() },
      });
    },
  );

  it(
    verifies(
      ['customer.oidc-fresh-login', 'customer.oidc-customer-claim'],
      'the callback opens a customer session for that one call, as the local sign-in does, and spends the sign-in',
    ),
    async () => {
      const clock = new ManualClock();
      const provider = new StandInProvider(async () => ({ id: 'customer-1042', name: 'Dana' }));
      const fn = consoleWith(provider, clock);
      const pending = await encodeSession(
        signer,
        newSignIn(clock.now(), { state: 'st', nonce: 'no', verifier: 've', next: callPath, started: clock.now() }),
      );
      const back = await fn(
        eventOf('/customer/callback?code=c&state=st', [`__Host-gateway_sign_in=${pending}`]),
        context,
      );
      expect(back.statusCode).toBe(303);
      expect(back.headers?.location).toBe(callPath);
      expect(provider.finishes).toEqual([
        {
          callback: `${base}/customer/callback?code=c&state=st`,
          flow: { state: 'st', nonce: 'no', verifier: 've', next: callPath, started: clock.now() },
        },
      ]);
      const session = cookieNamed(back.cookies, '__Host-gateway_customer');
      expect(session).toMatch(/; Max-Age=900; HttpOnly; SameSite=Lax; Secure$/);
      expect(payloadOf(session)).toMatchObject({
        use: 'customer',
        sub: 'customer-1042',
        name: 'Dana',
        call: executionId,
        exp: clock.now() + 15 * 60_000,
      });
      expect(back.cookies).toContain('__Host-gateway_sign_in=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure');
    },
  );

  it(
    verifies(
      'customer.oidc-fresh-login',
      "refuses an approver's sign-in in progress (400) and a provider's refusal (401), opening no customer session",
    ),
    async () => {
      const clock = new ManualClock();
      const provider = new StandInProvider(async () => {
        throw new Error('The ID token has no auth_time');
      });
      const fn = consoleWith(provider, clock);
      const approverFlow = await encodeSession(
        signer,
        newSignIn(clock.now(), { state: 'st', nonce: 'no', verifier: 've', next: '/console' }),
      );
      const foreign = await fn(
        eventOf('/customer/callback?code=c&state=st', [`__Host-gateway_sign_in=${approverFlow}`]),
        context,
      );
      expect(foreign.statusCode).toBe(400);
      expect(provider.finishes).toEqual([]);

      const customerFlow = await encodeSession(
        signer,
        newSignIn(clock.now(), { state: 'st', nonce: 'no', verifier: 've', next: callPath, started: clock.now() }),
      );
      const refused = await fn(
        eventOf('/customer/callback?code=c&state=st', [`__Host-gateway_sign_in=${customerFlow}`]),
        context,
      );
      expect(refused.statusCode).toBe(401);
      expect(String(refused.body)).toContain('The identity provider did not confirm who you are for this request');
      expect(cookieNamed(refused.cookies, '__Host-gateway_customer')).toBeUndefined();
      expect(refused.cookies).toContain('__Host-gateway_sign_in=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure');

      // Only the provider's redirect (a GET) ends a sign-in.
      const posted = await fn(
        eventOf('/customer/callback', [`__Host-gateway_sign_in=${customerFlow}`], 'POST'),
        context,
      );
      expect(posted.statusCode).toBe(400);
      expect(provider.finishes).toHaveLength(1);
    },
  );
});
