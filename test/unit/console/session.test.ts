// Console sessions and local sign-in: a cookie is a session only with a good signature, the right
// use and time left; a password check answers the same way for every wrong guess.
import { describe, expect, it } from 'vitest';
import { checkPassword } from '../../../infra/local/console-identity.js';
import {
  approverOf,
  decodeSession,
  encodeSession,
  HmacSessionSigner,
  newSession,
  newSignIn,
  sessionTtlMs,
} from '../../../shared/sessions/session.js';
import { verifies } from '../../support/requirements.js';

const signer = new HmacSessionSigner(Buffer.alloc(32, 7));
const approver = { id: 'finance-approver', name: 'Farah', groups: ['finance'] };
const now = Date.parse('2026-11-29T12:00:00.000Z');

describe('session cookies', () => {
  it(verifies('console.sign-in', 'round-trips a session, with its own CSRF token'), async () => {
    const session = newSession(approver, now);
    const cookie = await encodeSession(signer, session);
    const { csrf, ...content } = session;
    expect(await decodeSession(signer, cookie, 'session', now + 1_000)).toEqual(content);
    expect(session.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The token is kept in the server's list, never in the cookie.
    expect(Buffer.from(cookie.split('.')[0] ?? '', 'base64url').toString('utf8')).not.toContain(csrf);
    const signIn = newSignIn(now);
    expect(await decodeSession(signer, await encodeSession(signer, signIn), 'sign-in', now)).toEqual(signIn);
    expect(newSession(approver, now).csrf).not.toBe(session.csrf);
  });

  it(verifies('console.sign-in', 'refuses edited, foreign, expired, misused and malformed cookies'), async () => {
    const cookie = await encodeSession(signer, newSession(approver, now));
    const [payload = '', mac = ''] = cookie.split('.');
    const edited = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    edited.groups = ['finance', 'operations'];
    const forged = `${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${mac}`;
    expect(await decodeSession(signer, forged, 'session', now)).toBeNull();
    const otherKey = new HmacSessionSigner(Buffer.alloc(32, 8));
    expect(await decodeSession(otherKey, cookie, 'session', now)).toBeNull();
    expect(await decodeSession(signer, cookie, 'session', now + sessionTtlMs)).toBeNull();
    expect(await decodeSession(signer, cookie, 'sign-in', now)).toBeNull();
    const signIn = await encodeSession(signer, newSignIn(now));
    expect(await decodeSession(signer, signIn, 'session', now)).toBeNull();
    for (const junk of [undefined, '', 'a', 'a.b.c', `${payload}.`, 'x'.repeat(9_000)]) {
      expect(await decodeSession(signer, junk, 'session', now)).toBeNull();
    }
  });

  it(
    verifies(
      'approvals.step-up-sign-in-time',
      "carries when the session's sign-in happened and its class, signed; a session from before knows neither",
    ),
    async () => {
      const signedInAt = now - 90_000;
      const cookie = await encodeSession(signer, newSession({ ...approver, signedInAt, acr: 'phr' }, now));
      const decoded = await decodeSession(signer, cookie, 'session', now);
      expect(decoded).toMatchObject({ signed_in_at: signedInAt, acr: 'phr' });
      expect(approverOf({ ...(decoded ?? expect.unreachable()), csrf: 'token' })).toMatchObject({
        signedInAt,
        acr: 'phr',
      });
      // Made younger by hand: the signature no longer holds.
      const [payload = '', mac = ''] = cookie.split('.');
      const edited = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      edited.signed_in_at = now;
      const forged = `${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${mac}`;
      expect(await decodeSession(signer, forged, 'session', now)).toBeNull();
      // A cookie written before sessions kept the time: unknown, never "now".
      const { signed_in_at: _, acr: __, ...older } = newSession(approver, now);
      const old = await decodeSession(signer, await encodeSession(signer, older), 'session', now);
      expect(approverOf({ ...(old ?? expect.unreachable()), csrf: 'token' })).toMatchObject({
        signedInAt: null,
        acr: null,
      });
    },
  );

  it(verifies('console.sign-in', 'needs a key of at least 256 bits'), () => {
    expect(() => new HmacSessionSigner(Buffer.alloc(16))).toThrow(/256 bits/);
  });
});

describe('local sign-in', () => {
  const people = [
    {
      id: 'finance-approver',
      name: 'Farah',
      password: 'demo-finance-password',
      passwordFromEnvironment: false,
      groups: ['finance'],
    },
  ];

  it(verifies('console.sign-in', 'accepts the configured id and password, and nothing else'), () => {
    expect(checkPassword(people, 'finance-approver', 'demo-finance-password')).toEqual({
      ok: true,
      approver: { id: 'finance-approver', name: 'Farah', groups: ['finance'] },
    });
    expect(checkPassword(people, ' finance-approver ', 'demo-finance-password').ok).toBe(true);
    expect(checkPassword(people, 'finance-approver', 'demo-finance-password ').ok).toBe(false);
    expect(checkPassword(people, 'finance-approver', '').ok).toBe(false);
    expect(checkPassword(people, 'nobody', 'demo-finance-password').ok).toBe(false);
    expect(checkPassword([], 'finance-approver', 'demo-finance-password').ok).toBe(false);
  });
});
