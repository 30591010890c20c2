// Local console sign-in throttling on a controlled clock: failures counted per approver id and per
// client address, 429 with Retry-After while an attempt must wait, nothing checked meanwhile.

import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createConsoleFunction } from '../../../infra/local/console.js';
import { lambdaContext } from '../../../infra/local/http-front.js';
import { SignInThrottle, signInLimits, sourceOf } from '../../../infra/local/sign-in-throttle.js';
import { MemorySessionStore } from '../../../shared/adapters/memory/console-sessions.js';
import type { ResolvedPerson } from '../../../shared/config/resolved.js';
import { HmacSessionSigner } from '../../../shared/sessions/session.js';
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
const consoleWith = (clock: ManualClock, logger = new Logger({ serviceName: 'console-test', logLevel: 'SILENT' })) => {
  const services = approvalDepsFor(local.store, clock, {
    consoleUrl: (id) => `${base}/console/executions/${id}`,
  });
  return createConsoleFunction({
    services,
    signer: new HmacSessionSigner(Buffer.alloc(32, 7)),
    sessions: new MemorySessionStore(),
    signIn: { kind: 'local', people: async () => people },
    logger,
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
    const throttle = new SignInThrottle(clock, { windowMs: 60_000, perAccount: 2, perAddress: 1_000, maxKeys: 3 });
    // Below their limit, the least recently failed is forgotten first.
    for (const id of ['a', 'b', 'c', 'd']) throttle.failed(id, 'x');
    throttle.failed('a', 'x');
    expect(throttle.waitMs('a', 'y')).toBe(0);
    throttle.failed('d', 'x');
    expect(throttle.waitMs('d', 'y')).toBe(60_000);
  });
});

describe('a locked account under a flood', () => {
  it(
    verifies('console.sign-in-lock-kept', 'stays locked after 10,400 failures for other ids from other addresses'),
    () => {
      const clock = new ManualClock();
      const throttle = new SignInThrottle(clock);
      for (let attempt = 0; attempt < 5; attempt++) throttle.failed('finance-approver', '10.0.0.1');
      clock.advance(1_000);
      for (let other = 0; other < 10_400; other++) {
        // 10 a source, below its limit: every other id and source is a fresh one.
        throttle.failed(`someone-${other}`, `198.18.${Math.floor(other / 2_560)}.${Math.floor(other / 10) % 256}`);
      }
      expect(throttle.waitMs('finance-approver', '192.0.2.77')).toBe(15 * 60_000 - 1_000);
      clock.advance(15 * 60_000 - 1_000);
      expect(throttle.waitMs('finance-approver', '192.0.2.77')).toBe(0);
    },
  );

  it(
    verifies(
      'console.sign-in-lock-kept',
      'when the locks fill their room, an id not locked waits for the first to end',
    ),
    () => {
      const clock = new ManualClock();
      const throttle = new SignInThrottle(clock, { windowMs: 60_000, perAccount: 1, perAddress: 1_000, maxKeys: 3 });
      for (const id of ['a', 'b', 'c']) {
        throttle.failed(id, `192.0.2.${id.charCodeAt(0)}`);
        clock.advance(1_000);
      }
      // Every lock is kept, and nobody else may guess meanwhile.
      for (const id of ['a', 'b', 'c']) expect(throttle.waitMs(id, '198.51.100.1')).toBeGreaterThan(0);
      expect(throttle.waitMs('d', '198.51.100.1')).toBe(57_000);
      clock.advance(57_000);
      expect(throttle.waitMs('a', '198.51.100.1')).toBe(0);
      expect(throttle.waitMs('d', '198.51.100.1')).toBe(0);
    },
  );
});

describe('the source a failure counts against', () => {
  it(verifies('console.sign-in-sources', 'is one for every loopback address and per /64 for IPv6'), () => {
    for (const loopback of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.2', '0:0:0:0:0:0:0:1']) {
      expect(sourceOf(loopback)).toBe('loopback');
    }
    expect(sourceOf('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('2001:0db8:0001:0002:ffff:1:2:3%eth0')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(sourceOf('::ffff:192.0.2.4')).toBe('192.0.2.4');
    expect(sourceOf('192.0.2.4')).toBe('192.0.2.4');
  });

  it(
    verifies('console.sign-in-sources', 'after 20 failures from loopback addresses, every loopback address waits'),
    async () => {
      const clock = new ManualClock();
      const handler = consoleWith(clock);
      for (let attempt = 0; attempt < 20; attempt++) {
        expect((await signIn(handler, `127.0.${attempt}.1`, `someone-${attempt}`, 'guess')).status).toBe(401);
      }
      expect((await signIn(handler, '127.9.9.9', 'finance-approver', 'right-password')).status).toBe(429);
      expect((await signIn(handler, '::1', 'finance-approver', 'right-password')).status).toBe(429);
      expect((await signIn(handler, '10.0.0.1', 'finance-approver', 'right-password')).status).toBe(303);
    },
  );

  it(verifies('console.sign-in-sources', 'after 20 failures from one IPv6 /64, the whole /64 waits'), async () => {
    const clock = new ManualClock();
    const handler = consoleWith(clock);
    for (let attempt = 0; attempt < 20; attempt++) {
      expect((await signIn(handler, `2001:db8:1:2::${attempt + 1}`, `someone-${attempt}`, 'guess')).status).toBe(401);
    }
    expect((await signIn(handler, '2001:db8:1:2:abcd::9', 'finance-approver', 'right-password')).status).toBe(429);
    expect((await signIn(handler, '2001:db8:1:3::1', 'finance-approver', 'right-password')).status).toBe(303);
  });
});

describe('the log of failed sign-ins', () => {
  it(verifies('console.sign-in-log', 'is one line a minute for each kind, saying how many more came'), async () => {
    const clock = new ManualClock();
    const logger = new Logger({ serviceName: 'console-test', logLevel: 'SILENT' });
    const warn = vi.spyOn(logger, 'warn');
    const handler = consoleWith(clock, logger);
    for (let attempt = 0; attempt < 30; attempt++) await signIn(handler, '192.0.2.9', `someone-${attempt}`, 'guess');
    // 20 refused, then 10 throttled: the first of each is written.
    expect(warn.mock.calls.map(([message]) => message)).toEqual([
      'console sign-in refused',
      'console sign-in throttled',
    ]);
    clock.advance(60_000);
    await signIn(handler, '192.0.2.9', 'someone', 'guess');
    expect(warn).toHaveBeenCalledTimes(3);
    expect(warn.mock.calls[2]?.[0]).toBe('console sign-in throttled');
    expect(warn.mock.calls[2]?.[1]).toMatchObject({ repeated: 9, address: '192.0.2.9' });
  });
});
