// The customer's OpenID Connect sign-in (the AWS path) end to end: a real provider (panva's
// oidc-provider) on loopback that releases the customer id as a claim, the console function as AWS
// wires it behind the local API Gateway stand-in, and a real Chromium. The support agent's refund
// for customer-1042 is held by an in-process local runtime (the demo organization); the customer
// opens the call's page, is sent to the provider for a fresh login (prompt=login, max_age=0),
// comes back and confirms, and the call runs once. Over plain HTTP: another customer finds nothing,
// a provider that reuses an older authentication or leaves the customer id out is refused.
// One long file: the provider, the console front, the runtime and the browser start once for all its flows and refusals.

import { Logger } from '@aws-lambda-powertools/logger';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { contentSecurityPolicy, createConsoleFunction } from '../../functions/console.js';
import { type LambdaHttpFunction, startHttpFront } from '../../infra/local/http-front.js';
import { LocalOptions } from '../../infra/local/options.js';
import { type LocalRuntime, startLocalRuntime } from '../../infra/local/runtime.js';
import { projectPath } from '../../infra/paths.js';
import { MemorySessionStore } from '../../shared/adapters/memory/console-sessions.js';
import { authTimeSkewMs, CustomerOidcSignIn, OidcSignIn } from '../../shared/adapters/oidc-sign-in.js';
import { ResultObject } from '../../shared/result.js';
import { HmacSessionSigner, randomToken } from '../../shared/sessions/session.js';
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

/** The provider's customers, by the login typed on its sign-in page. */
const accounts = {
  dana: { customer_id: 'customer-1042', name: 'Dana Customer' },
  omar: { customer_id: 'customer-2001', name: 'Omar Other' },
  // Signs in, but the provider releases no customer id for them.
  nemo: { name: 'No Customer Id' },
} satisfies OidcAccounts;
const scopes = 'openid profile customer';
const refundTool = 'erp.refunds.create';

/** The console's clock: the real time, moved on by `ahead` (a sign-in started later than the provider's login). */
let ahead = 0;
const consoleClock = { now: () => Date.now() + ahead };

/** What the front could not hand to the console (a crash of the handler); a clean run has none. */
const frontErrors: unknown[] = [];

let erp: DemoErp;
let runtime: LocalRuntime;
let client: Client;
let launching: Promise<Browser> | undefined;
let browser: Browser;
let provider: TestOidcProvider;
let base: string;
let authorizationEndpoint: string;
const closers: (() => Promise<void>)[] = [];

/**
 * The console function as AWS wires it (OIDC sign-ins, signed sessions) behind the local front,
 * serving /console and /customer. The front listens first: the provider's client needs the
 * customer callback, and the console the provider's issuer.
 */
const startConsoleFront = async () => {
  let consoleFunction: LambdaHttpFunction | undefined;
  const fn: LambdaHttpFunction = (event, context) => {
    if (consoleFunction === undefined) throw new Error('The console is not wired yet.');
    return consoleFunction(event, context);
  };
  const front = await startHttpFront({
    host: '127.0.0.1',
    port: 0,
    authorize: async () => ({ kind: 'refused', tokenPresented: false }),
    publicUrl: null,
    onError: (error) => frontErrors.push(error),
    routes: ['/console', '/customer'].map((path) => ({
      method: 'ANY' as const,
      path,
      prefix: true,
      functionName: 'console',
      fn,
      authorize: false,
      timeoutMs: 30_000,
    })),
  });
  // The console on localhost, the provider on 127.0.0.1: different sites, as in AWS.
  const origin = `http://localhost:${front.port}`;
  return {
    origin,
    close: () => front.close(),
    wire: (issuer: string, clientId: string) => {
      const settings = { issuer, clientId, scopes, allowHttp: true };
      consoleFunction = createConsoleFunction({
        services: { ...runtime.approvals, clock: consoleClock },
        signer: new HmacSessionSigner(Buffer.from(randomToken(), 'base64url')),
        sessions: new MemorySessionStore(),
        // Approvers are not signed in here; their provider is never asked.
        signIn: { kind: 'oidc', provider: new OidcSignIn({ ...settings, idClaim: 'email', groupsClaim: 'groups' }) },
        customerSignIn: new CustomerOidcSignIn({ ...settings, idClaim: 'customer_id' }),
        logger: new Logger({ serviceName: 'console', logLevel: 'SILENT' }),
        publicUrl: origin,
      });
    },
  };
};

