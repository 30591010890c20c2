// The console's OpenID Connect sign-in (the AWS path) end to end: a real provider (panva's
// oidc-provider) on loopback, the console function behind the local API Gateway stand-in, and a
// real Chromium going through the whole flow (authorization code with PKCE, state and nonce). The
// console and the provider are different sites (localhost and 127.0.0.1), as they are in AWS, so
// the sign-in cookie must survive the provider's cross-site redirect back. The held calls come
// from an in-process local runtime; the OIDC-signed-in approver decides them in the browser.
// One long file: the provider, the console front, the runtime and the browser start once for all its flows and refusals.

import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { Logger } from '@aws-lambda-powertools/logger';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { contentSecurityPolicy, createConsoleFunction } from '../../functions/console.js';
import { type LambdaHttpFunction, startHttpFront } from '../../infra/local/http-front.js';
import { listen } from '../../infra/local/net.js';
import { LocalOptions } from '../../infra/local/options.js';
import { type LocalRuntime, startLocalRuntime } from '../../infra/local/runtime.js';
import { MemorySessionStore } from '../../shared/adapters/memory/console-sessions.js';
import { OidcSignIn } from '../../shared/adapters/oidc-sign-in.js';
import { stylesheetPath } from '../../shared/edge/console/style.js';
import { ResultObject } from '../../shared/result.js';
import { HmacSessionSigner, randomToken } from '../../shared/sessions/session.js';
import { decidableBy } from '../../shared/use-cases/approver-decisions.js';
import { type ApprovalOrg, approvalOrg } from '../support/approval-org.js';
import { launchChromium, openProviderPage, shows } from '../support/browser.js';
import { untilStatus } from '../support/demo-gateways.js';
import {
  authorizationResponse,
  type OidcAccounts,
  startOidcProvider,
  type TestOidcProvider,
} from '../support/oidc-provider.js';
import { verifies } from '../support/requirements.js';
import { demoTokens } from '../support/runtime-process.js';

/** The provider's accounts, by the login typed on its sign-in page. */
const accounts = {
  farah: { email: 'farah@example.com', email_verified: true, name: 'Farah Haddad', groups: ['finance'] },
  oskar: { email: 'oskar@example.com', email_verified: true, name: 'Oskar Olsen', groups: ['operations'] },
  // No name and no groups claim at all: the header shows the email and "no groups".
  nadia: { email: 'nadia@example.com', email_verified: true },
  // In the finance group, but the provider has not verified the address that would name them.
  mallory: { email: 'farah@example.com.evil', email_verified: false, name: 'Mallory', groups: ['finance'] },
} satisfies OidcAccounts;
const scopes = 'openid email profile groups';
const createTool = 'erp.purchase_orders.create';

interface OidcConsole {
  /** The console's public base URL (what the redirect URI is built from). */
  readonly base: string;
  readonly logger: Logger;
  close(): Promise<void>;
}

/** What the front could not hand to the console (a crash of the handler); a clean run has none. */
const frontErrors: unknown[] = [];

/**
 * The console function as AWS wires it (OIDC sign-in, signed sessions) behind the local front. The
 * front listens first: the provider's client needs the console's callback, and the console the
 * provider's issuer.
 */

const startConsoleFront = async (host: 'localhost' | '127.0.0.1') => {
  let consoleFunction: LambdaHttpFunction | undefined;
  const front = await startHttpFront({
    host: '127.0.0.1',
    port: 0,
    authorize: async () => ({ kind: 'refused', tokenPresented: false }),
    publicUrl: null,
    onError: (error) => frontErrors.push(error),
    routes: [
      {
        method: 'ANY',
        path: '/console',
        prefix: true,
        functionName: 'console',
        fn: (event, context) => {
          if (consoleFunction === undefined) throw new Error('The console is not wired yet.');
          return consoleFunction(event, context);
        },
        authorize: false,
        timeoutMs: 30_000,
      },
    ],
  });
  const base = `http://${host}:${front.port}`;
  return {
    base,
    callback: `${base}/console/callback`,
    close: () => front.close(),
    /** Wires the console to the provider at `issuer`. */
    wire: (runtime: LocalRuntime, issuer: string, clientId: string): OidcConsole => {
      const logger = new Logger({ serviceName: 'console', logLevel: 'SILENT' });
      const signIn = new OidcSignIn({
        issuer,
        clientId,
        idClaim: 'email',
        groupsClaim: 'groups',
        scopes,
        // The provider is on loopback over http; in AWS the issuer is https and this is never set.
        allowHttp: true,
      });
      consoleFunction = createConsoleFunction({
        services: runtime.approvals,
        signer: new HmacSessionSigner(Buffer.from(randomToken(), 'base64url')),
        sessions: new MemorySessionStore(),
        signIn: { kind: 'oidc', provider: signIn },
        logger,
        publicUrl: base,
      });
      return { base, logger, close: () => front.close() };
    },
  };
};

