// JSON text for canonical arguments and systems' answers, which hold integers beyond ±(2^53−1)
// exactly, as bigint: the canonical form (RFC 8785 key order) that is stored and hashed, the plain
// form sent to systems and stored of answers, a reader that gives such integers back exactly from a
// system's bytes or stored text, and the copy handed to writers the gateway does not own (the MCP
// SDK's). JSON.stringify refuses a bigint, so a place that forgets these fails loudly instead of rounding.

/**
 * RFC 8785 text, a bigint written as its digits. For values without a bigint it is exactly what
 * the `canonicalize` package writes (keys in UTF-16 code-unit order, numbers as ECMAScript does).
 */
export const canonicalJsonText = (value: unknown): string => write(value, true);

/** JSON text in the value's own key order, a bigint written as its digits. */
export const exactJsonText = (value: unknown): string => write(value, false);

/** The same, for refused input that may hold what JSON cannot: a number that is not finite is written null, as JSON.stringify does. */
export const lenientJsonText = (value: unknown): string => write(value, false, true);

/** Depth is bounded by the reader (32 levels), so recursion here is shallow. */
const write = (value: unknown, sorted: boolean, lenient = false): string => {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      if (lenient) return 'null';
      throw new Error('A number that is not finite has no JSON form.');
    }
    return JSON.stringify(value);
  }
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : write(item, sorted, lenient))).join(',')}]`;
  }
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    if (sorted) keys.sort();
    const parts: string[] = [];
    for (const key of keys) {
      const child: unknown = Object.getOwnPropertyDescriptor(value, key)?.value;
      if (child !== undefined) parts.push(`${JSON.stringify(key)}:${write(child, sorted, lenient)}`);
    }
    return `{${parts.join(',')}}`;
  }
  throw new Error(`A ${typeof value} has no JSON form.`);
};

const integerText = /^-?(?:0|[1-9]\d*)$/;

/**
 * Sixteen digits in a row: an integer beyond ±(2^53−1) has at least that many (2^53 has sixteen), so
 * text without such a run holds none, and JSON.parse alone reads it exactly as the reviver would.
 */
const longDigitRun = /\d{16}/;

/** Turns each integer JSON.parse read beyond ±(2^53−1) back into a bigint of its own digits. */
const exactIntegers = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  typeof value === 'number' &&
  !Number.isSafeInteger(value) &&
  context?.source !== undefined &&
  integerText.test(context.source)
    ? BigInt(context.source)
    : value;

/**
 * Reads JSON text, keeping each integer beyond ±(2^53−1) exact (a bigint) from its own digits. Most
 * texts (every answer and record of an ordinary call) hold none and skip the reviver's call per value.
 */
export const parseExactJson = (text: string): unknown =>
  longDigitRun.test(text) ? JSON.parse(text, exactIntegers) : JSON.parse(text);

/** JSON.rawJSON (ES2025, in Node 24), which JSON.stringify writes as the very text given; not yet in TypeScript's lib. */
const rawJson: unknown = Reflect.get(JSON, 'rawJSON');

/**
 * A copy of a value for a writer that uses JSON.stringify (the MCP SDK's, a JSON-RPC answer): each
 * bigint becomes a raw JSON number of its own digits, so it is written exactly, never rounded.
 */
export const stringifiable = (value: unknown): unknown => {
  if (typeof value === 'bigint') {
    if (typeof rawJson !== 'function') throw new Error('An integer beyond 2^53 needs JSON.rawJSON (Node 24).');
    return Reflect.apply(rawJson, JSON, [value.toString()]);
  }
  if (Array.isArray(value)) return value.map(stringifiable);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, stringifiable(item)]));
  }
  return value;
};

/**
 * Exact JSON text read for a writer that uses JSON.stringify: parseExactJson, then stringifiable;
 * text that holds no integer beyond ±(2^53−1) reads as JSON.parse reads it, with nothing to copy.
 */
export const parseStringifiable = (text: string): unknown =>
  longDigitRun.test(text) ? stringifiable(parseExactJson(text)) : JSON.parse(text);

/**
 * Whether a value read by JSON.parse holds an integer beyond ±(2^53−1), which it may have rounded.
 * Walked without recursion: an answer nested thousands deep is looked at, not a stack overflow.
 */
export const holdsUnsafeInteger = (value: unknown): boolean => {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'number' && Number.isInteger(item) && !Number.isSafeInteger(item)) return true;
    if (typeof item === 'object' && item !== null) {
      for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push(child);
    }
  }
  return false;
};
