// The console's session list in memory: for tests and a console run without a store.
import type { SessionStore, StoredSession } from '../../sessions/session-store.js';

export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, StoredSession>();

  async start(id: string, session: Omit<StoredSession, 'ended'>): Promise<void> {
    if (this.sessions.has(id)) throw new Error('A console session id was used twice.');
    this.sessions.set(id, { ...session, ended: false });
  }

  async get(id: string): Promise<StoredSession | null> {
    return this.sessions.get(id) ?? null;
  }

  async touch(id: string, seenAt: number, now: number): Promise<void> {
    const stored = this.sessions.get(id);
    if (stored !== undefined && !stored.ended && stored.seenAt === seenAt)
      this.sessions.set(id, { ...stored, seenAt: now });
  }

  async end(id: string): Promise<void> {
    const stored = this.sessions.get(id);
    if (stored !== undefined) this.sessions.set(id, { ...stored, ended: true });
  }
}
