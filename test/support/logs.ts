// Logs for tests: one that drops every line, for parts whose log a test does not read, and one
// that keeps the warnings, for tests that check a failure was logged.
import type { Log } from '../../shared/log.js';

export const quietLog: Log = { info: () => undefined, warn: () => undefined };

/** A log that keeps each warning's message and attributes, in order. */
export const warningsLog = (): Log & { readonly warnings: { message: string; attributes: unknown[] }[] } => {
  const warnings: { message: string; attributes: unknown[] }[] = [];
  return {
    warnings,
    info: () => undefined,
    warn: (message, ...attributes) => void warnings.push({ message, attributes }),
  };
};
