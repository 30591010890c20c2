// The customer's pages through the console function (local password sign-in for customers): sign
// in again for each call, read exactly what the agent asked, confirm or decline with a POST; other
// customers, staff sessions, forged forms, changed hashes, plain GETs and late answers change nothing.
// One long file: every case drives the same function over one store and one loaded configuration.

import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createConsole } from '../../../functions/console/app.js';
import { oidcSignIn } from '../../../functions/console/oidc-sign-in.js';
import { contentSecurityPolicy } from '../../../functions/console/security-headers.js';
import { createConsoleFunction } from '../../../infra/local/console.js';
import { lambdaContext } from '../../../infra/local/http-front.js';
import { MemorySessionStore } from '../../../shared/adapters/memory/console-sessions.js';
import { readArguments } from '../../../shared/arguments/strict-json.js';
import type { ResolvedPerson } from '../../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../../shared/control-plane/gateway-snapshot.js';
import { encodeSession, HmacSessionSigner, newSession } from '../../../shared/sessions/session.js';
import { keepSession } from '../../../shared/sessions/session-store.js';
import { callTool } from '../../../shared/use-cases/call-tool.js';
import { anAgent } from '../../support/agents.js';
import { approvalDepsFor, holdingDepsFor, unusedPort } from '../../support/approval-deps.js';
import { ManualClock } from '../../support/clock.js';
import { startTestStore, type TestStore } from '../../support/local-store.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';

const base = 'http://127.0.0.1:8787';
const context = lambdaContext('console', 30_000);
const person = (id: string, name: string, password: string, groups: string[] = []): ResolvedPerson => ({
  id,
  name,
  password,
  passwordFromEnvironment: false,
  groups,
});
const dana = person('customer-1042', 'Dana Customer', 'dana-password');
const omar = person('customer-2001', 'Omar Other', 'omar-password');
const farah = person('finance-approver', 'Farah', 'farah-password', ['finance']);
const silent = () => new Logger({ serviceName: 'customer-test', logLevel: 'SILENT' });
const signer = new HmacSessionSigner(Buffer.alloc(32, 9));
const sessions = new MemorySessionStore();

/** Refunds wait for the customer alone; credits for the customer, then finance. */
const config = {
  text: [
    'systems:',
    '  - key: shop',
    '    base_url: http://127.0.0.1:9',
    '    operations:',
    '      - id: refunds.create',
    '        method: POST',
    '        path: /refunds',
    '        description: Refunds an order.',
    '        input_schema:',
    '          type: object',
    '          properties: { order: { type: string }, amount: { type: string }, currency: { type: string }, note: { type: string }, password: { type: string } }',
    '      - id: credits.create',
    '        method: POST',
    '        path: /credits',
    '        description: Credits an account.',
    '        input_schema: { type: object, properties: { amount: { type: string }, currency: { type: string } } }',
    'agents:',
    '  - id: support-agent',
    '    token: t',
    '    groups: [support]',
    '    customer: customer-1042',
    'policies: [customer.cedar]',
    // Each test holds a call of its own: the same call asked again while held would join the first.
    'settings: { join_pending_calls: false }',
    '',
  ].join('\n'),
  files: {
    'customer.cedar': [
      '@approval("customer")',
      'permit (principal, action == Action::"shop.refunds.create", resource);',
      '@approval("staff, customer")',
      '@approvers("finance")',
      'permit (principal, action == Action::"shop.credits.create", resource);',
      '',
    ].join('\n'),
  },
};

let local: TestStore;
let clock: ManualClock;
let snapshot: GatewaySnapshot;

beforeAll(async () => {
  local = await startTestStore(null, 'customer-routes');
  snapshot = await snapshotOf(config.text, { files: config.files });
});
afterAll(async () => {
  await local?.close();
});

/** A call the support agent makes for customer-1042, held for their confirmation. */
const held = async (tool: string, args: string) => {
  const answer = await callTool(
    holdingDepsFor(local.store, clock, snapshot),
    anAgent('support-agent', ['support'], dana.id),
    tool,
    readArguments(args, []) ?? expect.unreachable(),
  );
  expect(answer).toMatchObject({ status: 'pending_approval' });
  return answer.execution_id ?? expect.unreachable();
};
const refund = () =>
  held('shop.refunds.create', '{"order":"SO-42","amount":"120","currency":"EUR","note":"late\\u200b","password":"p"}');
