// Invisible characters, decided from Unicode's properties: every one is marked on the console's
// page and refused in identifiers, checked over every code point there is.
import { describe, expect, it } from 'vitest';
import { identifierProblem } from '../../../shared/arguments/text-rules.js';
import { htmlText } from '../../../shared/edge/console/html.js';
import { visibleText } from '../../../shared/edge/console/pages.js';
import { stylesheet } from '../../../shared/edge/console/style.js';
import { escapeInvisible, isInvisible } from '../../../shared/text/invisible.js';
import { verifies } from '../../support/requirements.js';

/** What the issue asks for, read from Unicode's properties here rather than from the module. */
const byProperty = /[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Cf}\p{Cc}]/u;
/** Drawn blank, though Unicode gives them none of those properties. */
const blankLooking = ['\u2800', '\u{1d159}'];
const expectedInvisible = (character: string): boolean =>
  byProperty.test(character) || blankLooking.includes(character);
/** Code points with no agreed look: private use and unassigned (noncharacters included). */
const noAgreedLook = /[\p{Co}\p{Cn}]/u;

const isSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdfff;
const hex = (code: number): string => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
const markOf = (code: number): string =>
  `<span class="hidden-char" title="an invisible or direction-changing character">${hex(code)}</span>`;

/** The examples the issue names, each with what it is. */
const named: readonly (readonly [string, string])[] = [
  ['\ufe00', 'VARIATION SELECTOR-1'],
  ['\ufe0f', 'VARIATION SELECTOR-16'],
  ['\u{e0100}', 'VARIATION SELECTOR-17'],
  ['\u{e01ef}', 'VARIATION SELECTOR-256'],
  ['\u17b4', 'KHMER VOWEL INHERENT AQ'],
  ['\u17b5', 'KHMER VOWEL INHERENT AA'],
  ['\u180b', 'MONGOLIAN FREE VARIATION SELECTOR ONE'],
  ['\u180e', 'MONGOLIAN VOWEL SEPARATOR'],
  ['\u180f', 'MONGOLIAN FREE VARIATION SELECTOR FOUR'],
  ['\u115f', 'HANGUL CHOSEONG FILLER'],
  ['\u1160', 'HANGUL JUNGSEONG FILLER'],
  ['\u3164', 'HANGUL FILLER'],
  ['\uffa0', 'HALFWIDTH HANGUL FILLER'],
  ['\u{e0001}', 'LANGUAGE TAG'],
  ['\u{e0041}', 'TAG LATIN CAPITAL LETTER A'],
  ['\u{e007f}', 'CANCEL TAG'],
  ['\u2800', 'BRAILLE PATTERN BLANK'],
  ['\u{1d159}', 'MUSICAL SYMBOL NULL NOTEHEAD'],
  ['\u00ad', 'SOFT HYPHEN'],
  ['\u034f', 'COMBINING GRAPHEME JOINER'],
  ['\u200b', 'ZERO WIDTH SPACE'],
  ['\u2066', 'LEFT-TO-RIGHT ISOLATE'],
  ['\ufeff', 'ZERO WIDTH NO-BREAK SPACE'],
  ['\u{1d173}', 'MUSICAL SYMBOL BEGIN BEAM'],
  ['\u{1bca0}', 'SHORTHAND FORMAT LETTER OVERLAP'],
  ['\u00a0', 'NO-BREAK SPACE'],
  ['\u3000', 'IDEOGRAPHIC SPACE'],
];

