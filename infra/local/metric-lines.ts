// Whether the local runtime writes its EMF metric lines. They are informational output, like an
// INFO log line: written at INFO and below (the default), not when only warnings, errors or
// nothing at all are logged. In AWS the functions always write them (CloudWatch needs them).
import type { LogLevel } from '@aws-lambda-powertools/logger/types';

const quietLevels = new Set(['WARN', 'ERROR', 'CRITICAL', 'SILENT']);

export const writesMetricLines = (logLevel: LogLevel | undefined): boolean =>
  logLevel === undefined || !quietLevels.has(logLevel.toUpperCase());
