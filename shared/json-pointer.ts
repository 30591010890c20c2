// JSON Pointers (RFC 6901): the paths of input errors, the segments the strict reader builds,
// the schema lookups of canonicalization and the error-code pointers of a system's answers.

/** One pointer segment with its slash, escaped ('~' as '~0', '/' as '~1') only when it has to be. */
export const pointerSegment = (key: string | number): string => {
  if (typeof key === 'number') return `/${key}`;
  return key.includes('~') || key.includes('/') ? `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}` : `/${key}`;
};

/** The pointer to a value reached through these keys and indexes; '' is the whole document. */
export const jsonPointer = (segments: readonly (string | number)[]): string => segments.map(pointerSegment).join('');

/**
 * The keys a pointer names, unescaped ('~1' before '~0', so "~01" reads as "~1"); [] for '' (the
 * whole document). A pointer that does not start with '/' names nothing: the answer is null, not
 * an exception, because pointers come from configuration and from records as well as from code.
 */
export const parseJsonPointer = (pointer: string): string[] | null => {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return null;
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
};

/**
 * The value a pointer names in a document, reading only own properties of plain objects (never
 * an inherited one such as "constructor", never into arrays); undefined when it names nothing.
 */
export const pointerValue = (document: unknown, pointer: string): unknown => {
  const keys = parseJsonPointer(pointer);
  if (keys === null) return undefined;
  let current = document;
  for (const key of keys) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, key))
      return undefined;
    current = Object.getOwnPropertyDescriptor(current, key)?.value;
  }
  return current;
};
