// Whether and where the local runtime writes its EMF metric lines. They are informational output,
// like an INFO log line: written at INFO and below (the default), not when only warnings, errors or
// nothing at all are logged. The terminal is for people: the lines go to the data folder's
// metrics file, and to standard output only at DEBUG (or, with no data folder, nowhere else). In
// AWS the functions always write them to standard output (CloudWatch needs them).
import { appendFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { errorText } from '../../shared/errors.js';

const quietLevels = new Set(['WARN', 'ERROR', 'CRITICAL', 'SILENT']);

const writesMetricLines = (logLevel: LogLevel | undefined): boolean =>
  logLevel === undefined || !quietLevels.has(logLevel.toUpperCase());

/** The data folder's metrics file, one EMF line per line; the one before is kept as `metrics.1.jsonl`. */
export const metricsFileName = 'metrics.jsonl';
/** A metrics file beyond this size is set aside (replacing the one set aside before). */
const maxMetricsFileBytes = 16 * 1024 * 1024;

export type MetricLines =
  | { readonly to: 'none' }
  | { readonly to: 'stdout' }
  | { readonly to: 'file'; readonly path: string; readonly write: (line: string) => void };

/**
 * Appends lines to a file of bounded size; a line that cannot be written is dropped (metrics never
 * stop a call), and the first of a run of failures is told on standard error.
 */
const fileLines = (path: string, warn: (line: string) => void): ((line: string) => void) => {
  let size = 0;
  let failing = false;
  try {
    size = statSync(path).size;
  } catch {
    // No file yet.
  }
  return (line) => {
    try {
      if (size > maxMetricsFileBytes) {
        renameSync(path, path.replace(/\.jsonl$/, '.1.jsonl'));
        size = 0;
      }
      appendFileSync(path, `${line}\n`, { mode: 0o600 });
      size += Buffer.byteLength(line) + 1;
      failing = false;
    } catch (error) {
      // A data folder that refuses writes loses metric lines, never a call.
      if (!failing)
        warn(
          `Metric lines cannot be written to ${path} (${errorText(error)}); they are dropped until it works again.\n`,
        );
      failing = true;
    }
  };
};

export const metricLinesOf = (
  logLevel: LogLevel | undefined,
  dataDir: string | null,
  warn: (line: string) => void = (line) => void process.stderr.write(line),
): MetricLines => {
  if (!writesMetricLines(logLevel)) return { to: 'none' };
  if (logLevel?.toUpperCase() === 'DEBUG') return { to: 'stdout' };
  if (dataDir === null) return { to: 'none' };
  const path = join(dataDir, metricsFileName);
  return { to: 'file', path, write: fileLines(path, warn) };
};