/** A loopback port nothing listens on (it was free a moment ago). */
const freePort = async (): Promise<number> => {
  const probe = await listen(createServer(), '127.0.0.1', 0);
  await probe.close();
  return probe.port;
};

/** The JSON inside a signed console cookie (`payload.mac`). */
const cookiePayload = (value: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(value.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

let erp: DemoErp;
let org: ApprovalOrg;
let runtime: LocalRuntime;
let client: Client;
let launching: Promise<Browser> | undefined;
let browser: Browser;
let provider: TestOidcProvider;
let consoleApp: OidcConsole;
let authorizationEndpoint: string;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // The browser starts while the rest does; afterAll closes it even when something else failed.
  launching = launchChromium();
  launching.catch(() => undefined);
  erp = await startDemoErp();
  closers.push(() => erp.close());
  org = await approvalOrg();
  closers.push(() => org.remove());
  runtime = await startLocalRuntime(
    LocalOptions.parse({
      port: '0',
      grpcPort: '0',
      demoToolsPort: '0',
      memory: true,
      demoErp: false,
      config: await org.configWith({}),
    }),
    { variables: { DEMO_ERP_URL: erp.url, DEMO_MCP_URL: 'http://127.0.0.1:9/mcp' }, logLevel: 'ERROR' },
  );
  closers.push(() => runtime.stop());
  client = new Client({ name: 'console-oidc-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${demoTokens.procurement}` } },
    }),
  );
  closers.push(() => client.close());

  const front = await startConsoleFront('localhost');
  closers.push(() => front.close());
  provider = await startOidcProvider({ redirectUri: front.callback, accounts });
  closers.push(() => provider.close());
  consoleApp = front.wire(runtime, provider.issuer, provider.clientId);
  const discovery = await fetch(`${provider.issuer}/.well-known/openid-configuration`);
  const metadata = (await discovery.json()) as { issuer?: string; authorization_endpoint?: string };
  expect(metadata.issuer).toBe(provider.issuer);
  authorizationEndpoint = metadata.authorization_endpoint ?? '';
  browser = await launching;
}, 180_000);

afterAll(async () => {
  // The browser first (its keep-alive connections would hold the servers open), then the rest.
  await (await launching?.catch(() => undefined))?.close();
  for (const close of closers.reverse()) await close().catch(() => undefined);
  expect(frontErrors).toEqual([]);
});

const call = async (name: string, args: Record<string, unknown>) =>
  ResultObject.parse((await client.callTool({ name, arguments: args })).structuredContent);

/** The agent's purchase order of 1500: the policy holds it for the finance group. */
const heldOrder = async (description: string): Promise<string> => {
  const result = await call(createTool, { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description });
  expect(result).toMatchObject({ status: 'pending_approval' });
  const executionId = result.execution_id ?? '';
  expect(executionId).toMatch(/^[0-9a-f-]{36}$/);
  return executionId;
};

/** Asks for the status every 100 ms until it is `status` (or a minute has passed: a bound for a stuck run, not a speed test) and answers the last one. */
const statusBecomes = (executionId: string, status: string) =>
  untilStatus(() => call('get_execution_status', { execution_id: executionId }), status);

/**
 * On the provider's sign-in page (where the console sent the browser): signs in as `login`,
 * consents if asked, and waits until the browser is back on a signed-in console page.
 */
const signInAtProvider = async (page: Page, login: keyof typeof accounts) => {
  const loginField = page.locator('input[name="login"]');
  await shows(page, loginField, "the provider's sign-in page");
  expect(new URL(page.url()).origin).toBe(provider.issuer);
  await loginField.fill(login);
  await page.locator('input[name="password"]').fill('any password will do');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const consent = page.getByRole('button', { name: 'Continue' });
  const signedIn = page.locator('header.bar form.who');
  await shows(page, consent.or(signedIn), "the provider's consent page or the signed-in console");
  if (await consent.isVisible()) await consent.click();
  await shows(page, signedIn, 'the signed-in console');
  expect(new URL(page.url()).origin).toBe(consoleApp.base);
};

