// Characters a person cannot see, or cannot know how they look: what the console marks as U+XXXX
// and identifiers refuse. Decided from Unicode's own properties, so a character Unicode adds to
// them is covered without an edit.

/**
 * One code point that displays as nothing, as blank space, or moves other text around:
 * Default_Ignorable_Code_Point (zero-width characters, variation selectors, tag characters,
 * Hangul fillers, …), White_Space, format characters (Cf: bidi controls and the like), controls
 * (Cc), lone surrogates (Cs), and the symbols that are drawn blank though Unicode does not call
 * them white space: U+2800 BRAILLE PATTERN BLANK and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD. Code
 * points with no agreed look count too, since a font may draw them as anything or nothing:
 * private use (Co: U+E000–F8FF, planes 15 and 16) and unassigned ones (Cn, the noncharacters
 * U+FDD0–FDEF and U+xFFFE / U+xFFFF included).
 */
const invisible = /[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Cf}\p{Cc}\p{Cs}\p{Co}\p{Cn}\u2800\u{1d159}]/u;

/** Whether one character (a code point) is invisible; the ordinary space U+0020 counts. */
export const isInvisible = (character: string): boolean => invisible.test(character);

/**
 * The invisible characters a text shows as marks: all of them but the ordinary space U+0020, which
 * a reader sees as the gap it is.
 */
const marked = new RegExp(`(?!\\u0020)${invisible.source}`, 'gu');

export interface InvisibleRun {
  /** The visible text before the character. */
  readonly before: string;
  /** The character's code point as people write it: U+200B, U+E0041. */
  readonly codePoint: string;
}

/** A text cut into visible stretches, each ended by the code point of an invisible character. */
export const splitInvisible = (text: string): { readonly runs: InvisibleRun[]; readonly rest: string } => {
  const runs: InvisibleRun[] = [];
  let last = 0;
  for (const match of text.matchAll(marked)) {
    const code = match[0].codePointAt(0) ?? 0;
    runs.push({
      before: text.slice(last, match.index),
      codePoint: `U+${code.toString(16).toUpperCase().padStart(4, '0')}`,
    });
    last = match.index + match[0].length;
  }
  return { runs, rest: text.slice(last) };
};

/** A text with each invisible character (but the ordinary space) written as a JSON escape, \u200b. */
export const escapeInvisible = (text: string): string =>
  text.replace(marked, (character) =>
    character
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );
