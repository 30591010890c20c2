// A strict, non-recursive JSON reader for tool-call arguments. JSON.parse cannot see what the
// gateway must refuse rather than silently change: a key given twice, an integer beyond 2^53, a
// number too large to be finite, a `__proto__` key, a lone UTF-16 surrogate, nesting beyond the
// limit. This reader reports each with its JSON Pointer, keeps the source text of every number
// (so amounts stay exact), and uses an explicit stack, so hostile depth cannot overflow it.
//
// (No maintained JSON library reports duplicate keys and raw number text without recursing, which
// is why this one is written here.)
import type { InputErrorCode } from '../errors.js';
import { jsonPointer } from '../json-pointer.js';

export interface ArgumentIssue {
  readonly path: string;
  readonly code: InputErrorCode;
}

export interface StrictArguments {
  /** The arguments as read (forbidden keys and values nested too deep left out); undefined when absent. */
  readonly value: unknown;
  /** Source text of every number, by JSON Pointer. */
  readonly numbers: ReadonlyMap<string, string>;
  readonly issues: readonly ArgumentIssue[];
}

export const maxArgumentDepth = 32;
export const forbiddenKeys: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

class JsonSyntaxError extends Error {}

interface Frame {
  readonly kind: 'object' | 'array';
  readonly container: Record<string, unknown> | unknown[] | null;
  readonly path: readonly (string | number)[];
  readonly keys: Set<string>;
  key: string | null;
  index: number;
}