beforeAll(async () => {
  launching = launchChromium();
  launching.catch(() => undefined);
  erp = await startDemoErp();
  closers.push(() => erp.close());
  runtime = await startLocalRuntime(
    LocalOptions.parse({
      port: '0',
      grpcPort: '0',
      memory: true,
      demoErp: false,
      demoToolsPort: '0',
      config: projectPath('examples', 'gateway.config.yaml'),
    }),
    { variables: { DEMO_ERP_URL: erp.url, DEMO_MCP_URL: 'http://127.0.0.1:9/mcp' }, logLevel: 'ERROR' },
  );
  closers.push(() => runtime.stop());
  client = new Client({ name: 'customer-oidc-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${demoTokens.support}` } },
    }),
  );
  closers.push(() => client.close());

  const front = await startConsoleFront();
  closers.push(() => front.close());
  base = front.origin;
  provider = await startOidcProvider({
    redirectUri: `${base}/customer/callback`,
    accounts,
    clientId: 'customer-pages',
    scopes: { customer: ['customer_id'] },
    // As Cognito does: auth_time in every ID token, so a reused login shows its age.
    requireAuthTime: true,
  });
  closers.push(() => provider.close());
  front.wire(provider.issuer, provider.clientId);
  const discovery = await fetch(`${provider.issuer}/.well-known/openid-configuration`);
  const metadata = (await discovery.json()) as { authorization_endpoint?: string };
  authorizationEndpoint = metadata.authorization_endpoint ?? '';
  browser = await launching;
}, 180_000);

afterAll(async () => {
  await (await launching?.catch(() => undefined))?.close();
  for (const close of closers.reverse()) await close().catch(() => undefined);
  expect(frontErrors).toEqual([]);
});

const call = async (name: string, args: Record<string, unknown>) =>
  ResultObject.parse((await client.callTool({ name, arguments: args })).structuredContent);

/** The support agent's refund for customer-1042 (under 500: the customer alone confirms it). */
const heldRefund = async (reason: string) => {
  const result = await call(refundTool, { order_reference: 'SO-2024-0042', amount: '45', currency: 'EUR', reason });
  expect(result).toMatchObject({ status: 'pending_approval' });
  const executionId = result.execution_id ?? '';
  expect(executionId).toMatch(/^[0-9a-f-]{36}$/);
  // The approval_url names the call's page; this console serves the same path.
  const path = `/customer/calls/${executionId}`;
  expect(new URL(result.approval_url ?? '').pathname).toBe(path);
  return { executionId, page: `${base}${path}` };
};

const statusBecomes = (executionId: string, status: string) =>
  untilStatus(() => call('get_execution_status', { execution_id: executionId }), status);

const openBrowserPage = () => openProviderPage(browser);

/** On the provider's sign-in page: signs in as `login`, consents if asked, and waits to be back on the call. */
const signInAtProvider = async (page: Page, login: keyof typeof accounts) => {
  const loginField = page.locator('input[name="login"]');
  await shows(page, loginField, "the provider's sign-in page");
  expect(new URL(page.url()).origin).toBe(provider.issuer);
  await loginField.fill(login);
  await page.locator('input[name="password"]').fill('any password will do');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const consent = page.getByRole('button', { name: 'Continue' });
  const back = page.locator('main h1');
  await shows(page, consent.or(back), "the provider's consent page or the customer's page");
  if (await consent.isVisible()) await consent.click();
  await shows(page, back, "the customer's page");
  expect(new URL(page.url()).origin).toBe(base);
};

