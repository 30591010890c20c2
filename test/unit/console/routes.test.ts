// The console's route table through the function itself: 404 for an unknown address, 405 with
// Allow for a known one with another method, HEAD where a page is read, the signed-out rules, and
// the one form reader and same-origin check every POST goes through, and the sessions the server
// keeps (ended by signing out, lapsed when unused).
// Long: every case drives the same function over one store and one held call.

import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole } from '../../../functions/console/app.js';
import { oidcSignIn } from '../../../functions/console/oidc-sign-in.js';
import { createConsoleFunction } from '../../../infra/local/console.js';
import { lambdaContext } from '../../../infra/local/http-front.js';
import { MemorySessionStore } from '../../../shared/adapters/memory/console-sessions.js';
import { readArguments } from '../../../shared/arguments/strict-json.js';
import { stylesheetPath } from '../../../shared/edge/console/style.js';
import { encodeSession, HmacSessionSigner, newSession } from '../../../shared/sessions/session.js';
import { keepSession } from '../../../shared/sessions/session-store.js';
import { callTool } from '../../../shared/use-cases/call-tool.js';
import { anAgent } from '../../support/agents.js';
import { approvalDepsFor, heldPortalConfig, holdingDepsFor, unusedPort } from '../../support/approval-deps.js';
import { ManualClock } from '../../support/clock.js';
import { startTestStore, type TestStore } from '../../support/local-store.js';
import { verifies } from '../../support/requirements.js';
import { snapshotOf } from '../../support/snapshots.js';

const base = 'http://127.0.0.1:8787';
const context = lambdaContext('console', 30_000);
const farah = { id: 'farah', name: 'Farah', password: 'pw', passwordFromEnvironment: false, groups: ['finance'] };
const silent = () => new Logger({ serviceName: 'console-test', logLevel: 'SILENT' });

let local: TestStore;
let clock: ManualClock;
let executionId: string;
let session: string;
const signer = new HmacSessionSigner(Buffer.alloc(32, 5));
const sessions = new MemorySessionStore();

beforeAll(async () => {
  local = await startTestStore(null, 'console-routes');
  clock = new ManualClock();
  const portal = heldPortalConfig();
  const snapshot = await snapshotOf(portal.text, { files: portal.files });
  const held = await callTool(
    holdingDepsFor(local.store, clock, snapshot),
    anAgent('agent-1', ['staff']),
    'portal.logins.create',
    readArguments('{"note":"hello"}', []) ?? expect.unreachable(),
  );
  executionId = held.execution_id ?? expect.unreachable();
  const farahs = { ...newSession(farah, clock.now()), csrf: 'token' };
  await keepSession(sessions, farahs, clock.now());
  session = `gateway_session=${await encodeSession(signer, farahs)}`;
});
afterAll(async () => {
  await local?.close();
});

interface Request {
  readonly cookies?: string[];
  readonly body?: string;
  readonly base64?: boolean;
  readonly headers?: Record<string, string>;
}

const eventOf = (method: string, path: string, request: Request = {}): APIGatewayProxyEventV2 => ({
  version: '2.0',
  routeKey: '$default',
  rawPath: path,
  rawQueryString: '',
  headers: { host: '127.0.0.1:8787', ...request.headers },
  ...(request.cookies === undefined ? {} : { cookies: request.cookies }),
  ...(request.body === undefined
    ? {}
    : { body: request.base64 === true ? Buffer.from(request.body).toString('base64') : request.body }),
  isBase64Encoded: request.base64 === true,
  requestContext: {
    accountId: '0',
    apiId: 'local',
    domainName: '127.0.0.1',
    domainPrefix: '127',
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '10.0.0.1', userAgent: 'test' },
    requestId: 'r',
    routeKey: '$default',
    stage: '$default',
    time: '',
    timeEpoch: 0,
  },
});

const deps = () => ({
  services: approvalDepsFor(local.store, clock),
  signer,
  sessions,
  logger: silent(),
  publicUrl: base,
});
const localConsole = () => {
  const fn = createConsoleFunction({ ...deps(), signIn: { kind: 'local', people: async () => [farah] } });
  return async (method: string, path: string, request: Request = {}) => {
    const answer = await fn(eventOf(method, path, request), context);
    return { status: answer.statusCode, headers: answer.headers ?? {}, body: String(answer.body ?? '') };
  };
};
const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
});

