// How long an execution is kept once it is final: the configuration's settings.retention, recorded
// on the call when it is made, counted from the write that makes it final. The table's TTL deletes
// it after that (locally, the runtime's sweep does, by the same rule); calls still waiting or
// running are never given a date.
import type { ExecutionStatus } from '../result.js';
import { terminalStatuses } from './execution.js';

const dayMs = 86_400_000;

/** settings.retention when the configuration says nothing (and for records made before it was kept). */
export const defaultRetentionMs = 400 * dayMs;
/** The bounds the configuration accepts: a day at least, ten years at most. */
export const minRetentionMs = dayMs;
export const maxRetentionMs = 3_650 * dayMs;

/** A retention as recorded on an execution (`retention_s`): whole seconds. */
export const retentionSeconds = (retentionMs: number): number => Math.ceil(retentionMs / 1_000);

/** An instant as the TTL attribute counts it: whole seconds since the epoch. */
export const epochSeconds = (at: string): number => Math.floor(Date.parse(at) / 1_000);

/** The retention of a record made before retention was kept, in seconds. */
export const defaultRetentionSeconds = retentionSeconds(defaultRetentionMs);

/** When a record made final at `finalAt` (epoch seconds) may be deleted: then plus its own retention. */
export const retainUntilFrom = (finalAt: number, retention_s: number | null): number =>
  finalAt + (retention_s ?? defaultRetentionSeconds);

/**
 * When a record written at `at` with status `status` may be deleted (epoch seconds, the TTL
 * attribute's unit), or null while the call is not final.
 */
export const retainUntil = (status: ExecutionStatus, at: string, retention_s: number | null): number | null =>
  terminalStatuses.has(status) ? retainUntilFrom(epochSeconds(at), retention_s) : null;

/**
 * Whether an item whose time-to-live attribute holds `until` may be deleted at `nowSeconds`: the
 * rule DynamoDB's time to live applies in AWS, and the local runtime's sweep the same way.
 */
export const isPastRetention = (until: unknown, nowSeconds: number): boolean =>
  typeof until === 'number' && until < nowSeconds;
