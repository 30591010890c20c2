// Failed console sign-ins counted per approver id and per client source, so passwords cannot be
// guessed at speed against the local sign-in (in AWS, Cognito limits sign-ins itself). A locked id
// or source stays locked whatever else fails: locks are kept apart from the counts a flood of other
// ids could push out, and when even the locks fill their room, everyone else waits too.
import { isIPv4, isIPv6 } from 'node:net';
import type { Clock } from '../../shared/clock.js';

export interface SignInLimits {
  /** How far back failures count (a sliding window). */
  readonly windowMs: number;
  /** Failures for one approver id, from any address, before it must wait. */
  readonly perAccount: number;
  /** Failures from one client source (see `sourceOf`), for any ids, before it must wait. */
  readonly perAddress: number;
  /**
   * Ids and sources remembered at most each while below their limit (the least recently failed are
   * forgotten first), and as many again locked (never forgotten for others' failures).
   */
  readonly maxKeys: number;
}

/** 5 failures per approver id and 20 per source within 15 minutes. */
export const signInLimits: SignInLimits = { windowMs: 15 * 60_000, perAccount: 5, perAddress: 20, maxKeys: 10_000 };

/** Failed and throttled sign-ins are logged at most once a minute each, with how many more came. */
export const signInLogIntervalMs = 60_000;

/** The eight 16-bit groups of an IPv6 address (its zone dropped), or null when it is not one. */
const ipv6Groups = (address: string): number[] | null => {
  const plain = address.split('%')[0] ?? '';
  if (!isIPv6(plain)) return null;
  const groupsOf = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [Number.parseInt(group, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [a * 256 + b, c * 256 + d];
        });
  const [head = '', tail] = plain.split('::');
  const first = groupsOf(head);
  const last = tail === undefined ? [] : groupsOf(tail);
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
};

/**
 * The client source failures are counted against: every loopback address (127/8, ::1) is one
 * source, since anyone on this machine can use them all; an IPv6 address counts by its /64, the
 * least a single host is given; an IPv4 address written as IPv6 (::ffff:a.b.c.d) counts as itself.
 */
export const sourceOf = (address: string): string => {
  const groups = ipv6Groups(address);
  if (groups === null) return isIPv4(address) && address.startsWith('127.') ? 'loopback' : address;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) {
    const [high = 0, low = 0] = groups.slice(6);
    return sourceOf(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return 'loopback';
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
};

/** The latest failures per key, at most `limit` of them (older ones cannot matter). */
class Failures {
  /** Keys below their limit, the least recently failed first (forgotten first when room runs out). */
  private readonly counting = new Map<string, number[]>();
  /** Keys at their limit, in the order they were locked; no other key's failure forgets one. */
  private readonly locked = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  /** How long `key` must wait before it may try again: 0 when it may now. */
  waitMs(key: string, now: number): number {
    const own = this.locked.get(key);
    if (own !== undefined) {
      const wait = this.lockLeftMs(own, now);
      if (wait > 0) return wait;
      // The lock ended: the failures still inside the window count on.
      this.locked.delete(key);
      this.counting.set(key, this.recent(own, now));
      if (this.counting.size > this.maxKeys) this.forgetFirst(this.counting);
    }
    return this.fullWaitMs(now);
  }

  record(key: string, now: number): void {
    const recent = [...this.recent(this.counting.get(key) ?? this.locked.get(key) ?? [], now), now].slice(-this.limit);
    this.counting.delete(key);
    this.locked.delete(key);
    if (recent.length < this.limit) {
      this.counting.set(key, recent);
      if (this.counting.size > this.maxKeys) this.forgetFirst(this.counting);
      return;
    }
    this.locked.set(key, recent);
    // Only two attempts checked at once can overfill the locks; then the oldest lock goes.
    if (this.locked.size > this.maxKeys) this.sweep(now);
    if (this.locked.size > this.maxKeys) this.forgetFirst(this.locked);
  }

  clear(key: string): void {
    this.counting.delete(key);
    this.locked.delete(key);
  }

  private recent(failures: readonly number[], now: number): number[] {
    return failures.filter((at) => at > now - this.windowMs);
  }

  private lockLeftMs(failures: readonly number[], now: number): number {
    const oldest = failures[failures.length - this.limit];
    return oldest === undefined ? 0 : Math.max(0, oldest + this.windowMs - now);
  }

  /**
   * With the locks' room full, a key not remembered might be one whose lock had to be given up, so
   * it waits as if locked until the first lock ends (a flood that large locks out everyone else).
   */
  private fullWaitMs(now: number): number {
    if (this.locked.size < this.maxKeys) return 0;
    this.sweep(now);
    const first = this.locked.values().next();
    return this.locked.size < this.maxKeys || first.done === true ? 0 : Math.max(1, this.lockLeftMs(first.value, now));
  }

  /** Ends the locks whose time is over (only ever run with the locks' room full). */
  private sweep(now: number): void {
    for (const [key, failures] of this.locked) {
      if (this.lockLeftMs(failures, now) === 0) this.locked.delete(key);
    }
  }

  private forgetFirst(map: Map<string, number[]>): void {
    const first = map.keys().next();
    if (first.done !== true) map.delete(first.value);
  }
}

export class SignInThrottle {
  private readonly accounts: Failures;
  private readonly addresses: Failures;

  constructor(
    private readonly clock: Clock,
    limits: SignInLimits = signInLimits,
  ) {
    this.accounts = new Failures(limits.perAccount, limits.windowMs, limits.maxKeys);
    this.addresses = new Failures(limits.perAddress, limits.windowMs, limits.maxKeys);
  }

  /**
   * How long an attempt for this id from this address must wait (0: it may go ahead). Asked before
   * the password is checked, so a waiting attempt learns nothing about the password.
   */
  waitMs(account: string, address: string): number {
    const now = this.clock.now();
    return Math.max(this.accounts.waitMs(account, now), this.addresses.waitMs(sourceOf(address), now));
  }

  failed(account: string, address: string): void {
    const now = this.clock.now();
    this.accounts.record(account, now);
    this.addresses.record(sourceOf(address), now);
  }

  /**
   * The id's own count starts again; the address's does not, or signing in to one's own account
   * between guesses at others would lift the per-address limit.
   */
  succeeded(account: string): void {
    this.accounts.clear(account);
  }
}
