// The keys an agent's call is known by besides its execution id: the idempotency key the agent
// gives it (a retry under the same key answers the first call), and a held call's own tool and
// arguments (the same call asked for again while it waits joins it). Each is one item in the
// executions table, claimed with one conditional write, naming the execution it answers.
import { createHash } from 'node:crypto';
import { epochSeconds, retentionSeconds } from './retention.js';

/** The `_meta` member of a tools/call's params that carries the agent's idempotency key. */
export const idempotencyKeyMember = 'approval-gateway/idempotency-key';

/** An idempotency key's bounds: 1 to 255 printable ASCII characters. */
export const maxIdempotencyKeyLength = 255;
const printableAscii = /^[\x20-\x7e]+$/;

/** Why a `_meta` value is not an idempotency key (an input error's code and words); null when it is one. */
export const idempotencyKeyProblem = (
  value: unknown,
): {
  readonly code: 'wrong_type' | 'too_short' | 'too_long' | 'disallowed_character';
  readonly message: string;
} | null => {
  if (typeof value !== 'string') return { code: 'wrong_type', message: 'The idempotency key must be a string.' };
  if (value.length === 0) return { code: 'too_short', message: 'The idempotency key must not be empty.' };
  if (value.length > maxIdempotencyKeyLength) {
    return {
      code: 'too_long',
      message: `The idempotency key may be at most ${maxIdempotencyKeyLength} characters long.`,
    };
  }
  if (!printableAscii.test(value)) {
    return {
      code: 'disallowed_character',
      message: 'The idempotency key may hold printable ASCII characters only (space to tilde).',
    };
  }
  return null;
};

/** One key item: whose it is, what it is (a digest), and the call it answers. */
export interface CallKey {
  readonly agent_id: string;
  /** Hex SHA-256 of what names the call (the agent's text is never kept, so the item is bounded). */
  readonly digest: string;
  /** The execution the key answers. */
  readonly execution_id: string;
  readonly tool: string;
  readonly arguments_hash: string;
  /** When the table may delete the item (epoch seconds): never before the call's record. */
  readonly retain_until: number;
}

/** Claiming a key: it is now this call's, or it already names another (`current`; undefined if it just went). */
export type CallKeyClaim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'taken'; readonly current: CallKey | undefined };

const digestOf = (...parts: readonly string[]): string => createHash('sha256').update(parts.join('\n')).digest('hex');

/** The digest of an agent's idempotency key. */
export const idempotencyDigest = (key: string): string => digestOf('idempotency-key', key);

/**
 * The digest a held call is known by while it waits: the customer the agent acts for (their
 * confirmation is theirs alone), its tool and its canonical arguments' hash.
 */
export const heldCallDigest = (customerId: string | null, tool: string, argumentsHash: string): string =>
  digestOf('held-call', customerId === null ? '' : `customer:${customerId}`, tool, argumentsHash);

/** Slack added to a key item's life, so it never goes before its record whatever the clocks say. */
const keySlackSeconds = 86_400;

/**
 * When a key item may be deleted: after the latest its call's record can be (the record is dated
 * when it becomes final, at most its approval time after it was made, plus its run), so a key is
 * kept as long as the call's record, without a write when the call ends.
 */
export const keyRetainUntil = (createdAt: string, approvalMs: number, retention_s: number): number =>
  epochSeconds(createdAt) + retentionSeconds(approvalMs) + retention_s + keySlackSeconds;
