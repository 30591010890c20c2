// Local console sign-in throttling on a controlled clock: failures counted per approver id and per
// client address, 429 with Retry-After while an attempt must wait, nothing checked meanwhile.
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleFunction } from '../../../infra/local/console.js';
import { lambdaContext } from '../../../infra/local/http-front.js';
import type { ResolvedPerson } from '../../../shared/config/resolved.js';
import { HmacSessionSigner } from '../../../shared/console/session.js';
import { SignInThrottle, signInLimits } from '../../../shared/console/throttle.js';
import { approvalDepsFor } from '../../support/approval-deps.js';
import { ManualClock } from '../../support/clock.js';
import { startTestStore, type TestStore } from '../../support/local-store.js';
import { verifies } from '../../support/requirements.js';

const base = 'http://127.0.0.1:8787';
const people: ResolvedPerson[] = [
  {
    id: 'finance-approver',
    name: 'Farah',
    password: 'right-password',
    passwordFromEnvironment: false,
    groups: ['finance'],
  },
  {
    id: 'ops-approver',
    name: 'Oskar',
    password: 'ops-password',
    passwordFromEnvironment: false,
    groups: ['operations'],
  },
];

// The real embedded store (sign-in never touches it; a stand-in would have to follow its port).
const context = lambdaContext('console', 30_000);

let local: TestStore;
beforeAll(async () => {
  local = await startTestStore(null, 'sign-in-throttle-executions');
});
afterAll(async () => {
  await local?.close();
});

/** The console function with local sign-in, on a clock the test moves. */
const consoleWith = (clock: ManualClock) => {
  const services = approvalDepsFor(local.store, clock, {
    consoleUrl: (id) => `${base}/console/executions/${id}`,
  });
  return createConsoleFunction({
    services,
    signer: new HmacSessionSigner(Buffer.alloc(32, 7)),
    signIn: { kind: 'local', people: async () => people },
    logger: new Logger({ serviceName: 'console-test', logLevel: 'SILENT' }),
    publicUrl: base,
  });
};

const eventOf = (
  method: 'GET' | 'POST',
  address: string,
  options: { cookies?: string[]; body?: string } = {},
): APIGatewayProxyEventV2 => ({
  version: '2.0',
  routeKey: '$default',
  rawPath: '/console/sign-in',
  rawQueryString: '',
  headers: {
    host: '127.0.0.1:8787',
    ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded', origin: base } : {}),
  },
  ...(options.cookies === undefined ? {} : { cookies: options.cookies }),
  ...(options.body === undefined ? {} : { body: options.body }),
  isBase64Encoded: false,
  requestContext: {
    accountId: '0',
    apiId: 'local',
    domainName: '127.0.0.1',
    domainPrefix: '127',
    http: { method, path: '/console/sign-in', protocol: 'HTTP/1.1', sourceIp: address, userAgent: 'test' },
    requestId: 'r',
    routeKey: '$default',
    stage: '$default',
    time: '',
    timeEpoch: 0,
  },
});

/** One sign-in through the form: fetch it (for its cookie and CSRF token), then post it. */
const signIn = async (handler: ReturnType<typeof consoleWith>, address: string, approver: string, password: string) => {
  const form = await handler(eventOf('GET', address), context);
  const cookie = (form.cookies?.[0] ?? '').split(';')[0] ?? '';
  const csrf = /name="csrf" value="([^"]*)"/.exec(form.body ?? '')?.[1] ?? '';
  const body = new URLSearchParams({ csrf, next: '/console', approver, password }).toString();
  const answer = await handler(eventOf('POST', address, { cookies: [cookie], body }), context);
  return { status: answer.statusCode, headers: answer.headers ?? {}, body: answer.body ?? '' };
};

