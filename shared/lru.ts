// A map that keeps at most a given number of entries, forgetting the least recently used first:
// for what the gateway remembers per instance from inputs it does not choose (agents, arguments).
export class LruMap<Key, Value> {
  private readonly entries = new Map<Key, Value>();
  /** The most recently used key, once there is one: asked for again, it is already where it goes. */
  private newest: { readonly key: Key } | null = null;

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('an LruMap keeps at least one entry');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: Key): Value | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // The most recently used goes last, so the first is the one to forget.
    if (this.newest === null || this.newest.key !== key) {
      this.entries.delete(key);
      this.entries.set(key, value);
      this.newest = { key };
    }
    return value;
  }

  set(key: Key, value: Value): void {
    if (this.entries.has(key)) this.entries.delete(key);
    else if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
    this.newest = { key };
  }
}
