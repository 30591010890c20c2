// The console's cookies (an approver's session, a sign-in in progress, and a customer's session),
// read and written in one place, so their names, prefixes, lifetimes and attributes cannot drift;
// an approver's or a customer's session counts only while the server's list keeps it alive.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parseCookie } from 'cookie';
import {
  customerSessionTtlMs,
  decodeSession,
  encodeSession,
  type Session,
  type SessionSigner,
  sessionTtlMs,
  signInTtlMs,
} from '../../shared/sessions/session.js';
import { keepSession, liveSessionCsrf, type SessionStore } from '../../shared/sessions/session-store.js';

type CookieUse = Session['use'];

export interface SessionCookies {
  /**
   * The session the cookie of this use holds, when it is genuine, of that use and not expired, and
   * (an approver's or a customer's) still alive in the server's list.
   */
  open(use: CookieUse): Promise<Session | null>;
  /** A Set-Cookie line keeping the session for as long as its use allows (recorded in the list first). */
  keep(session: Session): Promise<string>;
  /** A Set-Cookie line removing the cookie of this use. */
  clear(use: CookieUse): string;
  /** Ends the session in the server's list for good, and removes its cookie (the Set-Cookie line). */
  end(session: Session): Promise<string>;
}

const lifetimesMs: Record<CookieUse, number> = {
  session: sessionTtlMs,
  'sign-in': signInTtlMs,
  customer: customerSessionTtlMs,
};

/** Over https the __Host- prefix binds a cookie to this host, path / and Secure. */
const namesOf = (secure: boolean): Record<CookieUse, string> =>
  secure
    ? { session: '__Host-gateway_session', 'sign-in': '__Host-gateway_sign_in', customer: '__Host-gateway_customer' }
    : { session: 'gateway_session', 'sign-in': 'gateway_sign_in', customer: 'gateway_customer' };

export const sessionCookies = (
  event: APIGatewayProxyEventV2,
  options: {
    readonly signer: SessionSigner;
    readonly sessions: SessionStore;
    readonly secure: boolean;
    readonly now: () => number;
  },
): SessionCookies => {
  const names = namesOf(options.secure);
  // API Gateway (payload 2.0) and the local front hand the Cookie header over split, in `cookies`.
  // Values are kept as sent: the console's own are base64url and never percent-encoded.
  const sent = parseCookie((event.cookies ?? []).join('; '), { decode: (value) => value });
  // Attributes in this order, Secure last, as the console has always written them.
  const line = (use: CookieUse, value: string, maxAgeMs: number): string =>
    `${names[use]}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}; HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`;
  const { signer, sessions } = options;
  return {
    open: async (use) => {
      const now = options.now();
      const cookie = await decodeSession(signer, sent[names[use]], use, now);
      if (cookie === null) return null;
      const { csrf, ...content } = cookie;
      // A sign-in in progress carries its own token; a kept session's is in the list.
      if (use === 'sign-in') return csrf === undefined || cookie.sid !== undefined ? null : { ...content, csrf };
      if (cookie.sid === undefined) return null;
      const kept = await liveSessionCsrf(sessions, cookie.sid, { use, subject: cookie.sub }, now);
      return kept === null ? null : { ...content, csrf: kept };
    },
    keep: async (session) => {
      await keepSession(sessions, session, options.now());
      return line(session.use, await encodeSession(signer, session), lifetimesMs[session.use]);
    },
    clear: (use) => line(use, '', 0),
    end: async (session) => {
      if (session.sid !== undefined) await sessions.end(session.sid, options.now());
      return line(session.use, '', 0);
    },
  };
};
