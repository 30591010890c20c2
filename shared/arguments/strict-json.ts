// A strict, non-recursive JSON reader for tool-call arguments. JSON.parse cannot see what the
// gateway must refuse rather than silently change: a key given twice, a number too large to be
// finite, a `__proto__` key, a lone UTF-16 surrogate, nesting beyond the limit, more values than
// one call may hold. This reader reports each with its JSON Pointer, keeps the source text of
// every number a double would change (so amounts and integers beyond 2^53 stay exact), reads the
// whole message once, in one linear pass, and uses an explicit stack, so hostile depth cannot
// overflow it.
//
// (No maintained JSON library reports duplicate keys and raw number text without recursing, which
// is why this one is written here.)
//
// Long: a single-pass reader is one state machine; its states share the stack, the limits and the
// pointer bookkeeping.
import type { InputErrorCode } from '../errors.js';
import { jsonPointer, pointerSegment } from '../json-pointer.js';
import { setOwn } from '../objects.js';

export interface ArgumentIssue {
  readonly path: string;
  readonly code: InputErrorCode;
}

export interface StrictArguments {
  /** The arguments as read (forbidden keys, values nested too deep and values past a cap left out); undefined when absent. */
  readonly value: unknown;
  /**
   * Source text of each number its JavaScript number does not spell the same way (1.50, 1e3,
   * 9007199254740993), by JSON Pointer: the rest are exactly `String(value)`.
   */
  readonly numbers: ReadonlyMap<string, string>;
  readonly issues: readonly ArgumentIssue[];
}

export const maxArgumentDepth = 32;
/** Most values (objects, arrays and scalars, the arguments object included) one call's arguments may hold. */
export const maxArgumentValues = 10_000;
/** Most items one array in the arguments may hold. */
export const maxArrayItems = 1_000;
export const forbiddenKeys: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

class JsonSyntaxError extends Error {}

/** Where a container sits relative to the focus (the arguments). */
interface Frame {
  readonly kind: 'object' | 'array';
  /** null: not built (refused, nested too deep, or past a cap). */
  readonly container: Record<string, unknown> | unknown[] | null;
  /** Pointer relative to the focus, for containers inside it; null outside. */
  readonly pointer: string | null;
  /** Focus keys this container's path matched so far; -1 once it left the focus's path. */
  readonly matched: number;
  readonly keys: Set<string>;
  key: string | null;
  index: number;
  /** This array reached maxArrayItems (reported once). */
  full: boolean;
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
  /** The whole document, as JSON.parse would give it (less what was refused or left out). */
  readonly root: unknown;
  /** The focus, read strictly. */
  readonly focus: StrictArguments;
}

/**
 * Reads a whole JSON document once, in one pass, and the value at `focus` strictly: hazards are
 * reported only there, with pointers relative to it, and pointers are built only for what needs
 * one (an issue, a number whose text must be kept, a container inside the focus). Containers
 * deeper than `maxDepth` are not built: the reader skips them (still checking their syntax) and
 * reports nesting_too_deep where they start. Inside the focus, values past maxArgumentValues and
 * array items past maxArrayItems are not built either, and reported once.
 */
