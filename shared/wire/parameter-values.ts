// How an argument becomes a parameter's text on the wire, and the path values no URL can carry.
// Canonicalization checks exactly this text before a call is held; the request builder sends it.
import { exactJsonText } from './exact-json.js';

/** Path values a URL cannot carry as one segment: parsers resolve them as "." and "..". */
export const unsafePathValue = (value: string): boolean => /^(\.|%2e){1,2}$/i.test(value);

/**
 * A value as one path segment, percent-encoded. "." and ".." cannot be sent at all (a URL parser
 * would resolve them and move the call to another path of the system); canonicalization refuses
 * them, and this refuses them again rather than send a call elsewhere.
 */
export const pathSegment = (value: string): string => {
  if (unsafePathValue(value)) throw new Error('A path parameter cannot be "." or "..".');
  return encodeURIComponent(value);
};

/** A value as text: a string as it is, anything else as JSON (an integer beyond 2^53 as its exact digits). */
export const parameterText = (value: unknown): string => (typeof value === 'string' ? value : exactJsonText(value));
