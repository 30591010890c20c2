// How a held call's arguments are shown to whoever must agree to them (an approver in the console,
// the customer on their page): exactly the canonical arguments, secrets hidden, and every invisible
// or direction-changing character shown as its code point. One home, so both read the same.

import type { Execution } from '../../executions/execution.js';
import { pointerSegment } from '../../json-pointer.js';
import { hiddenSecretsOf } from '../../secret-pointers.js';
import { splitInvisible } from '../../text/invisible.js';
import { exactJsonText, parseExactJson } from '../../wire/exact-json.js';
import { type Html, html } from './html.js';

/** Code points that are right-to-left by default (Hebrew, Arabic, Syriac, Thaana, N'Ko, … and their presentation forms). */
const rightToLeft = '\\u0590-\\u08ff\\ufb1d-\\ufdff\\ufe70-\\ufeff\\u{10800}-\\u{10fff}\\u{1e800}-\\u{1efff}';
/** A right-to-left stretch: its letters and what lies between them, but no Latin letter or digit. */
const rightToLeftRun = new RegExp(`[${rightToLeft}](?:[^\\p{L}\\p{N}]*[${rightToLeft}])*\\p{M}*`, 'gu');

/**
 * Text with each right-to-left stretch isolated (<bdi>): it reads right to left within itself, but
 * cannot carry the digits and words around it into its direction, so `acct א 111 999` is shown in
 * that order, never as `acct 999 111 א`.
 */
const isolatedText = (text: string): Html => {
  const parts: Html[] = [];
  let last = 0;
  for (const match of text.matchAll(rightToLeftRun)) {
    parts.push(html`${text.slice(last, match.index)}<bdi>${match[0]}</bdi>`);
    last = match.index + match[0].length;
  }
  return html`${parts}${text.slice(last)}`;
};

/**
 * Text with every character that displays as nothing, looks blank or moves other text around
 * shown as its visible code point, and right-to-left stretches kept from reordering their
 * neighbours, so an approver cannot be shown one thing and approve another.
 */
export const visibleText = (text: string): Html => {
  const { runs, rest } = splitInvisible(text);
  return html`${runs.map(
    (run) =>
      html`${isolatedText(run.before)}<span class="hidden-char" title="an invisible or direction-changing character">${run.codePoint}</span>`,
  )}${isolatedText(rest)}`;
};

interface ArgumentRow {
  readonly path: string;
  readonly value: unknown;
}

/** Flattens the canonical arguments into one row per value, named by its JSON Pointer. */
const argumentRows = (value: unknown, path = ''): ArgumentRow[] => {
  if (Array.isArray(value)) {
    if (value.length === 0) return [{ path, value }];
    return value.flatMap((item, index) => argumentRows(item, path + pointerSegment(index)));
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return [{ path, value }];
    return entries.flatMap(([key, item]) => argumentRows(item, path + pointerSegment(key)));
  }
  return [{ path, value }];
};

/** A value as shown: a hidden secret says so in its own element; a string, even "[REDACTED]", is its text. */
export const argumentValue = (value: unknown, secret: boolean): Html => {
  if (secret)
    return html`<em class="secret" title="a secret: hidden here, sent as the agent gave it">hidden (secret)</em>`;
  if (typeof value === 'string') return html`<span class="string">${visibleText(value)}</span>`;
  return html`<code>${exactJsonText(value)}</code>`;
};

export const argumentsTable = (execution: Execution): Html => {
  if (execution.arguments_json === null) return html`<p>No arguments were recorded.</p>`;
  // Read exactly: an integer beyond 2^53 shows the digits that will be sent.
  const rows = argumentRows(parseExactJson(execution.arguments_json));
  const hidden = hiddenSecretsOf(execution);
  return html`<table class="arguments">
<thead><tr><th scope="col">Field</th><th scope="col">Value</th></tr></thead>
<tbody>
${rows.map((row) => html`<tr><th scope="row"><code>${visibleText(row.path || '(whole)')}</code></th><td>${argumentValue(row.value, hidden(row.path, row.value))}</td></tr>\n`)}
</tbody>
</table>`;
};