const readDocument = (text: string, focus: readonly string[], maxDepth: number): ReadDocument => {
  const numbers = new Map<string, string>();
  const issues: ArgumentIssue[] = [];
  const stack: Frame[] = [];
  let root: unknown;
  let focusValue: unknown;
  let position = 0;
  /** Stack length at which a value not to be built started; -1 when not skipping. */
  let skippingFrom = -1;
  /** The next value belongs to a refused key: read it, build nothing. */
  let skipNext = false;
  /** Values read inside the focus; past the cap nothing more is built there. */
  let values = 0;
  let overflow = false;

  /** The next value's place: its pointer inside the focus (null outside), and the focus keys matched. */
  let slotPointer: string | null = null;
  let slotMatched = -1;
  // The reader's steps, as methods of one object made once per read: none is named on each read, as
  // the local runtime's TypeScript loader names every function a variable holds each time it is made.
  const reader = {
    fail(): never {
      throw new JsonSyntaxError(`invalid JSON at offset ${position}`);
    },
    skipSpace(): void {
      while (position < text.length) {
        const code = text.charCodeAt(position);
        if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return;
        position += 1;
      }
    },
    readString(): string {
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
        if (code < 0x20) reader.fail();
        if (code !== 0x5c) {
          position += 1;
          continue;
        }
        out += text.slice(start, position);
        const escaped = text[position + 1] ?? '';
        if (escaped === 'u') {
          const hex = text.slice(position + 2, position + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) reader.fail();
          out += String.fromCharCode(Number.parseInt(hex, 16));
          position += 6;
        } else {
          out += escapes.get(escaped) ?? reader.fail();
          position += 2;
        }
        start = position;
      }
      return reader.fail();
    },
    locateSlot(): void {
      const frame = stack.at(-1);
      if (frame === undefined) {
        slotMatched = 0;
        slotPointer = focus.length === 0 ? '' : null;
      } else if (frame.pointer !== null) {
        slotMatched = focus.length;
        slotPointer =
          frame.pointer + pointerSegment(frame.kind === 'array' || frame.key === null ? frame.index : frame.key);
      } else if (frame.matched >= 0 && frame.kind === 'object' && frame.key === focus[frame.matched]) {
        slotMatched = frame.matched + 1;
        slotPointer = slotMatched === focus.length ? '' : null;
      } else {
        slotMatched = -1;
        slotPointer = null;
      }
    },
    store(value: unknown): void {
      const frame = stack.at(-1);
      if (frame === undefined) root = value;
      else if (Array.isArray(frame.container)) frame.container.push(value);
      else if (frame.container !== null && frame.key !== null && !forbiddenKeys.has(frame.key)) {
        setOwn(frame.container, frame.key, value);
      }
      if (slotPointer === '') focusValue = value;
    },
    readKey() {
      const frame = stack.at(-1);
      if (frame === undefined || frame.kind !== 'object') return reader.fail();
      if (text[position] !== '"') reader.fail();
      const raw = reader.readString();
      reader.skipSpace();
      if (text[position] !== ':') reader.fail();
      position += 1;
      // Keys are compared in NFC, so two spellings of one name are one key.
      const key = raw.normalize('NFC');
      const repeated = frame.keys.has(key);
      if (frame.container !== null && frame.pointer !== null) {
        // Past the cap nothing more is built, so nothing more is reported either.
        if (overflow) {
          frame.key = key;
          return;
        }
        if (repeated) issues.push({ path: frame.pointer + pointerSegment(key), code: 'duplicate_key' });
        if (forbiddenKeys.has(key)) issues.push({ path: frame.pointer + pointerSegment(key), code: 'forbidden_key' });
        if (!raw.isWellFormed()) issues.push({ path: frame.pointer + pointerSegment(key), code: 'lone_surrogate' });
      } else if (repeated && frame.matched === focus.length - 1 && key === focus[frame.matched]) {
        // The arguments given twice: the last one is kept, and the call refused.
        issues.push({ path: '', code: 'duplicate_key' });
      }
      if (frame.container !== null) frame.keys.add(key);
      frame.key = key;
      if (forbiddenKeys.has(key) && skippingFrom === -1) skipNext = true;
    },
    popFrame(): void {
      stack.pop();
      if (skippingFrom !== -1 && stack.length <= skippingFrom) skippingFrom = -1;
    },
  };

  reader.skipSpace();
  let expectValue = true;
  while (true) {
    if (expectValue) {
      reader.skipSpace();
      const refused = skipNext;
      skipNext = false;
      const parent = stack.at(-1);
      let collecting = skippingFrom === -1 && !refused && (parent === undefined || parent.container !== null);
      if (collecting) reader.locateSlot();
      const inside = collecting && slotPointer !== null;
      if (inside) {
        values += 1;
        if (values > maxArgumentValues) {
          if (!overflow) issues.push({ path: '', code: 'too_many_values' });
          overflow = true;
        }
        if (parent?.kind === 'array' && parent.index >= maxArrayItems) {
          if (!parent.full && parent.pointer !== null) issues.push({ path: parent.pointer, code: 'too_many_items' });
          parent.full = true;
        }
        if (overflow || parent?.full === true) collecting = false;
      }
      const char = text[position];
      if (char === '{' || char === '[') {
        position += 1;
        const kind = char === '{' ? 'object' : 'array';
        let container: Record<string, unknown> | unknown[] | null = null;
        if (refused) skippingFrom = stack.length;
        else if (collecting && stack.length >= maxDepth) {
          if (slotPointer !== null) issues.push({ path: slotPointer, code: 'nesting_too_deep' });
          skippingFrom = stack.length;
          // An array keeps the refused item's place, so later items keep their indexes.
          if (parent?.kind === 'array') reader.store(null);
        } else if (collecting) {
          container = kind === 'object' ? {} : [];
          reader.store(container);
        }
        stack.push({
          kind,
          container,
          pointer: container === null ? null : slotPointer,
          matched: container === null ? -1 : slotMatched,
          keys: new Set(),
          key: null,
          index: 0,
          full: false,
        });
        reader.skipSpace();
        if (text[position] === (kind === 'object' ? '}' : ']')) {
          position += 1;
          reader.popFrame();
          expectValue = false;
          if (stack.length === 0) break;
          continue;
        }
        if (kind === 'object') reader.readKey();
        continue;
      }
      let value: unknown;
      if (char === '"') {
        const string = reader.readString();
        if (collecting && slotPointer !== null && !string.isWellFormed()) {
          issues.push({ path: slotPointer, code: 'lone_surrogate' });
        }
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
        const raw = numberPattern.exec(text)?.[0] ?? reader.fail();
        position += raw.length;
        const number = Number(raw);
        if (collecting && slotPointer !== null) {
          if (!Number.isFinite(number)) issues.push({ path: slotPointer, code: 'non_finite_number' });
          // Most numbers spell themselves; only the others need their text kept.
          if (String(number) !== raw) numbers.set(slotPointer, raw);
        }
        value = number;
      }
      if (collecting) reader.store(value);
      expectValue = false;
      if (stack.length === 0) break;
      continue;
    }
    reader.skipSpace();
    const frame = stack.at(-1);
    if (frame === undefined) break;
    const char = text[position];
    if (char === ',') {
      position += 1;
      reader.skipSpace();
      if (frame.kind === 'object') reader.readKey();
      else frame.index += 1;
      expectValue = true;
      continue;
    }
    if (char === (frame.kind === 'object' ? '}' : ']')) {
      position += 1;
      reader.popFrame();
      if (stack.length === 0) break;
      continue;
    }
    reader.fail();
  }
  reader.skipSpace();
  if (position !== text.length) reader.fail();
  return { root, focus: { value: focusValue, numbers, issues } };
};

