// Durations in configuration are written as a number and a unit: 90s, 15m, 24h, 7d.
import * as z from 'zod';

const unitMs = new Map<string, number>([
  ['ms', 1],
  ['s', 1_000],
  ['m', 60_000],
  ['h', 3_600_000],
  ['d', 86_400_000],
]);
const pattern = /^(\d+)(ms|s|m|h|d)$/;

/** Milliseconds of a duration's text form (90s, 15m, 24h, 7d), or null when it is not one. */
export const parseDurationMs = (text: string): number | null => {
  const match = pattern.exec(text.trim());
  if (match === null) return null;
  const factor = unitMs.get(match[2] ?? '');
  if (match[1] === undefined || factor === undefined) return null;
  const ms = Number(match[1]) * factor;
  // Beyond 2^53 ms (285 000 years) the value would be rounded or infinite: refuse it.
  return Number.isSafeInteger(ms) ? ms : null;
};

/** A duration's text form in its largest whole unit (14400000 → 4h, 5400000 → 90m): what parseDurationMs reads back. */
export const durationText = (ms: number): string => {
  for (const [unit, factor] of [...unitMs].reverse())
    if (ms % factor === 0 && ms >= factor) return `${ms / factor}${unit}`;
  return `${ms}ms`;
};

/** A duration field: the text form in the file, milliseconds once parsed. */
const expected = 'expected a duration such as 90s, 15m or 24h';

export const Duration = z
  .string({ error: expected })
  .meta({ description: 'A duration such as 90s, 15m, 24h or 7d.', pattern: pattern.source })
  .transform((text, context) => {
    const ms = parseDurationMs(text);
    if (ms === null || ms <= 0) {
      context.addIssue({ code: 'custom', message: expected });
      return z.NEVER;
    }
    return ms;
  });

const byteUnits = new Map<string, number>([
  ['B', 1],
  ['KB', 1024],
  ['MB', 1024 * 1024],
]);
const bytePattern = /^(\d+)(B|KB|MB)$/;

/** A size field: 512KB, 1MB; bytes once parsed. */
export const ByteSize = z
  .string({ error: 'expected a size such as 256KB or 1MB' })
  .meta({ description: 'A size such as 256KB or 1MB.', pattern: bytePattern.source })
  .transform((text, context) => {
    const match = bytePattern.exec(text.trim());
    const factor = byteUnits.get(match?.[2] ?? '');
    const bytes = match?.[1] === undefined || factor === undefined ? Number.NaN : Number(match[1]) * factor;
    if (!Number.isSafeInteger(bytes) || bytes <= 0 || bytes > 64 * 1024 * 1024) {
      context.addIssue({ code: 'custom', message: 'expected a size such as 256KB or 1MB (at most 64MB)' });
      return z.NEVER;
    }
    return bytes;
  });
