// The console's sessions as a list the server keeps, so a session can be ended for good: signing
// out (or a customer's answer) ends it, and one unused for a while lapses, whatever the cookie says.
// The cookie names its session and the list holds the rest that matters (its CSRF token, when it
// was last used, whether it ended). A store port: the gateway's table in AWS and locally.
import { customerSessionTtlMs, type Session } from './session.js';

export type StoredUse = Exclude<Session['use'], 'sign-in'>;

export interface StoredSession {
  readonly use: StoredUse;
  /** Who signed in (the approver's or the customer's id). */
  readonly subject: string;
  /** The token every form of this session carries; never in the cookie. */
  readonly csrf: string;
  /** When the session was last used (ms), to within `touchEveryMs`. */
  readonly seenAt: number;
  /** When the session ends, however busy (ms). */
  readonly expiresAt: number;
  /** Signed out (or answered): ended for good. */
  readonly ended: boolean;
}

export interface SessionStore {
  /** Records a new session under its (random, new) id. */
  start(id: string, session: Omit<StoredSession, 'ended'>): Promise<void>;
  get(id: string): Promise<StoredSession | null>;
  /** Moves `seenAt` on to `now` unless it moved already or the session ended (a lost race changes nothing). */
  touch(id: string, seenAt: number, now: number): Promise<void>;
  /** Ends the session for good; ending an unknown or ended one changes nothing. */
  end(id: string, now: number): Promise<void>;
}

/** An approver's session lapses after 30 minutes unused (and ends 8 hours after sign-in at the latest). */
export const sessionIdleMs = 30 * 60_000;
/** How often a session's last use is written: at most once a minute, so a page view rarely writes. */
const touchEveryMs = 60_000;

const idleMsOf: Record<StoredUse, number> = { session: sessionIdleMs, customer: customerSessionTtlMs };

/** Records a new approver's or customer's session in the list (a sign-in in progress is not kept). */
export const keepSession = async (store: SessionStore, session: Session, now: number): Promise<void> => {
  if (session.use === 'sign-in') return;
  if (session.sid === undefined) throw new Error('A console session to keep has no id.');
  const { use, sub: subject, csrf, exp: expiresAt } = session;
  await store.start(session.sid, { use, subject, csrf, seenAt: now, expiresAt });
};

/**
 * The CSRF token of a session that is still alive: started, not ended, of this use and person, not
 * past its end, and used within its idle time (the use is noted). Null otherwise.
 */
export const liveSessionCsrf = async (
  store: SessionStore,
  id: string,
  expected: { readonly use: StoredUse; readonly subject: string },
  now: number,
): Promise<string | null> => {
  const stored = await store.get(id);
  if (stored === null || stored.ended || stored.use !== expected.use || stored.subject !== expected.subject)
    return null;
  if (stored.expiresAt <= now || now - stored.seenAt >= idleMsOf[stored.use]) return null;
  if (now - stored.seenAt >= touchEveryMs) await store.touch(id, stored.seenAt, now);
  return stored.csrf;
};