describe('the console route table', () => {
  it(verifies('console.routes', 'an unknown address is the 404 page, still showing who is signed in'), async () => {
    const send = localConsole();
    for (const path of ['/console/nope', '/console/executions/not-an-id', '/console/callback']) {
      const answer = await send('GET', path, { cookies: [session] });
      expect(answer.status).toBe(404);
      expect(answer.body).toContain('There is no such page in the console.');
      expect(answer.body).toContain('Farah');
    }
    // A static file answers only GET and HEAD: any other method finds no page there.
    expect((await send('POST', stylesheetPath)).status).toBe(404);
  });

  it(
    verifies(
      ['console.routes', 'console.get-never-decides'],
      'a known address with another method answers 405 with Allow',
    ),
    async () => {
      const send = localConsole();
      const cases: [string, string, string][] = [
        ['PUT', '/console/sign-in', 'GET, POST'],
        ['HEAD', '/console/sign-in', 'GET, POST'],
        ['GET', '/console/sign-out', 'POST'],
        ['POST', '/console', 'GET'],
        ['DELETE', `/console/executions/${executionId}`, 'GET'],
        ['GET', `/console/executions/${executionId}/decision`, 'POST'],
      ];
      for (const [method, path, allow] of cases) {
        const answer = await send(method, path, { cookies: [session] });
        expect([method, path, answer.status, answer.headers.allow]).toEqual([method, path, 405, allow]);
        expect(answer.body).toContain('Not allowed');
      }
      // The call comes before the method: a call that is not there is not there, whatever the method.
      const missing = await send('GET', '/console/executions/00000000-0000-7000-8000-000000000000/decision', {
        cookies: [session],
      });
      expect(missing.status).toBe(404);
      expect(missing.body).toContain('There is no such call.');
    },
  );

  it(
    verifies('console.routes', 'HEAD reads a page or a static file; the static file carries only its own headers'),
    async () => {
      const send = localConsole();
      expect((await send('HEAD', '/console', { cookies: [session] })).status).toBe(200);
      expect((await send('HEAD', `/console/executions/${executionId}`, { cookies: [session] })).status).toBe(200);
      const sheet = await send('HEAD', stylesheetPath);
      expect(sheet).toMatchObject({ status: 200, body: '' });
      expect(sheet.headers).toEqual({
        'content-type': 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      });
    },
  );

  it(
    verifies(
      ['console.routes', 'console.sign-in'],
      'signed out, a page read goes to sign in and back; anything else is refused',
    ),
    async () => {
      const send = localConsole();
      const read = await send('GET', `/console/executions/${executionId}`);
      expect(read.status).toBe(303);
      expect(read.headers.location).toBe(
        `/console/sign-in?next=${encodeURIComponent(`/console/executions/${executionId}`)}`,
      );
      const post = await send('POST', `/console/executions/${executionId}/decision`, form({ csrf: 'token' }));
      expect(post.status).toBe(401);
      expect(post.body).toContain('Your session ended, so nothing was done.');
    },
  );

  it(
    verifies(['console.routes', 'console.csrf'], 'every POST goes through one form reader and one same-origin check'),
    async () => {
      const send = localConsole();
      const decision = `/console/executions/${executionId}/decision`;
      const post = (request: Request) => send('POST', decision, { cookies: [session], ...request });
      // Read: a base64 body is a form like any other (an unknown outcome reaches the decision's own check).
      const maybe = form({ csrf: 'token', outcome: 'maybe' });
      expect((await post({ ...maybe, base64: true })).status).toBe(400);
      // Not a form, or larger than 16 KB: 415.
      expect((await post({ ...maybe, headers: { ...maybe.headers, 'content-type': 'text/plain' } })).status).toBe(415);
      expect((await post({ ...form({ csrf: 'token', note: 'x'.repeat(16 * 1024) }) })).status).toBe(415);
      // Same origin: the browser's word, then the token.
      const crossSite = { ...maybe, headers: { ...maybe.headers, 'sec-fetch-site': 'cross-site' } };
      expect((await post(crossSite)).status).toBe(403);
      const opaque = { ...maybe, headers: { ...maybe.headers, origin: 'null' } };
      expect((await post(opaque)).status).toBe(403);
      expect((await post({ ...opaque, headers: { ...opaque.headers, 'sec-fetch-site': 'same-origin' } })).status).toBe(
        400,
      );
      expect((await post(form({ csrf: 'other', outcome: 'maybe' }))).status).toBe(403);
    },
  );

  it(
    verifies(
      ['console.routes', 'console.sign-in'],
      'with OIDC sign-in, the callback answers only the provider’s redirect and the sign-in page only GET',
    ),
    async () => {
      const provider = {
        start: async () => ({
          url: 'https://login.example.com/authorize',
          flow: { state: 's', nonce: 'n', verifier: 'v' },
        }),
        startAgain: unusedPort('signing in again'),
        finish: unusedPort('finishing a sign-in'),
        signOutUrl: unusedPort('signing out'),
      };
      const fn = createConsole(deps(), oidcSignIn(provider, silent()), null);
      const started = await fn(eventOf('GET', '/console/sign-in'), context);
      expect(started).toMatchObject({ statusCode: 303, headers: { location: 'https://login.example.com/authorize' } });
      expect(started.cookies?.[0]).toMatch(/^gateway_sign_in=[^;]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/);
      expect(await fn(eventOf('HEAD', '/console/sign-in'), context)).toMatchObject({
        statusCode: 405,
        headers: { allow: 'GET' },
      });
      const posted = await fn(eventOf('POST', '/console/callback', { cookies: [started.cookies?.[0] ?? ''] }), context);
      expect(posted.statusCode).toBe(400);
    },
  );
});

