// Failed console sign-ins counted per approver id and per client address, so passwords cannot be
// guessed at speed against the local sign-in (in AWS, Cognito limits sign-ins itself).
import type { Clock } from '../clock.js';

export interface SignInLimits {
  /** How far back failures count (a sliding window). */
  readonly windowMs: number;
  /** Failures for one approver id, from any address, before it must wait. */
  readonly perAccount: number;
  /** Failures from one client address, for any ids, before it must wait. */
  readonly perAddress: number;
  /** Ids and addresses remembered at most each (the least recently failed are forgotten first). */
  readonly maxKeys: number;
}

/** 5 failures per approver id and 20 per address within 15 minutes. */
export const signInLimits: SignInLimits = { windowMs: 15 * 60_000, perAccount: 5, perAddress: 20, maxKeys: 10_000 };

/** The latest failures per key, at most `limit` of them (older ones cannot matter). */
class Failures {
  private readonly byKey = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  /** How long `key` must wait before it may try again: 0 when it may now. */
  waitMs(key: string, now: number): number {
    const recent = (this.byKey.get(key) ?? []).filter((at) => at > now - this.windowMs);
    const oldest = recent.length >= this.limit ? recent[recent.length - this.limit] : undefined;
    return oldest === undefined ? 0 : oldest + this.windowMs - now;
  }

  record(key: string, now: number): void {
    const recent = (this.byKey.get(key) ?? []).filter((at) => at > now - this.windowMs);
    this.byKey.delete(key);
    this.byKey.set(key, [...recent, now].slice(-this.limit));
    if (this.byKey.size > this.maxKeys) {
      const least = this.byKey.keys().next();
      if (least.done !== true) this.byKey.delete(least.value);
    }
  }

  clear(key: string): void {
    this.byKey.delete(key);
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
    return Math.max(this.accounts.waitMs(account, now), this.addresses.waitMs(address, now));
  }

  failed(account: string, address: string): void {
    const now = this.clock.now();
    this.accounts.record(account, now);
    this.addresses.record(address, now);
  }

  /**
   * The id's own count starts again; the address's does not, or signing in to one's own account
   * between guesses at others would lift the per-address limit.
   */
  succeeded(account: string): void {
    this.accounts.clear(account);
  }
}
