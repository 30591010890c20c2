// The logging port: what the domain needs from a structured logger (Powertools in the functions).
import type { Clock } from './clock.js';

export interface Log {
  info(message: string, ...attributes: Record<string, unknown>[]): void;
  warn(message: string, ...attributes: Record<string, unknown>[]): void;
}

/**
 * A warning that a flood can repeat at speed (failed sign-ins), written at most once per interval
 * for each message: the first at once, then the first of each later interval with `repeated`, how
 * many were left out since the line before, so a flood cannot bury the log.
 */
export const warnOncePerInterval = (log: Log, clock: Clock, intervalMs: number) => {
  const lastOf = new Map<string, { at: number; repeated: number }>();
  return (message: string, attributes: Record<string, unknown>): void => {
    const now = clock.now();
    const last = lastOf.get(message);
    if (last !== undefined && now - last.at < intervalMs) {
      last.repeated += 1;
      return;
    }
    lastOf.set(message, { at: now, repeated: 0 });
    log.warn(
      message,
      last === undefined || last.repeated === 0 ? attributes : { ...attributes, repeated: last.repeated },
    );
  };
};
