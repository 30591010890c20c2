// Console sessions: a signed cookie holding who signed in, their groups, the session's id and its
// expiry; the signature (an HMAC from a port: a local key, or a KMS HMAC key in AWS) is what makes
// the cookie trustworthy. An approver's or a customer's session is also kept in the server's list
// (session-store.ts), which holds its CSRF token and can end it; a sign-in in progress is not, so
// its cookie carries its own token.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import type { Approver, Customer } from '../approvals/approver.js';

export interface SessionSigner {
  /** A MAC of the text (base64url). */
  sign(text: string): Promise<string>;
  verify(text: string, mac: string): Promise<boolean>;
}

/** HMAC-SHA256 with a key held in memory (the local runtime's). */
export class HmacSessionSigner implements SessionSigner {
  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new Error('A session key needs at least 256 bits.');
  }

  async sign(text: string): Promise<string> {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }

  async verify(text: string, mac: string): Promise<boolean> {
    return safeEqual(await this.sign(text), mac);
  }
}

export const safeEqual = (a: string, b: string): boolean => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

export const randomToken = (): string => randomBytes(32).toString('base64url');

const SessionCookie = z.object({
  /** 2: the CSRF token of a kept session lives in the server's list, not in the cookie. */
  v: z.literal(2),
  /**
   * What the cookie is for: an approver's session, a sign-in in progress, or a customer's session
   * (its own cookie: a staff session never counts as a customer, nor a customer's as staff).
   */
  use: z.enum(['session', 'sign-in', 'customer']),
  sub: z.string(),
  name: z.string().nullable(),
  groups: z.array(z.string()),
  /** A sign-in in progress: the token its form carries (a kept session's is in the server's list). */
  csrf: z.string().optional(),
  /** A kept session (an approver's or a customer's): its id in the server's list. */
  sid: z.string().optional(),
  /**
   * An approver's session: when its sign-in happened (epoch ms: the provider's auth_time, or the
   * local password's check), null when the provider did not say; a call asking a fresh sign-in
   * (@reauth) is decided only by a session that knows it.
   */
  signed_in_at: z.number().nullable().optional(),
  /** An approver's session: the sign-in's authentication class (the ID token's acr), null when none. */
  acr: z.string().nullable().optional(),
  exp: z.number(),
  /** A sign-in in progress (OIDC): the state, nonce and PKCE verifier, and where to go after. */
  flow: z
    .object({
      state: z.string(),
      nonce: z.string(),
      verifier: z.string(),
      next: z.string(),
      /**
       * When a fresh sign-in (a customer's, or an approver's signing in again for a call) started:
       * the provider's auth_time may not be older.
       */
      started: z.number().optional(),
    })
    .optional(),
  /** A customer's session: the one call (execution id) it was signed in to answer. */
  call: z.string().optional(),
});
type SessionCookie = z.infer<typeof SessionCookie>;

/** A session as the console uses it: the cookie's content with its CSRF token, wherever it is kept. */
export type Session = Omit<SessionCookie, 'csrf'> & { readonly csrf: string };

/** How long a console session lasts at most, however busy (it lapses sooner unused: sessionIdleMs). */
export const sessionTtlMs = 8 * 3_600_000;
/** How long a sign-in may take. */
export const signInTtlMs = 10 * 60_000;
/** How long a customer's session lasts: long enough to read one request and answer it. */
export const customerSessionTtlMs = 15 * 60_000;

export const newSession = (approver: Approver, now: number): Session => ({
  v: 2,
  use: 'session',
  sub: approver.id,
  name: approver.name,
  groups: [...approver.groups],
  sid: randomToken(),
  csrf: randomToken(),
  exp: now + sessionTtlMs,
  signed_in_at: approver.signedInAt ?? null,
  acr: approver.acr ?? null,
});

export const newSignIn = (now: number, flow?: Session['flow']): Session => ({
  v: 2,
  use: 'sign-in',
  sub: '',
  name: null,
  groups: [],
  csrf: randomToken(),
  exp: now + signInTtlMs,
  ...(flow === undefined ? {} : { flow }),
});

/** A customer's session for one call: signed into afresh for each call, ended by their answer. */
export const newCustomerSession = (customer: Customer, executionId: string, now: number): Session => ({
  v: 2,
  use: 'customer',
  sub: customer.id,
  name: customer.name,
  groups: [],
  sid: randomToken(),
  csrf: randomToken(),
  exp: now + customerSessionTtlMs,
  call: executionId,
});

export const customerOf = (session: Session): Customer => ({ id: session.sub, name: session.name });

export const approverOf = (session: Session): Approver => ({
  id: session.sub,
  name: session.name,
  groups: session.groups,
  // A session from before sign-in times were kept knows none: it signs in again for a @reauth call.
  signedInAt: session.signed_in_at ?? null,
  acr: session.acr ?? null,
});

/** The cookie's text: a kept session's CSRF token stays out of it (the server's list holds it). */
export const encodeSession = async (signer: SessionSigner, session: Session): Promise<string> => {
  const { csrf, ...rest } = session;
  const content: SessionCookie = session.sid === undefined ? { ...rest, csrf } : rest;
  const payload = Buffer.from(JSON.stringify(content)).toString('base64url');
  return `${payload}.${await signer.sign(payload)}`;
};

/**
 * What a cookie holds, if its signature is good, it is of the expected use and not expired; a kept
 * session's CSRF token is not in it (its `sid` names where it is).
 */
export const decodeSession = async (
  signer: SessionSigner,
  cookie: string | undefined,
  use: Session['use'],
  now: number,
): Promise<SessionCookie | null> => {
  if (cookie === undefined || cookie.length > 8_192) return null;
  const [payload, mac, extra] = cookie.split('.');
  if (payload === undefined || mac === undefined || extra !== undefined) return null;
  if (!(await signer.verify(payload, mac))) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const session = SessionCookie.safeParse(parsed);
  if (!session.success || session.data.use !== use || session.data.exp <= now) return null;
  return session.data;
};