const openBrowserPage = () => openProviderPage(browser);

const inboxLink = (executionId: string) => `a[href="/console/executions/${executionId}"]`;

describe('OIDC sign-in to the console in Chromium, against a real provider', () => {
  it(
    verifies(
      'console.sign-in',
      'sends the browser to the provider with PKCE (S256), state and nonce, and brings it back signed in with its groups',
    ),
    async () => {
      const { context, page, problems } = await openBrowserPage();
      try {
        const documents: URL[] = [];
        page.on('request', (request) => {
          if (request.isNavigationRequest()) documents.push(new URL(request.url()));
        });
        await page.goto(`${consoleApp.base}/console`);
        await shows(page, page.locator('input[name="login"]'), "the provider's sign-in page");

        // The authorization request: code flow, PKCE with S256, state, nonce, this console's callback.
        const authorization = documents.find((url) => url.href.startsWith(`${authorizationEndpoint}?`));
        expect(authorization, documents.map((url) => url.href).join('\n')).toBeDefined();
        const asked = authorization?.searchParams ?? new URLSearchParams();
        expect(asked.get('response_type')).toBe('code');
        expect(asked.get('client_id')).toBe(provider.clientId);
        expect(asked.get('redirect_uri')).toBe(`${consoleApp.base}/console/callback`);
        expect(asked.get('scope')).toBe(scopes);
        expect(asked.get('code_challenge_method')).toBe('S256');
        expect(asked.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(asked.get('state')).toMatch(/^[A-Za-z0-9_-]{22,}$/);
        expect(asked.get('nonce')).toMatch(/^[A-Za-z0-9_-]{22,}$/);
        expect(asked.get('nonce')).not.toBe(asked.get('state'));

        // What the console remembered, in its signed, HttpOnly sign-in cookie: the same state and
        // nonce, and the verifier whose S256 hash is the challenge sent.
        const pending = (await context.cookies(consoleApp.base)).find((cookie) => cookie.name === 'gateway_sign_in');
        expect(pending).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
        const flow = cookiePayload(pending?.value ?? '').flow as Record<string, string>;
        expect(flow).toMatchObject({ state: asked.get('state'), nonce: asked.get('nonce'), next: '/console' });
        expect(s256(flow.verifier ?? '')).toBe(asked.get('code_challenge'));
        // The verifier itself never left the console.
        expect(authorization?.href).not.toContain(flow.verifier);

        await signInAtProvider(page, 'farah');
        expect(page.url()).toBe(`${consoleApp.base}/console`);
        // The provider answered on the callback with a code, the state and its issuer (RFC 9207).
        const callback = documents.find((url) => url.href.startsWith(`${consoleApp.base}/console/callback?`));
        expect(callback?.searchParams.get('code')).toBeTruthy();
        expect(callback?.searchParams.get('state')).toBe(flow.state);
        expect(callback?.searchParams.get('iss')).toBe(provider.issuer);

        // Signed in: the header names the approver (from the ID token) and the group.
        await expect(page.locator('h1').textContent()).resolves.toBe('Calls waiting for your decision');
        await expect(page.locator('header.bar form.who span').first().textContent()).resolves.toBe('Farah Haddad');
        await expect(page.locator('header.bar .groups').textContent()).resolves.toBe('finance');
        const cookies = await context.cookies(consoleApp.base);
        const session = cookies.find((cookie) => cookie.name === 'gateway_session');
        expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: false });
        expect(cookiePayload(session?.value ?? '')).toMatchObject({
          use: 'session',
          sub: 'farah@example.com',
          name: 'Farah Haddad',
          groups: ['finance'],
        });
        // The sign-in cookie is spent.
        expect(cookies.map((cookie) => cookie.name)).not.toContain('gateway_sign_in');
        // The session is the browser's only credential: script cannot read it.
        await expect(page.evaluate(() => document.cookie)).resolves.not.toContain('gateway_session');

        const reloaded = await page.reload();
        expect(reloaded?.status()).toBe(200);
        expect(reloaded?.headers()['content-security-policy']).toBe(contentSecurityPolicy);
        expect(problems.list).toEqual([]);
        expect(provider.errors).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  it(
    verifies(
      'console.sign-in',
      'an approver signed in through OIDC finds the finance call in the inbox and approves it; the call runs',
    ),
    async () => {
      const executionId = await heldOrder('OIDC desks');
      const callPage = `${consoleApp.base}/console/executions/${executionId}`;
      const { context, page, problems } = await openBrowserPage();
      try {
        // A link to the call leads through the provider and back to the call (`next` survives the flow).
        await page.goto(callPage);
        await signInAtProvider(page, 'farah');
        expect(page.url()).toBe(callPage);

        await page.goto(`${consoleApp.base}/console`);
        await page.locator(inboxLink(executionId)).click();
        await page.waitForURL(callPage);
        await page.getByRole('button', { name: 'Approve and run' }).click();
        await page.waitForURL((url) => url.searchParams.get('done') === 'approved');
        await expect(page.getByRole('status').textContent()).resolves.toContain('Approved. The call runs now');
        expect(problems.list).toEqual([]);
      } finally {
        await context.close();
      }

      const done = await statusBecomes(executionId, 'succeeded');
      expect(done).toMatchObject({ status: 'succeeded', execution_id: executionId, code: null });
      expect(erp.callsFor(executionId)).toBe(1);
      // Decided by the approver the ID token named.
      expect(await runtime.store.get(executionId)).toMatchObject({ decided_by: 'farah@example.com' });
      expect(provider.errors).toEqual([]);
    },
  );

  it(
    verifies(
      'console.sign-in',
      'accounts outside the finance group sign in, but their inbox does not list the finance call',
    ),
    async () => {
      const executionId = await heldOrder('OIDC server racks');
      // The finance approver would see it (so its absence below means something).
      const forFinance = await decidableBy(runtime.approvals, {
        id: 'farah@example.com',
        name: null,
        groups: ['finance'],
      });
      expect(forFinance.map((execution) => execution.execution_id)).toContain(executionId);

      for (const [login, shown, groups] of [
        ['oskar', 'Oskar Olsen', 'operations'],
        ['nadia', 'nadia@example.com', 'no groups'],
      ] as const) {
        const { context, page, problems } = await openBrowserPage();
        try {
          await page.goto(`${consoleApp.base}/console`);
          await signInAtProvider(page, login);
          expect(page.url()).toBe(`${consoleApp.base}/console`);
          await expect(page.locator('header.bar form.who span').first().textContent()).resolves.toBe(shown);
          await expect(page.locator('header.bar .groups').textContent()).resolves.toBe(groups);
          await expect(page.locator('h1').textContent()).resolves.toBe('Calls waiting for your decision');
          await expect(page.locator(inboxLink(executionId)).count()).resolves.toBe(0);
          const refused = await page.goto(`${consoleApp.base}/console/executions/${executionId}`);
          expect(refused?.status()).toBe(403);
          await expect(page.locator('body').textContent()).resolves.not.toContain('OIDC server racks');
          expect(problems.list).toEqual([]);
        } finally {
          await context.close();
        }
      }
      expect(await call('get_execution_status', { execution_id: executionId })).toMatchObject({
        status: 'pending_approval',
      });
      expect(erp.callsFor(executionId)).toBe(0);
    },
  );
});

/** A plain HTTP client with the cookies it is given (no browser, no redirects followed). */
const get = async (url: string, cookies: Record<string, string> = {}) => {
  const cookie = Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
  const response = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
  return {
    status: response.status,
    location: response.headers.get('location'),
    headers: response.headers,
    setCookies: response.headers.getSetCookie(),
    body: await response.text(),
  };
};

/** Starts a sign-in without a browser: the provider URL it redirects to and the sign-in cookie. */
const startSignIn = async (base: string) => {
  const started = await get(`${base}/console/sign-in?next=/console`);
  expect(started.status).toBe(303);
  const cookie = started.setCookies.find((set) => set.startsWith('gateway_sign_in='));
  expect(cookie).toMatch(/; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
  const value = (cookie ?? '').split(';')[0]?.slice('gateway_sign_in='.length) ?? '';
  return { location: new URL(started.location ?? ''), cookie: value };
};

const sessionCookies = (setCookies: string[]) => setCookies.filter((set) => set.startsWith('gateway_session='));

describe('OIDC sign-in refusals, over plain HTTP', () => {
  it(
    verifies(
      'console.sign-in',
      'a callback that did not start here (no sign-in cookie, or a forged one) is refused with 400',
    ),
    async () => {
      const bare = await get(`${consoleApp.base}/console/callback?code=x&state=y`);
      expect(bare.status).toBe(400);
      expect(bare.body).toContain('Sign-in failed');
      expect(bare.setCookies).toEqual([]);

      const { cookie } = await startSignIn(consoleApp.base);
      const [payload, mac] = cookie.split('.');
      const forged = `${payload}.${(mac ?? '').startsWith('A') ? 'B' : 'A'}${(mac ?? '').slice(1)}`;
      const refused = await get(`${consoleApp.base}/console/callback?code=x&state=y`, { gateway_sign_in: forged });
      expect(refused.status).toBe(400);
      expect(sessionCookies(refused.setCookies)).toEqual([]);
    },
  );

  it(
    verifies(
      'console.sign-in',
      'the callback holds the provider to the state, the nonce and the PKCE verifier: a mismatch gets 401 and no session',
    ),
    async () => {
      const callback = `${consoleApp.base}/console/callback`;
      const at = (answer: URL, cookie: string) => get(answer.href, { gateway_sign_in: cookie });

      // A genuine code for this sign-in, presented with a state that is not the cookie's.
      const first = await startSignIn(consoleApp.base);
      expect(first.location.href.startsWith(`${authorizationEndpoint}?`)).toBe(true);
      const answer = await authorizationResponse(first.location, 'farah', callback);
      expect(answer.searchParams.get('state')).toBe(first.location.searchParams.get('state'));
      expect(answer.searchParams.get('code')).toBeTruthy();
      const forged = new URL(answer);
      forged.searchParams.set('state', randomToken());
      const wrongState = await at(forged, first.cookie);
      expect(wrongState.status).toBe(401);
      expect(wrongState.body).toContain('The identity provider did not confirm who you are');
      expect(sessionCookies(wrongState.setCookies)).toEqual([]);
      // ...or as if another provider had answered (RFC 9207's mix-up defence).
      const mixedUp = new URL(answer);
      mixedUp.searchParams.set('iss', 'http://127.0.0.1:1');
      const otherIssuer = await at(mixedUp, first.cookie);
      expect(otherIssuer.status).toBe(401);
      expect(sessionCookies(otherIssuer.setCookies)).toEqual([]);

      // The same answer untouched signs in (the refusals above never spent the code)...
      const genuine = await at(answer, first.cookie);
      expect(genuine.status).toBe(303);
      expect(genuine.location).toBe('/console');
      const [session] = sessionCookies(genuine.setCookies);
      expect(session).toMatch(/; Path=\/; Max-Age=28800; HttpOnly; SameSite=Lax$/);
      const sessionValue = (session ?? '').split(';')[0]?.slice('gateway_session='.length) ?? '';
      expect(cookiePayload(sessionValue)).toMatchObject({ sub: 'farah@example.com', groups: ['finance'] });
      expect(genuine.setCookies).toContain('gateway_sign_in=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
      const home = await get(`${consoleApp.base}/console`, { gateway_session: sessionValue });
      expect(home.status).toBe(200);
      expect(home.body).toContain('Farah Haddad');
      // ...once: the provider refuses the code a second time.
      const replayed = await at(answer, first.cookie);
      expect(replayed.status).toBe(401);
      expect(sessionCookies(replayed.setCookies)).toEqual([]);

      // An ID token for another nonce than the one this sign-in sent (the request was altered).
      const second = await startSignIn(consoleApp.base);
      const otherNonce = new URL(second.location);
      otherNonce.searchParams.set('nonce', randomToken());
      const nonceAnswer = await authorizationResponse(otherNonce, 'farah', callback);
      expect(nonceAnswer.searchParams.get('code')).toBeTruthy();
      const wrongNonce = await at(nonceAnswer, second.cookie);
      expect(wrongNonce.status).toBe(401);
      expect(sessionCookies(wrongNonce.setCookies)).toEqual([]);

      // A code bound to another PKCE challenge: the console's verifier does not match it.
      const third = await startSignIn(consoleApp.base);
      const otherChallenge = new URL(third.location);
      otherChallenge.searchParams.set('code_challenge', s256(randomToken()));
      const pkceAnswer = await authorizationResponse(otherChallenge, 'farah', callback);
      expect(pkceAnswer.searchParams.get('code')).toBeTruthy();
      const wrongVerifier = await at(pkceAnswer, third.cookie);
      expect(wrongVerifier.status).toBe(401);
      expect(sessionCookies(wrongVerifier.setCookies)).toEqual([]);

      // A code the provider never issued, and the provider's own refusal (the user cancelled there).
      const state = third.location.searchParams.get('state') ?? '';
      const refusals: Record<string, string>[] = [
        { code: 'not-a-code', state, iss: provider.issuer },
        { error: 'access_denied', state, iss: provider.issuer },
      ];
      for (const query of refusals) {
        const refused = await get(`${callback}?${new URLSearchParams(query)}`, { gateway_sign_in: third.cookie });
        expect(refused.status).toBe(401);
        expect(sessionCookies(refused.setCookies)).toEqual([]);
      }
      // None of the refusals left a session behind: the console still sends the caller to sign in.
      const signedOut = await get(`${consoleApp.base}/console`, { gateway_sign_in: third.cookie });
      expect(signedOut.status).toBe(303);
      expect(signedOut.location).toBe('/console/sign-in?next=%2Fconsole');
      expect(provider.errors).toEqual([]);
    },
  );

  it(
    verifies('console.sign-in', 'an email the provider has not verified does not name an approver: 401, no session'),
    async () => {
      const started = await startSignIn(consoleApp.base);
      const answer = await authorizationResponse(started.location, 'mallory', `${consoleApp.base}/console/callback`);
      const refused = await get(answer.href, { gateway_sign_in: started.cookie });
      expect(refused.status).toBe(401);
      expect(sessionCookies(refused.setCookies)).toEqual([]);
      expect(refused.setCookies).toContain('gateway_sign_in=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
    },
  );

  it(
    verifies(
      'console.sign-in',
      'a provider that is down gives a clean error page, the console keeps serving, and sign-in starts once it is back',
    ),
    async () => {
      const port = await freePort();
      const front = await startConsoleFront('127.0.0.1');
      const issuer = `http://127.0.0.1:${port}`;
      const downConsole = front.wire(runtime, issuer, 'approval-console');
      const failed = vi.spyOn(downConsole.logger, 'error');
      let backUp: TestOidcProvider | undefined;
      try {
        for (let attempt = 0; attempt < 2; attempt += 1) {
          const down = await get(`${downConsole.base}/console/sign-in`);
          expect(down.status).toBe(500);
          expect(down.headers.get('content-type')).toBe('text/html; charset=utf-8');
          expect(down.headers.get('content-security-policy')).toBe(contentSecurityPolicy);
          expect(down.body).toContain('Something went wrong');
          expect(down.body).toContain('The gateway could not complete the request.');
          expect(down.body).not.toMatch(/ECONNREFUSED|fetch failed|127\.0\.0\.1|at .*\.js/);
          expect(down.location).toBeNull();
          expect(down.setCookies).toEqual([]);
        }
        expect(failed).toHaveBeenCalledWith('request failed', expect.anything());
        // The handler kept serving.
        expect((await get(`${downConsole.base}${stylesheetPath}`)).status).toBe(200);

        // The provider comes up: the next sign-in discovers it (a failed discovery is not kept).
        backUp = await startOidcProvider({ redirectUri: front.callback, accounts, port });
        const { location, cookie } = await startSignIn(downConsole.base);
        expect(location.origin).toBe(issuer);
        expect(location.searchParams.get('redirect_uri')).toBe(front.callback);

        // ...and goes down again before the callback: the code cannot be exchanged, so no session.
        await backUp.close();
        backUp = undefined;
        const query = new URLSearchParams({ code: 'x', state: location.searchParams.get('state') ?? '', iss: issuer });
        const unconfirmed = await get(`${downConsole.base}/console/callback?${query}`, { gateway_sign_in: cookie });
        expect(unconfirmed.status).toBe(401);
        expect(sessionCookies(unconfirmed.setCookies)).toEqual([]);
      } finally {
        failed.mockRestore();
        await backUp?.close();
        await downConsole.close();
      }
    },
  );
});
