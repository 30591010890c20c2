// The character rules for argument values: strings in NFC and trimmed; identifiers in one script.
// (Amounts, as canonical decimal strings, have their rules in decimal.ts.)
import type { InputErrorCode } from '../errors.js';
import { isInvisible } from '../text/invisible.js';

/**
 * Printable ASCII that neither starts nor ends with a space: already in its canonical form (ASCII
 * is unchanged by NFC, and none of it at the edges is white space), as most values an agent sends are.
 */
const plainAscii = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

/**
 * Strings as stored, compared and sent: Unicode NFC (never NFKC), surrounding white space
 * trimmed. Only characters Unicode calls white space are trimmed (not U+FEFF, which JavaScript's
 * trim also removes): an invisible character at the edge of an identifier must be seen, not dropped.
 */
export const canonicalText = (text: string): string =>
  plainAscii.test(text) ? text : text.normalize('NFC').replace(/^\p{White_Space}+|\p{White_Space}+$/gu, '');

/** Latin letters as written in names and codes (not fullwidth or letter-like symbols such as K). */
const latinLetter = /^[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]$/u;
/** Arabic letters, not their presentation forms (compatibility shapes that NFKC would fold). */
const arabicLetter = /^(?=\p{Script=Arabic})(?![\ufb50-\ufdff\ufe70-\ufeff])\p{L}$/u;
const allowedSymbol = /^[0-9._/-]$/;

/**
 * Problems of an identifier (already in NFC, trimmed): Latin or Arabic letters but not both,
 * ASCII digits and - _ . / only. Letters of any other script are unsupported_script; everything
 * else (spaces, punctuation, other digits) is disallowed_character, and so is any invisible
 * character (shared/text/invisible.ts), Hangul fillers included although Unicode calls them letters.
 */
export const identifierProblem = (text: string): InputErrorCode | null => {
  let latin = false;
  let arabic = false;
  let problem: InputErrorCode | null = null;
  for (const character of text) {
    // Invisible characters (bidi controls, zero-width, variation selectors, fillers) disguise an identifier.
    if (isInvisible(character)) return 'disallowed_character';
    if (latinLetter.test(character)) latin = true;
    else if (arabicLetter.test(character)) arabic = true;
    else if (allowedSymbol.test(character)) continue;
    else if (/\p{L}/u.test(character) && !/[\ufb50-\ufdff\ufe70-\ufeff]/u.test(character))
      problem ??= 'unsupported_script';
    else problem = 'disallowed_character';
  }
  if (problem === 'disallowed_character') return problem;
  if (latin && arabic) return 'mixed_script';
  return problem;
};
