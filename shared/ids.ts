// Execution ids: UUIDv7, so ids sort by creation time and spread over the table's partitions.
import { v7, validate } from 'uuid';

export interface IdSource {
  next(): string;
}

export const uuidV7Ids: IdSource = { next: () => v7() };

/** Any RFC 9562 UUID in its canonical text form (agents may hold ids of any version). */
export const isUuid = (value: string): boolean => validate(value);
