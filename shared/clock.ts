// Time as a port, so expiry and staleness can be tested with a clock the test moves.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const isoAt = (clock: Clock): string => new Date(clock.now()).toISOString();
