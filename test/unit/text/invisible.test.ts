// Invisible characters, decided from Unicode's properties: every one is marked on the console's
// page and refused in identifiers, checked over every code point there is.
import { describe, expect, it } from 'vitest';
import { identifierProblem } from '../../../shared/arguments/text-rules.js';
import { htmlText } from '../../../shared/console/html.js';
import { visibleText } from '../../../shared/console/pages.js';
import { escapeInvisible, isInvisible } from '../../../shared/text/invisible.js';
import { verifies } from '../../support/requirements.js';

/** What the issue asks for, read from Unicode's properties here rather than from the module. */
const byProperty = /[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Cf}\p{Cc}]/u;
/** Drawn blank, though Unicode gives them none of those properties. */
const blankLooking = ['\u2800', '\u{1d159}'];
const expectedInvisible = (character: string): boolean =>
  byProperty.test(character) || blankLooking.includes(character);

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
      expect(htmlText(visibleText(text))).toBe(text);
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