/** The JSON inside a signed console cookie (`payload.mac`). */
const cookiePayload = (value: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(value.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

describe("the customer's OIDC sign-in in Chromium, against a real provider", () => {
  it(verifies(
    ['customer.oidc-fresh-login', 'customer.oidc-customer-claim', 'customer.approval-url'],
    'the customer opens the call, is sent to the provider with prompt=login and max_age=0, signs in, confirms; it runs once',
  ), async () => {
    const { executionId, page: callPage } = await heldRefund('OIDC: arrived damaged');
    const { context, page, problems } = await openBrowserPage();
    try {
      const documents: URL[] = [];
      page.on('request', (request) => {
        if (request.isNavigationRequest()) documents.push(new URL(request.url()));
      });
      await page.goto(callPage);
      await shows(page, page.locator('input[name="login"]'), "the provider's sign-in page");

      // The authorization request: code flow with PKCE, state and nonce, and a fresh login asked for.
      const authorization = documents.find((url) => url.href.startsWith(`${authorizationEndpoint}?`));
      expect(authorization, documents.map((url) => url.href).join('\n')).toBeDefined();
      const asked = authorization?.searchParams ?? new URLSearchParams();
      expect(asked.get('prompt')).toBe('login');
      expect(asked.get('max_age')).toBe('0');
      expect(asked.get('response_type')).toBe('code');
      expect(asked.get('client_id')).toBe('customer-pages');
      expect(asked.get('redirect_uri')).toBe(`${base}/customer/callback`);
      expect(asked.get('scope')).toBe(scopes);
      expect(asked.get('code_challenge_method')).toBe('S256');
      expect(asked.get('state')).toMatch(/^[A-Za-z0-9_-]{22,}$/);
      expect(asked.get('nonce')).toMatch(/^[A-Za-z0-9_-]{22,}$/);
      // The sign-in cookie remembers where it leads (this call only) and when it started.
      const pending = (await context.cookies(base)).find((cookie) => cookie.name === 'gateway_sign_in');
      const flow = cookiePayload(pending?.value ?? '').flow as Record<string, unknown>;
      expect(flow).toMatchObject({ state: asked.get('state'), next: `/customer/calls/${executionId}` });
      expect(Math.abs(Number(flow.started) - Date.now())).toBeLessThan(60_000);

      await signInAtProvider(page, 'dana');
      expect(page.url()).toBe(callPage);
      await expect(page.locator('h1').textContent()).resolves.toBe('Confirm a request made for you');
      const session = (await context.cookies(base)).find((cookie) => cookie.name === 'gateway_customer');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
      // The customer session of the local sign-in: the customer id from the claim, one call, 15 minutes.
      const opened = cookiePayload(session?.value ?? '');
      expect(opened).toMatchObject({ use: 'customer', sub: 'customer-1042', name: 'Dana Customer', call: executionId });
      expect(Number(opened.exp) - Date.now()).toBeGreaterThan(14 * 60_000);
      expect(Number(opened.exp) - Date.now()).toBeLessThanOrEqual(15 * 60_000);
      const shown = await page.reload();
      expect(shown?.headers()['content-security-policy']).toBe(contentSecurityPolicy);

      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForURL((next) => next.pathname === '/customer/answered');
      await expect(page.getByRole('status').textContent()).resolves.toContain('Confirmed. The call runs now');

      // The next call asks for a login again, though the provider still holds this browser's session.
      const second = await heldRefund('OIDC: second parcel');
      await page.goto(second.page);
      await shows(page, page.locator('input[name="login"]'), "the provider's sign-in page, again");
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }

    const done = await statusBecomes(executionId, 'succeeded');
    expect(done).toMatchObject({ status: 'succeeded', code: null, approval_url: null });
    expect(erp.callsFor(executionId)).toBe(1);
    expect(await runtime.store.get(executionId)).toMatchObject({
      customer_id: 'customer-1042',
      customer_confirmed_at: expect.any(String),
    });
    expect(provider.errors).toEqual([]);
  }, 180_000);
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
    setCookies: response.headers.getSetCookie(),
    body: await response.text(),
  };
};

const cookieValue = (setCookies: string[], name: string): string | undefined =>
  setCookies
    .find((set) => set.startsWith(`${name}=`))
    ?.split(';')[0]
    ?.slice(name.length + 1);

/** Starts a customer's sign-in for a call without a browser: the provider URL and the sign-in cookie. */
const startSignIn = async (executionId: string) => {
  const opened = await get(`${base}/customer/calls/${executionId}`);
  expect(opened.status).toBe(303);
  const started = await get(`${base}${opened.location ?? ''}`);
  expect(started.status).toBe(303);
  const cookie = cookieValue(started.setCookies, 'gateway_sign_in') ?? '';
  expect(cookie).not.toBe('');
  return { location: new URL(started.location ?? ''), cookie };
};

/** Comes back from the provider with its answer: the callback's response. */
const comeBack = (answer: URL, cookie: string) => get(answer.href, { gateway_sign_in: cookie });

describe("the customer's OIDC sign-in refusals, over plain HTTP", () => {
  const callback = () => `${base}/customer/callback`;

  it(
    verifies(
      ['customer.oidc-customer-claim', 'customer.other-customer-refused'],
      'a token naming another customer signs in for the call but finds it not found (404); nothing changes',
    ),
    async () => {
      const { executionId } = await heldRefund('OIDC: not yours');
      const { location, cookie } = await startSignIn(executionId);
      const signedIn = await comeBack(await authorizationResponse(location, 'omar', callback()), cookie);
      expect(signedIn.status).toBe(303);
      expect(signedIn.location).toBe(`/customer/calls/${executionId}`);
      const session = cookieValue(signedIn.setCookies, 'gateway_customer') ?? '';
      expect(cookiePayload(session)).toMatchObject({ sub: 'customer-2001', call: executionId });
      const page = await get(`${base}/customer/calls/${executionId}`, { gateway_customer: session });
      expect(page.status).toBe(404);
      expect(page.body).toContain('There is no such request for you.');
      expect(page.body).not.toContain('SO-2024-0042');
      expect(await call('get_execution_status', { execution_id: executionId })).toMatchObject({
        status: 'pending_approval',
      });
      expect(erp.callsFor(executionId)).toBe(0);
    },
  );

  it(
    verifies(
      'customer.oidc-fresh-login',
      "a provider that reuses a login older than the sign-in's start (prompt and max_age dropped) is refused: 401, no session",
    ),
    async () => {
      const { executionId } = await heldRefund('OIDC: old login');
      // The customer signs in at the provider once; the browser keeps the provider's session.
      const jar = new Map<string, string>();
      const first = await startSignIn(executionId);
      const fresh = await authorizationResponse(first.location, 'dana', callback(), jar);
      expect((await comeBack(fresh, first.cookie)).status).toBe(303);

      // Ten minutes later by the console's clock, a new sign-in, whose request reaches the provider
      // without prompt and max_age (stripped on the way, or ignored): it answers from its session.
      ahead = 10 * 60_000;
      try {
        const later = await startSignIn(executionId);
        const stripped = new URL(later.location);
        expect(stripped.searchParams.get('prompt')).toBe('login');
        expect(stripped.searchParams.get('max_age')).toBe('0');
        stripped.searchParams.delete('prompt');
        stripped.searchParams.delete('max_age');
        const reused = await authorizationResponse(stripped, 'nobody types this', callback(), jar);
        expect(reused.searchParams.get('code')).toBeTruthy();
        const refused = await comeBack(reused, later.cookie);
        expect(refused.status).toBe(401);
        expect(refused.body).toContain('The identity provider did not confirm who you are for this request');
        expect(cookieValue(refused.setCookies, 'gateway_customer')).toBeUndefined();
        expect(refused.setCookies).toContain('gateway_sign_in=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
      } finally {
        ahead = 0;
      }
      // Within the allowed clock skew the same reuse would pass: the check is the start, not a guess.
      expect(authTimeSkewMs).toBeLessThan(10 * 60_000);
      expect(erp.callsFor(executionId)).toBe(0);
    },
  );

  it(
    verifies('customer.oidc-customer-claim', 'a token without the customer id claim is refused: 401, no session'),
    async () => {
      const { executionId } = await heldRefund('OIDC: no customer id');
      const { location, cookie } = await startSignIn(executionId);
      const refused = await comeBack(await authorizationResponse(location, 'nemo', callback()), cookie);
      expect(refused.status).toBe(401);
      expect(cookieValue(refused.setCookies, 'gateway_customer')).toBeUndefined();
      expect(await call('get_execution_status', { execution_id: executionId })).toMatchObject({
        status: 'pending_approval',
      });
    },
  );

  it(
    verifies(
      'customer.oidc-fresh-login',
      "a callback that did not start here for a customer's call (no sign-in cookie, a forged one, none naming a call) is refused with 400",
    ),
    async () => {
      const bare = await get(`${callback()}?code=x&state=y`);
      expect(bare.status).toBe(400);
      expect(bare.body).toContain('Sign-in failed');
      const { executionId } = await heldRefund('OIDC: forged');
      const { cookie } = await startSignIn(executionId);
      const [payload, mac] = cookie.split('.');
      const forged = `${payload}.${(mac ?? '').startsWith('A') ? 'B' : 'A'}${(mac ?? '').slice(1)}`;
      const refused = await get(`${callback()}?code=x&state=y`, { gateway_sign_in: forged });
      expect(refused.status).toBe(400);
      expect(cookieValue(refused.setCookies, 'gateway_customer')).toBeUndefined();
      // A sign-in always names one call: without it there is nothing to sign in for.
      const nowhere = await get(`${base}/customer/sign-in?next=/console`);
      expect(nowhere.status).toBe(400);
      expect(nowhere.body).toContain('open the link the agent gave you');
      expect(nowhere.setCookies).toEqual([]);
    },
  );
});