const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const escapes = new Map([
  ['"', '"'],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);

interface ReadDocument {
  readonly root: unknown;
  readonly numbers: Map<string, string>;
  readonly issues: ArgumentIssue[];
}

/**
 * Reads a whole JSON document. Containers deeper than `maxDepth` are not built: the reader skips
 * them (still checking their syntax) and reports nesting_too_deep where they start.
 */
const readDocument = (text: string, maxDepth: number): ReadDocument => {
  const numbers = new Map<string, string>();
  const issues: ArgumentIssue[] = [];
  const stack: Frame[] = [];
  let root: unknown;
  let position = 0;
  /** Stack length at which a value not to be built started; -1 when not skipping. */
  let skippingFrom = -1;
  /** The next value belongs to a refused key: read it, build nothing. */
  let skipNext = false;
  const noPath: readonly (string | number)[] = [];

  const fail = (): never => {
    throw new JsonSyntaxError(`invalid JSON at offset ${position}`);
  };
  const skipSpace = () => {
    while (position < text.length) {
      const code = text.charCodeAt(position);
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return;
      position += 1;
    }
  };
  const readString = (): string => {
    position += 1;
    let out = '';
    let start = position;
    while (position < text.length) {
      const code = text.charCodeAt(position);
      if (code === 0x22) {
        out += text.slice(start, position);
        position += 1;
        return out;
      }
      if (code < 0x20) fail();
      if (code !== 0x5c) {
        position += 1;
        continue;
      }
      out += text.slice(start, position);
      const escaped = text[position + 1] ?? '';
      if (escaped === 'u') {
        const hex = text.slice(position + 2, position + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail();
        out += String.fromCharCode(Number.parseInt(hex, 16));
        position += 6;
      } else {
        out += escapes.get(escaped) ?? fail();
        position += 2;
      }
      start = position;
    }
    return fail();
  };
  /** Where the next value goes. */
  const slotPath = (): readonly (string | number)[] => {
    const frame = stack.at(-1);
    if (frame === undefined) return noPath;
    // Paths are only needed where values are built; skipped depth costs no memory.
    if (skippingFrom !== -1) return noPath;
    return [...frame.path, frame.kind === 'array' || frame.key === null ? frame.index : frame.key];
  };
  const store = (value: unknown) => {
    const frame = stack.at(-1);
    if (frame === undefined) root = value;
    else if (Array.isArray(frame.container)) frame.container.push(value);
    else if (frame.container !== null && frame.key !== null && !forbiddenKeys.has(frame.key)) {
      Object.defineProperty(frame.container, frame.key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  };
  const readKey = () => {
    const frame = stack.at(-1);
    if (frame === undefined || frame.kind !== 'object') return fail();
    if (text[position] !== '"') fail();
    const raw = readString();
    skipSpace();
    if (text[position] !== ':') fail();
    position += 1;
    // Keys are compared in NFC, so two spellings of one name are one key.
    const key = raw.normalize('NFC');
    if (skippingFrom === -1) {
      const pointer = jsonPointer([...frame.path, key]);
      if (frame.keys.has(key)) issues.push({ path: pointer, code: 'duplicate_key' });
      if (forbiddenKeys.has(key)) issues.push({ path: pointer, code: 'forbidden_key' });
      if (!raw.isWellFormed()) issues.push({ path: pointer, code: 'lone_surrogate' });
    }
    frame.keys.add(key);
    frame.key = key;
    if (forbiddenKeys.has(key) && skippingFrom === -1) skipNext = true;
  };

  skipSpace();
  let expectValue = true;
  while (true) {
    if (expectValue) {
      skipSpace();
      const path = slotPath();
      const refused = skipNext;
      skipNext = false;
      const collecting = skippingFrom === -1 && !refused;
      const char = text[position];
      if (char === '{' || char === '[') {
        position += 1;
        const kind = char === '{' ? 'object' : 'array';
        let container: Record<string, unknown> | unknown[] | null = null;
        if (refused) skippingFrom = stack.length;
        else if (collecting && stack.length >= maxDepth) {
          issues.push({ path: jsonPointer(path), code: 'nesting_too_deep' });
          skippingFrom = stack.length;
          // An array keeps the refused item's place, so later items keep their indexes.
          if (stack.at(-1)?.kind === 'array') store(null);
        } else if (collecting) {
          container = kind === 'object' ? {} : [];
          store(container);
        }
        stack.push({ kind, container, path, keys: new Set(), key: null, index: 0 });
        skipSpace();
        if (text[position] === (kind === 'object' ? '}' : ']')) {
          position += 1;
          popFrame();
          expectValue = false;
          if (stack.length === 0) break;
          continue;
        }
        if (kind === 'object') readKey();
        continue;
      }
      let value: unknown;
      if (char === '"') {
        const string = readString();
        if (collecting && !string.isWellFormed()) issues.push({ path: jsonPointer(path), code: 'lone_surrogate' });
        value = string;
      } else if (char === 't' && text.startsWith('true', position)) {
        position += 4;
        value = true;
      } else if (char === 'f' && text.startsWith('false', position)) {
        position += 5;
        value = false;
      } else if (char === 'n' && text.startsWith('null', position)) {
        position += 4;
        value = null;
      } else {
        numberPattern.lastIndex = position;
        const raw = numberPattern.exec(text)?.[0] ?? fail();
        position += raw.length;
        const number = Number(raw);
        if (collecting) {
          const pointer = jsonPointer(path);
          numbers.set(pointer, raw);
          if (!Number.isFinite(number)) issues.push({ path: pointer, code: 'non_finite_number' });
          else if (Number.isInteger(number) && !Number.isSafeInteger(number)) {
            issues.push({ path: pointer, code: 'unsafe_integer' });
          }
        }
        value = number;
      }
      if (collecting) store(value);
      expectValue = false;
      if (stack.length === 0) break;
      continue;
    }
    skipSpace();
    const frame = stack.at(-1);
    if (frame === undefined) break;
    const char = text[position];
    if (char === ',') {
      position += 1;
      skipSpace();
      if (frame.kind === 'object') readKey();
      else frame.index += 1;
      expectValue = true;
      continue;
    }
    if (char === (frame.kind === 'object' ? '}' : ']')) {
      position += 1;
      popFrame();
      if (stack.length === 0) break;
      continue;
    }
    fail();
  }
  skipSpace();
  if (position !== text.length) fail();
  return { root, numbers, issues };

  function popFrame() {
    stack.pop();
    if (skippingFrom !== -1 && stack.length <= skippingFrom) skippingFrom = -1;
  }
};

const ownMember = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, key)
    ? Object.getOwnPropertyDescriptor(value, key)?.value
    : undefined;

/**
 * Reads the arguments at `focus` (member names from the root, e.g. params → arguments of a
 * JSON-RPC message; [] for a document that is the arguments). Pointers are relative to the
 * arguments. Null when the text is not JSON.
 */
export const readArguments = (
  text: string,
  focus: readonly string[] = ['params', 'arguments'],
): StrictArguments | null => {
  const document = tryRead(text, focus.length + maxArgumentDepth);
  return document === null ? null : focusOn(document, focus);
};

/**
 * The arguments of a JSON-RPC tools/call message, or null for any other message (or text that
 * is not JSON). The method is read from the message itself, so no spelling of it (escapes
 * included) avoids the strict reading.
 */
export const readToolCallArguments = (text: string): StrictArguments | null => {
  const focus = ['params', 'arguments'];
  const document = tryRead(text, focus.length + maxArgumentDepth);
  if (document === null || ownMember(document.root, 'method') !== 'tools/call') return null;
  return focusOn(document, focus);
};

const tryRead = (text: string, maxDepth: number): ReadDocument | null => {
  try {
    return readDocument(text, maxDepth);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return null;
    throw error;
  }
};

const focusOn = (document: ReadDocument, focus: readonly string[]): StrictArguments => {
  const prefix = jsonPointer(focus);
  const inside = (pointer: string) => pointer === prefix || pointer.startsWith(`${prefix}/`);
  let value: unknown = document.root;
  for (const key of focus) value = ownMember(value, key);
  return {
    value,
    numbers: new Map(
      [...document.numbers]
        .filter(([pointer]) => inside(pointer))
        .map(([pointer, raw]) => [pointer.slice(prefix.length), raw]),
    ),
    issues: document.issues
      .filter((issue) => inside(issue.path))
      .map((issue) => ({ path: issue.path.slice(prefix.length), code: issue.code })),
  };
};

/**
 * The same checks for arguments that arrive already parsed (no source text): duplicates cannot
 * be seen any more, everything else can. Numbers have no source text here, so an amount beyond
 * 2^53 or beyond the finite range stays refused. Walks with an explicit stack, like the reader.
 */
export const readParsedArguments = (value: unknown): StrictArguments => {
  const issues: ArgumentIssue[] = [];
  const numbers = new Map<string, string>();
  const root = value ?? {};
  let result: unknown;
  // Depth-first in document order: children are pushed in reverse so the first is read first.
  const work: { item: unknown; attach: (copy: unknown) => void; path: readonly (string | number)[] }[] = [
    {
      item: root,
      attach: (copy) => {
        result = copy;
      },
      path: [],
    },
  ];
  while (work.length > 0) {
    const next = work.pop();
    if (next === undefined) break;
    const { item, attach, path } = next;
    const pointer = jsonPointer(path);
    if (typeof item === 'string' && !item.isWellFormed()) issues.push({ path: pointer, code: 'lone_surrogate' });
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) issues.push({ path: pointer, code: 'non_finite_number' });
      else if (Number.isInteger(item) && !Number.isSafeInteger(item))
        issues.push({ path: pointer, code: 'unsafe_integer' });
      // Only exact numbers have a source text: a rounded one must not pass as an exact amount.
      else numbers.set(pointer, String(item));
    }
    if (typeof item !== 'object' || item === null) {
      attach(item);
      continue;
    }
    if (path.length >= maxArgumentDepth) {
      issues.push({ path: pointer, code: 'nesting_too_deep' });
      if (Array.isArray(item)) attach(null);
      continue;
    }
    if (Array.isArray(item)) {
      const copy: unknown[] = [];
      attach(copy);
      for (let index = item.length - 1; index >= 0; index--) {
        work.push({
          item: item[index],
          attach: (child) => {
            copy[index] = child;
          },
          path: [...path, index],
        });
      }
      continue;
    }
    const copy: Record<string, unknown> = {};
    attach(copy);
    const seen = new Set<string>();
    const children: (typeof work)[number][] = [];
    for (const [rawKey, child] of Object.entries(item)) {
      const key = rawKey.normalize('NFC');
      const childPath = [...path, key];
      const childPointer = jsonPointer(childPath);
      if (seen.has(key)) issues.push({ path: childPointer, code: 'duplicate_key' });
      seen.add(key);
      if (!rawKey.isWellFormed()) issues.push({ path: childPointer, code: 'lone_surrogate' });
      if (forbiddenKeys.has(key)) {
        issues.push({ path: childPointer, code: 'forbidden_key' });
        continue;
      }
      children.push({
        item: child,
        attach: (value) => {
          Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
        },
        path: childPath,
      });
    }
    work.push(...children.reverse());
  }
  return { value: result, numbers, issues };
};
