// Signing in again for a call that asks a fresh or strong sign-in (@reauth, @acr), through OpenID
// Connect against a real provider (panva's oidc-provider on loopback, over plain HTTP as a browser
// would go through it) and the console function as AWS wires it; the console's clock is the test's
// (real time plus an offset it sets), the provider's is real.
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleFunction } from '../../functions/console.js';
import { httpApiEvent, lambdaContext } from '../../infra/local/http-front.js';
import { MemorySessionStore } from '../../shared/adapters/memory/console-sessions.js';
import { MemoryExecutionStore } from '../../shared/adapters/memory/execution-store.js';
import { OidcSignIn } from '../../shared/adapters/oidc-sign-in.js';
import type { Clock } from '../../shared/clock.js';
import type { DecisionRecord } from '../../shared/executions/execution.js';
import { HmacSessionSigner, randomToken } from '../../shared/sessions/session.js';
import { approvalDepsFor, unusedPort } from '../support/approval-deps.js';
import { anExecution, humanStep } from '../support/executions.js';
import { quietLog } from '../support/logs.js';
import { authorizationResponse, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { verifies } from '../support/requirements.js';

const base = 'http://console.test';
const callback = `${base}/console/callback`;
const accounts = { farah: { email: 'farah@example.com', email_verified: true, name: 'Farah', groups: ['finance'] } };
const reauthMs = 5 * 60_000;
const context = lambdaContext('console', 30_000);

/** The console's clock: real time (the provider's) moved on by `offsetMs`. */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
}
const clock = new OffsetClock();
const store = new MemoryExecutionStore(quietLog);
const signalled: string[] = [];
let provider: TestOidcProvider;
let fn: ReturnType<typeof createConsoleFunction>;

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUri: callback, accounts });
  fn = createConsoleFunction({
    services: approvalDepsFor(store, clock, {
      approvalRuns: {
        start: unusedPort('starting an approval run'),
        signal: async (token) => {
          signalled.push(token);
          return true;
        },
      },
    }),
    signer: new HmacSessionSigner(Buffer.from(randomToken(), 'base64url')),
    sessions: new MemorySessionStore(),
    signIn: {
      kind: 'oidc',
      provider: new OidcSignIn({
        issuer: provider.issuer,
        clientId: provider.clientId,
        idClaim: 'email',
        groupsClaim: 'groups',
        scopes: 'openid email profile groups',
        allowHttp: true,
      }),
    },
    logger: new Logger({ serviceName: 'step-up-test', logLevel: 'SILENT' }),
    publicUrl: base,
  });
}, 60_000);

afterAll(async () => {
  await provider?.close();
  expect(provider?.errors ?? []).toEqual([]);
});

/** A browser's cookies at the console: the latest value of each name it was sent. */
class Browser {
  readonly cookies = new Map<string, string>();
  /** The browser's cookies at the provider (its session there). */
  readonly providerJar = new Map<string, string>();

  async go(path: string, method = 'GET', body?: string) {
    const cookies = [...this.cookies].map(([name, value]) => `${name}=${value}`);
    // The event API Gateway would hand the console for this request, as the local front builds it.
    const event = httpApiEvent({
      method,
      url: new URL(path, base),
      routeKey: 'ANY /console/{proxy+}',
      headers: {
        host: 'console.test',
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', origin: base }),
      },
      ...(cookies.length === 0 ? {} : { cookieHeader: cookies.join('; ') }),
      body: Buffer.from(body ?? ''),
      protocol: 'HTTP/1.1',
      sourceIp: '192.0.2.1',
    });
    const answer = await fn(event, context);
    for (const line of answer.cookies ?? []) {
      const [pair = ''] = line.split(';');
      const index = pair.indexOf('=');
      if (line.includes('Max-Age=0')) this.cookies.delete(pair.slice(0, index));
      else this.cookies.set(pair.slice(0, index), pair.slice(index + 1));
    }
    const location = answer.headers?.location;
    return {
      status: answer.statusCode,
      location: location === undefined ? undefined : String(location),
      body: String(answer.body ?? ''),
    };
  }

  /** At the provider: its login page (if it asks) for `login`, until it sends the browser back. */
  async atProvider(location: string | undefined, login = 'farah') {
    const url = new URL(String(location));
    return { asked: url, back: await authorizationResponse(url, login, callback, this.providerJar) };
  }

  /** Signs in to the console (the plain sign-in, no fresh authentication asked). */
  async signIn() {
    const started = await this.go('/console/sign-in?next=/console');
    const { back } = await this.atProvider(started.location);
    expect((await this.go(back.href)).status).toBe(303);
  }
}

/** A call held for finance whose policy asks a sign-in within 5 minutes (and of these classes). */
const heldCall = async (more: Partial<NonNullable<DecisionRecord['step']>>) => {
  const execution = anExecution({
    created_at: new Date(clock.now()).toISOString(),
    expires_at: new Date(clock.now() + 3_600_000).toISOString(),
    arguments_hash: 'hash-of-the-arguments',
    decision: {
      effect: 'allow',
      reason: null,
      determining: [],
      step: humanStep({ staff: 'finance', customer: false }, more),
      config_version: 'v1',
    },
  });
  await store.create(execution);
  return execution.execution_id;
};

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

