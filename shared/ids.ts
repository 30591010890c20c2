// Execution ids: UUIDv7, so ids sort by creation time and spread over the table's partitions.
import { v7, validate } from 'uuid';

export interface IdSource {
  next(): string;
}

export const uuidV7Ids: IdSource = { next: () => v7() };

/** Any RFC 9562 UUID in its canonical text form (agents may hold ids of any version). */
export const isUuid = (value: string): boolean => validate(value);

/** Milliseconds since the epoch a UUIDv7 was minted at; null for ids of other versions. */
export const mintedAt = (id: string): number | null => {
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