describe('sessions the server keeps', () => {
  /** The local console on a clock of its own, answering with the cookies it sets. */
  const consoleOn = (own: ManualClock) => {
    const fn = createConsoleFunction({
      ...deps(),
      services: approvalDepsFor(local.store, own),
      signIn: { kind: 'local', people: async () => [farah] },
    });
    return async (method: string, path: string, request: Request = {}) => {
      const answer = await fn(eventOf(method, path, request), context);
      const cookies = (answer.cookies ?? []).map((line) => line.split(';')[0] ?? '');
      return {
        status: answer.statusCode,
        location: answer.headers?.location,
        body: String(answer.body ?? ''),
        cookies,
      };
    };
  };
  const csrfOf = (body: string) => /name="csrf" value="([^"]*)"/.exec(body)?.[1] ?? expect.unreachable('no csrf');
  const decision = () => `/console/executions/${executionId}/decision`;

  it(
    verifies('console.session-revocable', 'signing out ends the session: a copy of its cookie opens nothing after'),
    async () => {
      const send = consoleOn(new ManualClock());
      const signInPage = await send('GET', '/console/sign-in');
      const signedIn = await send('POST', '/console/sign-in', {
        cookies: signInPage.cookies,
        ...form({ csrf: csrfOf(signInPage.body), next: '/console', approver: 'farah', password: 'pw' }),
      });
      expect(signedIn.status).toBe(303);
      const copy = signedIn.cookies[0] ?? expect.unreachable('no session cookie');
      expect(copy).toMatch(/^gateway_session=/);
      const inbox = await send('GET', '/console', { cookies: [copy] });
      expect(inbox.status).toBe(200);
      const csrf = csrfOf(inbox.body);
      const out = await send('POST', '/console/sign-out', { cookies: [copy], ...form({ csrf }) });
      expect(out.status).toBe(303);
      expect(out.cookies).toEqual(['gateway_session=']);
      // The copy, kept by someone else: signed out for every page and every decision.
      expect(await send('GET', '/console', { cookies: [copy] })).toMatchObject({
        status: 303,
        location: '/console/sign-in?next=%2Fconsole',
      });
      const posted = await send('POST', decision(), { cookies: [copy], ...form({ csrf, outcome: 'reject' }) });
      expect(posted.status).toBe(401);
      expect((await local.store.get(executionId))?.status).toBe('pending_approval');
    },
  );

  it(
    verifies('console.session-idle', 'lapses after 30 minutes unused, and ends after 8 hours however busy'),
    async () => {
      const own = new ManualClock();
      const send = consoleOn(own);
      const started = { ...newSession(farah, own.now()), csrf: 'token' };
      await keepSession(sessions, started, own.now());
      const cookie = `gateway_session=${await encodeSession(signer, started)}`;
      const idle = { ...newSession(farah, own.now()), csrf: 'token' };
      await keepSession(sessions, idle, own.now());
      const idleCookie = `gateway_session=${await encodeSession(signer, idle)}`;
      // Any page shows who is signed in (the 404 page reads no call).
      const signedIn = async (sent: string) =>
        (await send('GET', '/console/nope', { cookies: [sent] })).body.includes('Sign out');
      // Used every 29 minutes, it lasts; unused for 30, it lapses.
      own.advance(29 * 60_000);
      expect(await signedIn(cookie)).toBe(true);
      own.advance(60_000);
      expect(await signedIn(idleCookie)).toBe(false);
      expect(await signedIn(cookie)).toBe(true);
      for (let minutes = 30 + 29; minutes < 8 * 60; minutes += 29) {
        own.advance(29 * 60_000);
        expect([minutes, await signedIn(cookie)]).toEqual([minutes, true]);
      }
      own.advance(8 * 60 * 60_000 - (30 + 15 * 29) * 60_000);
      expect(await signedIn(cookie)).toBe(false);
    },
  );

  it(
    verifies(
      'console.decision-same-origin',
      'a decision without Origin or Sec-Fetch-Site is refused with a page saying why',
    ),
    async () => {
      const send = localConsole();
      const { body } = form({ csrf: 'token', outcome: 'maybe' });
      const bare = { cookies: [session], body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
      const refused = await send('POST', decision(), bare);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain(
        'your browser must say it was sent from here (its Origin or Sec-Fetch-Site header)',
      );
      expect(refused.body).toContain('Nothing was changed');
      // The browser's word either way reaches the decision's own checks (an unknown outcome: 400).
      const fetched = { ...bare, headers: { ...bare.headers, 'sec-fetch-site': 'same-origin' } };
      expect((await send('POST', decision(), fetched)).status).toBe(400);
      expect((await send('POST', decision(), { ...bare, headers: { ...bare.headers, origin: base } })).status).toBe(
        400,
      );
      // Said the other way round (another site, or no site at all), it is refused.
      for (const site of ['same-site', 'none']) {
        expect(
          (await send('POST', decision(), { ...bare, headers: { ...bare.headers, 'sec-fetch-site': site } })).status,
        ).toBe(403);
      }
    },
  );
});