describe('invisible characters', () => {
  it(
    verifies(
      'console.invisible-marked',
      'the page marks every invisible code point from 0 to U+10FFFF, and nothing else',
    ),
    () => {
      // Every code point but the surrogates in one text (a lone surrogate pair would join into one).
      const characters: string[] = [];
      const expected: string[] = [];
      for (let code = 0; code <= 0x10ffff; code++) {
        if (isSurrogate(code)) continue;
        const character = String.fromCodePoint(code);
        // Code points with no agreed look (some 950,000) are checked on their own below.
        if (noAgreedLook.test(character) && !expectedInvisible(character)) continue;
        characters.push(character);
        if (code !== 0x20 && expectedInvisible(character)) expected.push(hex(code));
      }
      const rendered = htmlText(visibleText(characters.join('')));
      const marks = [...rendered.matchAll(/<span class="hidden-char"[^>]*>(U\+[0-9A-F]+)<\/span>/g)].map(
        (match) => match[1],
      );
      expect(expected.length).toBeGreaterThan(4000);
      expect(marks).toEqual(expected);
      // What is left once the marks are gone holds none of those characters.
      const rest = rendered.replace(/<span class="hidden-char"[^>]*>U\+[0-9A-F]+<\/span>/g, '');
      expect([...rest].filter((character) => character !== ' ' && expectedInvisible(character))).toEqual([]);
    },
  );

  it(verifies('console.invisible-marked', 'a lone surrogate is marked too'), () => {
    for (const code of [0xd800, 0xdbff, 0xdc00, 0xdfff]) {
      expect(htmlText(visibleText(`a${String.fromCharCode(code)}b`))).toBe(`a${markOf(code)}b`);
    }
  });

  it(
    verifies('args.identifier-invisible', 'every invisible code point from 0 to U+10FFFF is refused in an identifier'),
    () => {
      const accepted: string[] = [];
      for (let code = 0; code <= 0x10ffff; code++) {
        const character = String.fromCodePoint(code);
        if (!expectedInvisible(character)) continue;
        if (identifierProblem(`V${character}1`) !== 'disallowed_character') accepted.push(hex(code));
        if (identifierProblem(`فروشنده${character}`) !== 'disallowed_character') accepted.push(hex(code));
      }
      expect(accepted).toEqual([]);
    },
  );

  for (const [character, name] of named) {
    const code = character.codePointAt(0) ?? 0;
    it(
      verifies('console.invisible-marked', `${hex(code)} ${name} is marked on the page and refused in identifiers`),
      () => {
        expect(isInvisible(character)).toBe(true);
        expect(htmlText(visibleText(`Office${character} chairs`))).toBe(`Office${markOf(code)} chairs`);
        expect(identifierProblem(`V-100${character}`)).toBe('disallowed_character');
        expect(escapeInvisible(`"Office${character}"`)).not.toContain(character);
      },
    );
  }

  it(
    verifies('console.invisible-marked', 'the ordinary space and visible letters and symbols are left as they are'),
    () => {
      const text = 'Office chairs × 4, Müller ب 中 😀 ⠁';
      // (The Arabic letter is isolated, not marked: see below.)
      expect(htmlText(visibleText(text))).toBe(text.replace('ب', '<bdi>ب</bdi>'));
      expect(escapeInvisible(text)).toBe(text);
    },
  );

  it(
    verifies(
      'console.invisible-marked',
      'escapes invisible characters in JSON text as \\u escapes that read back the same',
    ),
    () => {
      const value = { item: 'Office chairs\u{e0041}\u{e0042}', note: 'a\u200bb\u2800' };
      const escaped = escapeInvisible(JSON.stringify(value));
      expect(escaped).toBe('{"item":"Office chairs\\udb40\\udc41\\udb40\\udc42","note":"a\\u200bb\\u2800"}');
      expect(JSON.parse(escaped)).toEqual(value);
    },
  );
});

describe('code points with no agreed look, and right-to-left text beside digits', () => {
  const samples: readonly (readonly [number, string])[] = [
    [0xe000, 'the first private-use character'],
    [0xf8ff, 'the last private-use character of the BMP'],
    [0xf0000, 'plane 15 private use'],
    [0x10fffd, 'plane 16 private use'],
    [0xfdd0, 'the first noncharacter of U+FDD0–FDEF'],
    [0xfdef, 'the last noncharacter of U+FDD0–FDEF'],
    [0xfffe, 'U+FFFE'],
    [0xffff, 'U+FFFF'],
    [0x1fffe, 'U+1FFFE'],
    [0x10ffff, 'U+10FFFF'],
    [0x0378, 'an unassigned Greek code point'],
    [0x2fffd, 'an unassigned code point of plane 2'],
  ];
  for (const [code, name] of samples) {
    it(
      verifies(
        'console.no-look-marked',
        `${hex(code)} (${name}) is marked on the page and in notices, and refused in identifiers`,
      ),
      () => {
        const character = String.fromCodePoint(code);
        expect(isInvisible(character)).toBe(true);
        expect(htmlText(visibleText(`acct${character} 12`))).toBe(`acct${markOf(code)} 12`);
        expect(escapeInvisible(`"acct${character}"`)).not.toContain(character);
        expect(JSON.parse(escapeInvisible(`"acct${character}"`))).toBe(`acct${character}`);
        expect(identifierProblem(`V-100${character}`)).toBe('disallowed_character');
      },
    );
  }

  it(
    verifies(
      'console.no-look-marked',
      'marks exactly the private-use and unassigned code points besides the invisible ones',
    ),
    () => {
      const wrong: string[] = [];
      for (let code = 0; code <= 0x10ffff; code++) {
        if (isSurrogate(code)) continue;
        const character = String.fromCodePoint(code);
        if (isInvisible(character) !== (expectedInvisible(character) || noAgreedLook.test(character)))
          wrong.push(hex(code));
      }
      expect(wrong).toEqual([]);
    },
  );

  it(
    verifies('console.bidi-isolated', 'isolates each right-to-left stretch, so digits beside it keep their order'),
    () => {
      expect(htmlText(visibleText('acct א 111 999'))).toBe('acct <bdi>א</bdi> 111 999');
      // A right-to-left phrase stays whole; digits and Latin words end it.
      expect(htmlText(visibleText('acct ب 111 شكرا جزيلا 22 x'))).toBe(
        'acct <bdi>ب</bdi> 111 <bdi>شكرا جزيلا</bdi> 22 x',
      );
      // A mark between two letters ends the stretch before it.
      expect(htmlText(visibleText('א\u200fב'))).toBe(`<bdi>א</bdi>${markOf(0x200f)}<bdi>ב</bdi>`);
      expect(stylesheet).toMatch(/td, dd, \.string, code, bdi \{ unicode-bidi: isolate; \}/);
    },
  );
});