const approve = (browser: Browser, executionId: string, page: string) =>
  browser.go(
    `/console/executions/${executionId}/decision`,
    'POST',
    new URLSearchParams({ csrf: csrfOf(page), arguments_hash: 'hash-of-the-arguments', outcome: 'approve' }).toString(),
  );

describe('signing in again for a call, through OpenID Connect', () => {
  it(
    verifies(
      ['approvals.step-up-sign-in-time', 'approvals.step-up-sign-in-again'],
      'a session without auth_time cannot decide a @reauth call; signing in again sends prompt=login and max_age, comes back to the call with a fresh auth_time, and decides',
    ),
    async () => {
      clock.offsetMs = 0;
      const browser = new Browser();
      await browser.signIn();
      const oldSession = browser.cookies.get('gateway_session');
      const executionId = await heldCall({ reauth_ms: reauthMs });
      const page = await browser.go(`/console/executions/${executionId}`);
      expect(page.status).toBe(200);
      // The provider put no auth_time in the plain sign-in's ID token: the session does not know when.
      expect(page.body).toContain(
        'This call asks for a sign-in within the last 5 minutes, and this session does not know when you signed in.',
      );
      expect(page.body).not.toContain('Approve and run');
      const link = `/console/executions/${executionId}/sign-in-again`;
      expect(page.body).toContain(`<a class="button" href="${link}">Sign in again</a>`);
      const refused = await approve(browser, executionId, page.body);
      expect(refused.status).toBe(403);
      expect((await store.get(executionId))?.status).toBe('pending_approval');

      const againAt = clock.now();
      const again = await browser.go(link);
      expect(again.status).toBe(303);
      const { asked, back } = await browser.atProvider(again.location);
      expect(asked.searchParams.get('prompt')).toBe('login');
      expect(asked.searchParams.get('max_age')).toBe('300');
      expect(asked.searchParams.has('acr_values')).toBe(false);
      const returned = await browser.go(back.href);
      expect(returned).toMatchObject({ status: 303, location: `/console/executions/${executionId}` });
      // The session it replaced ended: a kept copy of its cookie opens nothing.
      const copy = new Browser();
      copy.cookies.set('gateway_session', String(oldSession));
      expect((await copy.go('/console')).status).toBe(303);

      const fresh = await browser.go(`/console/executions/${executionId}`);
      expect(fresh.body).toContain('Approve and run');
      expect((await store.get(executionId))?.status).toBe('pending_approval');
      const decided = await approve(browser, executionId, fresh.body);
      expect(decided.status).toBe(303);
      const approved = await store.get(executionId);
      expect(approved?.status).toBe('approved');
      // The approval keeps when that sign-in happened: the provider's auth_time, not before it started.
      expect(approved?.approvals).toMatchObject([{ by: 'farah@example.com', group: 'finance', acr: null }]);
      const signedInAt = Date.parse(approved?.approvals[0]?.signed_in_at ?? '');
      expect(signedInAt).toBeGreaterThanOrEqual(Math.floor(againAt / 1000) * 1000);
      expect(signedInAt).toBeLessThanOrEqual(clock.now());
    },
  );

  it(
    verifies(
      'approvals.step-up-sign-in-again',
      "an auth_time older than the sign-in's start (the provider reused its session) is refused, and the call stays undecidable",
    ),
    async () => {
      clock.offsetMs = 0;
      const browser = new Browser();
      await browser.signIn();
      const executionId = await heldCall({ reauth_ms: reauthMs });
      // The approver comes back two minutes later (the console's clock; the provider's session stays).
      clock.offsetMs = 2 * 60_000;
      const again = await browser.go(`/console/executions/${executionId}/sign-in-again`);
      const altered = new URL(String(again.location));
      // A provider that ignores prompt=login and max_age: as if they were not sent.
      altered.searchParams.delete('prompt');
      altered.searchParams.set('max_age', '3600');
      const back = await authorizationResponse(altered, 'farah', callback, browser.providerJar);
      const refused = await browser.go(back.href);
      expect(refused.status).toBe(401);
      expect(refused.body).toContain('The identity provider did not confirm who you are');
      const page = await browser.go(`/console/executions/${executionId}`);
      expect(page.body).toContain('This call asks for a sign-in within the last 5 minutes');
      expect(page.body).not.toContain('Approve and run');
    },
  );

  it(
    verifies(
      'approvals.step-up-acr',
      'a sign-in without acr cannot decide a call that names classes; the page names them, and signing in again asks for them',
    ),
    async () => {
      clock.offsetMs = 0;
      const browser = new Browser();
      await browser.signIn();
      const executionId = await heldCall({ acr: ['phr', 'phrh'] });
      const page = await browser.go(`/console/executions/${executionId}`);
      expect(page.body).toContain(
        'This call asks for a sign-in of one of these classes: phr, phrh. Your sign-in named no class, which is not one of them.',
      );
      expect(page.body).not.toContain('Approve and run');
      const refused = await approve(browser, executionId, page.body);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('This call asks for a sign-in of one of these classes: phr, phrh.');
      const again = await browser.go(`/console/executions/${executionId}/sign-in-again`);
      const asked = new URL(String(again.location));
      expect(asked.searchParams.get('acr_values')).toBe('phr phrh');
      expect(asked.searchParams.get('prompt')).toBe('login');
      expect((await store.get(executionId))?.status).toBe('pending_approval');
    },
  );
});
