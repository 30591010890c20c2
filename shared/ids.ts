// Execution ids: UUIDv7, so ids sort by creation time and spread over the table's partitions.
import { v7, validate } from 'uuid';
import { randomBytes } from './random-pool.js';

export interface IdSource {
  next(): string;
}

/**
 * The last id's millisecond and counter. Ids minted within one millisecond count up from a random
 * start, so they sort in the order they were minted (RFC 9562's counter method, as the uuid package
 * keeps it for ids it draws its own random bytes for).
 */
const minted = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/** A UUIDv7 whose random bits come from the pool (random-pool.ts) rather than a CSPRNG request each. */
const nextV7 = (): string => {
  const random = randomBytes(16);
  const now = Date.now();
  if (now > minted.msecs) {
    minted.msecs = now;
    // 31 random bits: room to count up before the counter overflows into the next millisecond.
    minted.seq =
      (((random[6] ?? 0) & 0x7f) << 24) | ((random[7] ?? 0) << 16) | ((random[8] ?? 0) << 8) | (random[9] ?? 0);
  } else {
    minted.seq = (minted.seq + 1) | 0;
    if (minted.seq === 0) minted.msecs += 1;
  }
  return v7({ random, msecs: minted.msecs, seq: minted.seq });
};

export const uuidV7Ids: IdSource = { next: nextV7 };

/** Any RFC 9562 UUID in its canonical text form (agents may hold ids of any version). */
export const isUuid = (value: string): boolean => validate(value);

/** Milliseconds since the epoch a UUIDv7 was minted at; null for ids of other versions. */
const mintedAt = (id: string): number | null => {
  const hex = id.replaceAll('-', '');
  return hex.length === 32 && hex[12] === '7' ? Number.parseInt(hex.slice(0, 12), 16) : null;
};

/**
 * How long after its id was minted a call's record may still be on its way to the store: a held
 * call's record is written while its approval run starts and its pending place is held, and either
 * may look for the record before it lands. After this, a missing record will never be written.
 */
export const unrecordedGraceMs = 60_000;

/** Whether the call of this id may still be being recorded at `now` (see unrecordedGraceMs). */
export const mayStillBeRecorded = (id: string, now: number): boolean => {
  const minted = mintedAt(id);
  return minted !== null && now - minted < unrecordedGraceMs;
};