const credit = () => held('shop.credits.create', '{"amount":"900","currency":"EUR"}');
const record = async (id: string) => (await local.store.get(id)) ?? expect.unreachable();

interface Sent {
  readonly status: number;
  readonly headers: Record<string, string | number | boolean>;
  readonly cookies: readonly string[];
  readonly body: string;
}

const eventOf = (
  method: string,
  path: string,
  request: { cookies?: readonly string[]; body?: string; headers?: Record<string, string> },
): APIGatewayProxyEventV2 => {
  const [rawPath = path, rawQueryString = ''] = path.split('?');
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: { host: '127.0.0.1:8787', ...request.headers },
    ...(request.cookies === undefined ? {} : { cookies: [...request.cookies] }),
    ...(request.body === undefined ? {} : { body: request.body }),
    isBase64Encoded: false,
    requestContext: {
      accountId: '0',
      apiId: 'local',
      domainName: '127.0.0.1',
      domainPrefix: '127',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '10.0.0.2', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
  };
};

const formField = (body: string, name: string): string =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1] ?? expect.unreachable(`no ${name} field`);

/** A browser of one: the local console function, with a cookie jar. */
const visitor = (
  fn = createConsoleFunction({
    services: approvalDepsFor(local.store, clock),
    signer,
    sessions,
    logger: silent(),
    publicUrl: base,
    signIn: { kind: 'local', people: async () => [farah], customers: async () => [dana, omar] },
  }),
) => {
  const jar = new Map<string, string>();
  const send = async (
    method: string,
    path: string,
    request: { form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Sent> => {
    const answer = await fn(
      eventOf(method, path, {
        cookies: [...jar].map(([name, value]) => `${name}=${value}`),
        ...(request.form === undefined ? {} : { body: new URLSearchParams(request.form).toString() }),
        // An empty value leaves the header out (a request that does not say where it came from).
        headers: Object.fromEntries(
          Object.entries({
            ...(request.form === undefined
              ? {}
              : { 'content-type': 'application/x-www-form-urlencoded', origin: base }),
            ...request.headers,
          }).filter(([, value]) => value !== ''),
        ),
      }),
      context,
    );
    const cookies = answer.cookies ?? [];
    for (const line of cookies) {
      const [pair = ''] = line.split(';');
      const name = pair.slice(0, pair.indexOf('='));
      if (/Max-Age=0/.test(line)) jar.delete(name);
      else jar.set(name, pair.slice(pair.indexOf('=') + 1));
    }
    return { status: answer.statusCode ?? 0, headers: answer.headers ?? {}, cookies, body: String(answer.body ?? '') };
  };
  /** Signs in on the customer form for this call (the page the link leads to). */
  const signIn = async (who: ResolvedPerson, executionId: string, password = who.password) => {
    const form = await send('GET', `/customer/sign-in?next=${encodeURIComponent(`/customer/calls/${executionId}`)}`);
    expect(form.status).toBe(200);
    return send('POST', '/customer/sign-in', {
      form: { csrf: formField(form.body, 'csrf'), next: formField(form.body, 'next'), customer: who.id, password },
    });
  };
  /** The call page's form, as the customer's browser would send it. */
  const answerForm = async (executionId: string) => {
    const page = await send('GET', `/customer/calls/${executionId}`);
    expect(page.status).toBe(200);
    return { csrf: formField(page.body, 'csrf'), arguments_hash: formField(page.body, 'arguments_hash'), page };
  };
  const answer = async (executionId: string, outcome: string, overrides: Record<string, string> = {}) => {
    const { csrf, arguments_hash } = await answerForm(executionId);
    return send('POST', `/customer/calls/${executionId}/answer`, {
      form: { csrf, arguments_hash, outcome, ...overrides },
    });
  };
  return { send, signIn, answerForm, answer, jar };
};

const staffCookie = async () => {
  const staff = { ...newSession(farah, clock.now()), csrf: 'staff-token' };
  await keepSession(sessions, staff, clock.now());
  return `gateway_session=${await encodeSession(signer, staff)}`;
};

describe("the customer's pages", () => {
  beforeAll(() => {
    clock = new ManualClock();
  });

  it(
    verifies(
      'customer.fresh-sign-in',
      'the link leads to sign in, and back; the session is short, its own cookie, and for this call only',
    ),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      const callPath = `/customer/calls/${executionId}`;
      const first = await browser.send('GET', callPath);
      expect(first.status).toBe(303);
      expect(first.headers.location).toBe(`/customer/sign-in?next=${encodeURIComponent(callPath)}`);

      const wrong = await browser.signIn(dana, executionId, 'not-it');
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain('Wrong customer id or password.');
      // An approver's id and password are not a customer's.
      expect((await browser.signIn(farah, executionId)).status).toBe(401);

      const signedIn = await browser.signIn(dana, executionId);
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.location).toBe(callPath);
      expect(signedIn.cookies[0]).toMatch(/^gateway_customer=[^;]+; Path=\/; Max-Age=900; HttpOnly; SameSite=Lax$/);
      expect(signedIn.cookies[1]).toMatch(/^gateway_sign_in=; Path=\/; Max-Age=0;/);
      expect(browser.jar.has('gateway_session')).toBe(false);
      const page = await browser.send('GET', callPath);
      expect(page.status).toBe(200);
      expect(page.body).toContain('Signed in as Dana Customer');

      // The session opens this call only: another call of the same customer asks to sign in again.
      const other = await refund();
      expect((await browser.send('GET', `/customer/calls/${other}`)).headers.location).toBe(
        `/customer/sign-in?next=${encodeURIComponent(`/customer/calls/${other}`)}`,
      );
      // Nor is it an approver's session.
      expect((await browser.send('GET', '/console')).headers.location).toBe(
        `/console/sign-in?next=${encodeURIComponent('/console')}`,
      );
      // Fifteen minutes later it is over.
      clock.advance(15 * 60_000 + 1);
      expect((await browser.send('GET', callPath)).status).toBe(303);
      // A sign-in is for one call: the page alone (no call named) says to open the link.
      const nowhere = await browser.send('GET', '/customer/sign-in');
      expect(nowhere.status).toBe(400);
      expect(nowhere.body).toContain('open the link the agent gave you');
      expect((await record(executionId)).status).toBe('pending_approval');
    },
  );

  it(
    verifies(
      'customer.fresh-sign-in',
      'failed customer sign-ins are throttled like the console sign-in (429, nothing checked)',
    ),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect((await browser.signIn(omar, executionId, 'guess')).status).toBe(401);
      }
      const throttled = await browser.signIn(omar, executionId);
      expect(throttled.status).toBe(429);
      expect(throttled.headers['retry-after']).toMatch(/^\d+$/);
      expect(throttled.body).toContain('Too many failed sign-ins for this customer id');
    },
  );

  it(
    verifies(
      ['customer.page-shows-exactly'],
      'the page shows the request in words, the amount, exactly the arguments and the time left',
    ),
    async () => {
      const executionId = await refund();
      clock.advance(60_000);
      const browser = visitor();
      await browser.signIn(dana, executionId);
      const page = await browser.send('GET', `/customer/calls/${executionId}`);
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toBe(contentSecurityPolicy);
      expect(page.headers).toMatchObject({
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      });
      expect(page.body).not.toMatch(/<script/i);
      expect(page.body).toContain(
        '<dt>Request</dt><dd>Refunds: create <span class="muted">(<code>shop.refunds.create</code>)</span></dd>',
      );
      expect(page.body).toContain('<dt>Amount</dt><dd><span class="string">120</span> EUR</dd>');
      expect(page.body).toContain('<dt>Time left</dt><dd>23 h 59 min</dd>');
      expect(page.body).toContain('It runs at once, once, exactly as shown.');
      const rows = [...page.body.matchAll(/<tr><th scope="row"><code>([^<]*)<\/code><\/th><td>(.*?)<\/td><\/tr>/g)].map(
        (row) => [row[1], row[2]],
      );
      expect(rows).toEqual([
        ['/amount', '<span class="string">120</span>'],
        ['/currency', '<span class="string">EUR</span>'],
        [
          '/note',
          '<span class="string">late<span class="hidden-char" title="an invisible or direction-changing character">U+200B</span></span>',
        ],
        ['/order', '<span class="string">SO-42</span>'],
        [
          '/password',
          '<em class="secret" title="a secret: hidden here, sent as the agent gave it">hidden (secret)</em>',
        ],
      ]);
      // The staff console is not linked from the customer's page (its stylesheet and icon are shared).
      expect(page.body.replaceAll(/href="\/console\/static\/[^"]+"/g, '')).not.toContain('/console');
      const credited = await credit();
      await browser.signIn(dana, credited);
      const both = await browser.send('GET', `/customer/calls/${credited}`);
      expect(both.body).toContain('The organization then approves or rejects it; it runs only if they approve.');
    },
  );

  it(
    verifies(
      ['customer.answer-post-only', 'customer.then-staff'],
      'confirming a customer-only call approves it; the session ends and the page says it runs',
    ),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      await browser.signIn(dana, executionId);
      const confirmed = await browser.answer(executionId, 'confirm');
      expect(confirmed.status).toBe(303);
      expect(confirmed.headers.location).toBe('/customer/answered?outcome=runs');
      expect(confirmed.cookies).toEqual([expect.stringMatching(/^gateway_customer=; Path=\/; Max-Age=0;/)]);
      expect(await record(executionId)).toMatchObject({ status: 'approved', decided_by: dana.id, approval_url: null });
      const next = await browser.send('GET', '/customer/answered?outcome=runs');
      expect(next.status).toBe(200);
      expect(next.body).toContain('Confirmed. The call runs now');
      // The answer ended the session: the link asks to sign in again, and then says it is decided.
      expect((await browser.send('GET', `/customer/calls/${executionId}`)).status).toBe(303);
      await browser.signIn(dana, executionId);
      const again = await browser.send('GET', `/customer/calls/${executionId}`);
      expect(again.status).toBe(409);
      expect(again.body).toContain('This request was already decided; nothing was changed.');
      expect((await browser.send('GET', '/customer/answered?outcome=<b>')).status).toBe(404);
    },
  );

  it(
    verifies(
      'customer.then-staff',
      'confirming a call that also needs staff leaves it waiting for them; only then may staff approve',
    ),
    async () => {
      const executionId = await credit();
      const staff = await staffCookie();
      const fn = createConsoleFunction({
        services: approvalDepsFor(local.store, clock),
        signer,
        sessions,
        logger: silent(),
        publicUrl: base,
        signIn: { kind: 'local', people: async () => [farah], customers: async () => [dana, omar] },
      });
      const staffPage = async () =>
        String((await fn(eventOf('GET', `/console/executions/${executionId}`, { cookies: [staff] }), context)).body);
      expect(await staffPage()).not.toContain('Approve and run');

      const browser = visitor(fn);
      await browser.signIn(dana, executionId);
      const confirmed = await browser.answer(executionId, 'confirm');
      expect(confirmed.headers.location).toBe('/customer/answered?outcome=waits');
      expect((await browser.send('GET', '/customer/answered?outcome=waits')).body).toContain(
        'It now waits for the organization&#39;s approval',
      );
      const after = await record(executionId);
      expect(after).toMatchObject({ status: 'pending_approval', customer_confirmed_at: expect.any(String) });
      expect(await staffPage()).toContain('Approve and run');
      // Answered once: signing in again finds nothing to confirm.
      await browser.signIn(dana, executionId);
      const again = await browser.send('GET', `/customer/calls/${executionId}`);
      expect(again.status).toBe(409);
      expect(again.body).toContain('does not wait for your confirmation');
    },
  );

  it(verifies('customer.then-staff', 'declining rejects the call with customer_declined; nothing ran'), async () => {
    const executionId = await credit();
    const browser = visitor();
    await browser.signIn(dana, executionId);
    const declined = await browser.answer(executionId, 'decline');
    expect(declined.headers.location).toBe('/customer/answered?outcome=declined');
    expect((await browser.send('GET', '/customer/answered?outcome=declined')).body).toContain('Declined. Nothing ran');
    expect(await record(executionId)).toMatchObject({ status: 'rejected', code: 'customer_declined' });
  });

  it(
    verifies(
      ['customer.other-customer-refused', 'customer.fresh-sign-in'],
      'another customer finds no such call and cannot answer it',
    ),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      // Omar signs in with the link he was given, for Dana's call.
      expect((await browser.signIn(omar, executionId)).status).toBe(303);
      const page = await browser.send('GET', `/customer/calls/${executionId}`);
      expect(page.status).toBe(404);
      expect(page.body).not.toContain('SO-42');
      expect(page.body).not.toContain('120');
      // Even with his own session's token and the right hash, it is not found.
      const [payload = ''] = (browser.jar.get('gateway_customer') ?? '').split('.');
      const { sid } = z.object({ sid: z.string() }).parse(JSON.parse(Buffer.from(payload, 'base64url').toString()));
      const csrf = (await sessions.get(sid))?.csrf ?? expect.unreachable('no session kept');
      const before = await record(executionId);
      const posted = await browser.send('POST', `/customer/calls/${executionId}/answer`, {
        form: { csrf, arguments_hash: before.arguments_hash ?? '', outcome: 'confirm' },
      });
      expect(posted.status).toBe(404);
      expect(await record(executionId)).toEqual(before);
    },
  );

  it(
    verifies(
      ['customer.fresh-sign-in', 'customer.answer-post-only'],
      "a staff approver's session alone is sent to customer sign-in and answers nothing",
    ),
    async () => {
      const executionId = await refund();
      const staff = await staffCookie();
      const fn = createConsoleFunction({
        services: approvalDepsFor(local.store, clock),
        signer,
        sessions,
        logger: silent(),
        publicUrl: base,
        signIn: { kind: 'local', people: async () => [farah], customers: async () => [dana, omar] },
      });
      const read = await fn(eventOf('GET', `/customer/calls/${executionId}`, { cookies: [staff] }), context);
      expect(read.statusCode).toBe(303);
      expect(read.headers?.location).toMatch(/^\/customer\/sign-in\?next=/);
      const before = await record(executionId);
      const posted = await fn(
        eventOf('POST', `/customer/calls/${executionId}/answer`, {
          cookies: [staff],
          body: new URLSearchParams({
            csrf: 'staff-token',
            arguments_hash: before.arguments_hash ?? '',
            outcome: 'confirm',
          }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
        }),
        context,
      );
      expect(posted.statusCode).toBe(401);
      expect(String(posted.body)).toContain('nothing was done');
      expect(await record(executionId)).toEqual(before);
    },
  );

  it(
    verifies('customer.answer-post-only', 'a changed arguments hash is refused (409) and nothing changes'),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      await browser.signIn(dana, executionId);
      const before = await record(executionId);
      const tampered = await browser.answer(executionId, 'confirm', { arguments_hash: 'a'.repeat(64) });
      expect(tampered.status).toBe(409);
      expect(tampered.body).toContain('The details you answered are not the ones held; nothing was changed.');
      expect(await record(executionId)).toEqual(before);
    },
  );

  it(
    verifies('console.session-revocable', "a customer's answer ends the session: a copy of its cookie opens nothing"),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      await browser.signIn(dana, executionId);
      const copied = browser.jar.get('gateway_customer') ?? expect.unreachable('no customer cookie');
      const { csrf, arguments_hash } = await browser.answerForm(executionId);
      expect((await browser.answer(executionId, 'decline')).status).toBe(303);
      // Another browser holding the copy: signed out, for reading and for answering alike.
      const thief = visitor();
      thief.jar.set('gateway_customer', copied);
      expect((await thief.send('GET', `/customer/calls/${executionId}`)).status).toBe(303);
      const posted = await thief.send('POST', `/customer/calls/${executionId}/answer`, {
        form: { csrf, arguments_hash, outcome: 'confirm' },
      });
      expect(posted.status).toBe(401);
      expect(await record(executionId)).toMatchObject({ status: 'rejected', code: 'customer_declined' });
    },
  );

  it(
    verifies('console.decision-same-origin', 'an answer without the browser’s same-origin word is refused (403)'),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      await browser.signIn(dana, executionId);
      const before = await record(executionId);
      const { csrf, arguments_hash } = await browser.answerForm(executionId);
      const bare = await browser.send('POST', `/customer/calls/${executionId}/answer`, {
        form: { csrf, arguments_hash, outcome: 'confirm' },
        headers: { origin: '' },
      });
      expect(bare.status).toBe(403);
      expect(bare.body).toContain('your browser must say it was sent from here');
      expect(await record(executionId)).toEqual(before);
      const fetched = await browser.send('POST', `/customer/calls/${executionId}/answer`, {
        form: { csrf, arguments_hash, outcome: 'confirm' },
        headers: { origin: '', 'sec-fetch-site': 'same-origin' },
      });
      expect(fetched.status).toBe(303);
    },
  );

  it(verifies('customer.answer-post-only', 'a form from elsewhere is refused (403) and nothing changes'), async () => {
    const executionId = await refund();
    const browser = visitor();
    await browser.signIn(dana, executionId);
    const before = await record(executionId);
    const forged = await browser.answer(executionId, 'confirm', { csrf: 'forged' });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('did not come from this page');
    const { csrf, arguments_hash } = await browser.answerForm(executionId);
    const crossSite = await browser.send('POST', `/customer/calls/${executionId}/answer`, {
      form: { csrf, arguments_hash, outcome: 'confirm' },
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    expect(await record(executionId)).toEqual(before);
  });

  it(
    verifies('customer.answer-post-only', 'a GET never answers: the answer address and other methods answer 405'),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      await browser.signIn(dana, executionId);
      const before = await record(executionId);
      const cases: [string, string, string][] = [
        ['GET', `/customer/calls/${executionId}/answer?outcome=confirm`, 'POST'],
        ['PUT', `/customer/calls/${executionId}`, 'GET'],
        ['POST', `/customer/calls/${executionId}`, 'GET'],
      ];
      for (const [method, path, allow] of cases) {
        const answer = await browser.send(method, path);
        expect([method, path, answer.status, answer.headers.allow]).toEqual([method, path, 405, allow]);
      }
      expect((await browser.send('HEAD', `/customer/calls/${executionId}`)).status).toBe(200);
      expect((await browser.send('GET', '/customer/nope')).status).toBe(404);
      expect(await record(executionId)).toEqual(before);
    },
  );

  it(
    verifies(
      ['customer.fresh-sign-in', 'customer.answer-post-only'],
      'a call past its time says so (409); a late answer changes nothing',
    ),
    async () => {
      const executionId = await refund();
      const browser = visitor();
      // Signed in five minutes before the approval time runs out; answered ten minutes later.
      clock.advance(24 * 3_600_000 - 5 * 60_000);
      await browser.signIn(dana, executionId);
      const { csrf, arguments_hash } = await browser.answerForm(executionId);
      clock.advance(10 * 60_000);
      const late = await browser.send('POST', `/customer/calls/${executionId}/answer`, {
        form: { csrf, arguments_hash, outcome: 'confirm' },
      });
      expect(late.status).toBe(409);
      expect(late.body).toContain('The time to confirm this request ran out; nothing ran.');
      const page = await browser.send('GET', `/customer/calls/${executionId}`);
      expect(page.status).toBe(409);
      expect(page.body).toContain('The time to confirm this request ran out; nothing ran.');
      expect((await record(executionId)).status).not.toBe('approved');
    },
  );

  it(
    verifies('customer.sign-in-unconfigured', 'without a customer sign-in, every customer page answers 503 saying so'),
    async () => {
      const executionId = await refund();
      const provider = {
        start: unusedPort('starting a sign-in'),
        startAgain: unusedPort('signing in again'),
        finish: unusedPort('finishing a sign-in'),
        signOutUrl: unusedPort('signing out'),
      };
      const fn = createConsole(
        {
          services: approvalDepsFor(local.store, clock),
          signer,
          sessions,
          logger: silent(),
          publicUrl: base,
        },
        oidcSignIn(provider, silent()),
        null,
      );
      for (const [method, path] of [
        ['GET', `/customer/calls/${executionId}`],
        ['POST', `/customer/calls/${executionId}/answer`],
        ['GET', '/customer/sign-in'],
      ] as const) {
        const answer = await fn(eventOf(method, path, {}), context);
        expect(answer.statusCode, path).toBe(503);
        expect(String(answer.body)).toContain('Customer sign-in is not configured for this deployment');
        expect(answer.headers?.['content-security-policy']).toBe(contentSecurityPolicy);
      }
      expect((await record(executionId)).status).toBe('pending_approval');
    },
  );
});
