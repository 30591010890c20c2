// JSON Pointers (RFC 6901) for the paths of input errors.

const escapeSegment = (segment: string | number): string => String(segment).replaceAll('~', '~0').replaceAll('/', '~1');

/** The pointer to a value reached through these keys and indexes; '' is the whole document. */
export const jsonPointer = (segments: readonly (string | number)[]): string =>
  segments.map((segment) => `/${escapeSegment(segment)}`).join('');