const ownMember = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, key)
    ? Object.getOwnPropertyDescriptor(value, key)?.value
    : undefined;

const toolCallFocus = ['params', 'arguments'];

/**
 * Reads the arguments at `focus` (member names from the root, e.g. params → arguments of a
 * JSON-RPC message; [] for a document that is the arguments). Pointers are relative to the
 * arguments. Null when the text is not JSON.
 */
export const readArguments = (text: string, focus: readonly string[] = toolCallFocus): StrictArguments | null =>
  tryRead(text, focus)?.focus ?? null;

/** A JSON-RPC message read once: the message as JSON.parse would give it, and a tools/call's arguments read strictly. */
export interface ReadMessage {
  readonly message: unknown;
  /** The arguments of a tools/call; null for any other message. */
  readonly toolArguments: StrictArguments | null;
}

/**
 * Reads a JSON-RPC message in one pass (null when the text is not JSON). The method is read from
 * the message itself, so no spelling of it (escapes included) avoids the strict reading.
 */
export const readMessage = (text: string): ReadMessage | null => {
  const document = tryRead(text, toolCallFocus);
  if (document === null) return null;
  return {
    message: document.root,
    toolArguments: ownMember(document.root, 'method') === 'tools/call' ? document.focus : null,
  };
};

/**
 * Reads a document that holds tool-call params (`{ name, arguments }`, as /tool/call-tool sends
 * them) in one pass: the document as JSON.parse would give it, and its arguments read strictly.
 * Null when the text is not JSON.
 */
export const readToolCallParams = (
  text: string,
): { readonly params: unknown; readonly toolArguments: StrictArguments } | null => {
  const document = tryRead(text, ['arguments']);
  return document === null ? null : { params: document.root, toolArguments: document.focus };
};

const tryRead = (text: string, focus: readonly string[]): ReadDocument | null => {
  try {
    return readDocument(text, focus, focus.length + maxArgumentDepth);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return null;
    throw error;
  }
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
          setOwn(copy, key, value);
        },
        path: childPath,
      });
    }
    work.push(...children.reverse());
  }
  return { value: result, numbers, issues };
};