describe('console sign-in throttling', () => {
  it(
    verifies(
      'console.sign-in-throttle',
      'the documented numbers: 5 failures per id, 20 per address, within 15 minutes',
    ),
    () => {
      expect(signInLimits).toMatchObject({ windowMs: 15 * 60_000, perAccount: 5, perAddress: 20 });
    },
  );

  it(
    verifies(
      'console.sign-in-throttle',
      'after 5 failures for an id, even the right password waits, with 429 and Retry-After, until the window allows',
    ),
    async () => {
      const clock = new ManualClock();
      const handler = consoleWith(clock);
      for (let attempt = 0; attempt < 5; attempt++) {
        expect((await signIn(handler, '10.0.0.1', 'finance-approver', `guess-${attempt}`)).status).toBe(401);
        clock.advance(60_000);
      }
      // The first failure was 5 minutes ago: 10 minutes are left of its window.
      const refused = await signIn(handler, '10.0.0.1', 'finance-approver', 'right-password');
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe(String(10 * 60));
      expect(refused.body).toContain('Too many failed sign-ins');
      expect(refused.body).toContain('Try again in 10 min 00 s.');
      // From any other address too: the per-id rule.
      expect((await signIn(handler, '10.0.0.2', 'finance-approver', 'right-password')).status).toBe(429);
      // Another id from the same address is not held back by the first id's failures.
      expect((await signIn(handler, '10.0.0.1', 'ops-approver', 'ops-password')).status).toBe(303);

      clock.advance(10 * 60_000 - 1);
      const almost = await signIn(handler, '10.0.0.1', 'finance-approver', 'right-password');
      expect(almost.status).toBe(429);
      expect(almost.headers['retry-after']).toBe('1');
      clock.advance(1);
      expect((await signIn(handler, '10.0.0.1', 'finance-approver', 'right-password')).status).toBe(303);
    },
  );

  it(
    verifies(
      'console.sign-in-throttle',
      'after 20 failures from an address, it waits for every id; other addresses sign in',
    ),
    async () => {
      const clock = new ManualClock();
      const handler = consoleWith(clock);
      for (let attempt = 0; attempt < 20; attempt++) {
        // Many ids, so no single id reaches its own limit.
        expect((await signIn(handler, '192.0.2.9', `someone-${attempt}`, 'guess')).status).toBe(401);
      }
      const refused = await signIn(handler, '192.0.2.9', 'finance-approver', 'right-password');
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe(String(15 * 60));
      // The account itself is not locked by that address's failures: elsewhere it signs in.
      expect((await signIn(handler, '192.0.2.10', 'finance-approver', 'right-password')).status).toBe(303);
      clock.advance(15 * 60_000);
      expect((await signIn(handler, '192.0.2.9', 'finance-approver', 'right-password')).status).toBe(303);
    },
  );

  it(verifies('console.sign-in-throttle', 'a success starts the id’s count again, but not the address’s'), () => {
    const clock = new ManualClock();
    const throttle = new SignInThrottle(clock, { windowMs: 60_000, perAccount: 2, perAddress: 3, maxKeys: 100 });
    throttle.failed('farah', 'a');
    throttle.succeeded('farah');
    throttle.failed('farah', 'a');
    expect(throttle.waitMs('farah', 'b')).toBe(0);
    // The address has 2 failures; one more and it waits, whatever the id.
    throttle.failed('oskar', 'a');
    throttle.succeeded('oskar');
    expect(throttle.waitMs('nadia', 'a')).toBe(60_000);
    expect(throttle.waitMs('nadia', 'b')).toBe(0);
  });

  it(verifies('console.sign-in-throttle', 'remembers a bounded number of ids and addresses'), () => {
    const clock = new ManualClock();
    const throttle = new SignInThrottle(clock, { windowMs: 60_000, perAccount: 1, perAddress: 1_000, maxKeys: 3 });
    for (const id of ['a', 'b', 'c', 'd']) throttle.failed(id, 'x');
    expect(throttle.waitMs('a', 'y')).toBe(0);
    expect(throttle.waitMs('d', 'y')).toBe(60_000);
  });
});
