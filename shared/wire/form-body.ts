// A form body (application/x-www-form-urlencoded) written from the canonical arguments by OpenAPI's
// Encoding Object rules, and the values such a body cannot carry so that the system reads back
// what the approver saw. Canonicalization refuses exactly what this module cannot write.
//
// The rules, per form field (`encoding` is what the document's Encoding Object says, if anything):
// - no style given: a scalar is its text, an array repeats the name (`tag=a&tag=b`), an object is
//   its JSON text (OpenAPI's default content type for an object is application/json);
// - `json`: the value's JSON text (the document names a JSON content type for the field);
// - `form`, exploded (the default): a scalar is its text, an array repeats the name, an object's
//   members become fields of their own (`R=100&G=200`); not exploded: `tag=a,b`, `color=R,100,G,200`;
// - `spaceDelimited` / `pipeDelimited`: as `form`, joined with " " or "|" when not exploded;
// - `deepObject`: nested members and items as `a[b][0]=…`, as Stripe reads them.
// A scalar is written as a query parameter is (parameter-values.ts); a value a style has no way to
// nest is written as its JSON text. Fields go in the schema's order; an object's members in
// RFC 8785's key order (JSON text too), so the body depends on the arguments, not on how an agent
// ordered them: a call sent at once and one sent after approval carry the same bytes. Names and values are percent-encoded as WHATWG URL's form
// serializer does (a reserved character is always encoded, which every server decodes the same,
// so `allowReserved` changes nothing on the wire).

import { isRecord } from '../objects.js';
import { canonicalJsonText } from './exact-json.js';
import { parameterText } from './parameter-values.js';

export const formStyles = ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject', 'json'] as const;
type FormStyle = (typeof formStyles)[number];

/** How one form field is written, as the operation's Encoding Object says. */
export interface FormEncoding {
  readonly style: FormStyle;
  readonly explode: boolean;
}

/** One form field of a call: its name on the wire, its canonical value, its encoding if the document gave one. */
export interface FormField {
  readonly name: string;
  readonly value: unknown;
  readonly encoding: FormEncoding | undefined;
}

/** A value a form body cannot carry: where it sits (the field's name first, a form field keeps its name in the arguments), and why. */
export interface FormProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

const delimiters: Record<FormStyle, string> = {
  form: ',',
  spaceDelimited: ' ',
  pipeDelimited: '|',
  deepObject: ',',
  json: ',',
};

const isScalar = (value: unknown): boolean => value === null || typeof value !== 'object';

/** A value where a style has no nesting: a scalar's text, anything else its JSON text. */
const flatText = (value: unknown): string => (isScalar(value) ? parameterText(value) : canonicalJsonText(value));

/** An object's members in RFC 8785's order (UTF-16 code units), as canonical JSON orders them. */
const membersOf = (value: Readonly<Record<string, unknown>>): [string, unknown][] =>
  Object.entries(value).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));

/** The encoding a field's value is written with: the document's, else OpenAPI's default for its type. */
const effective = (value: unknown, encoding: FormEncoding | undefined): FormEncoding =>
  encoding ?? (isRecord(value) ? { style: 'json', explode: false } : { style: 'form', explode: true });

const deepPairs = (key: string, value: unknown, pairs: [string, string][]): void => {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) deepPairs(`${key}[${index}]`, item, pairs);
  } else if (isRecord(value)) {
    for (const [member, item] of membersOf(value)) deepPairs(`${key}[${member}]`, item, pairs);
  } else {
    pairs.push([key, parameterText(value)]);
  }
};

const fieldPairs = ({ name, value, encoding }: FormField, pairs: [string, string][]): void => {
  const { style, explode } = effective(value, encoding);
  if (style === 'json' || isScalar(value)) {
    pairs.push([name, style === 'json' ? canonicalJsonText(value) : parameterText(value)]);
  } else if (style === 'deepObject') {
    deepPairs(name, value, pairs);
  } else if (Array.isArray(value)) {
    if (explode) for (const item of value) pairs.push([name, flatText(item)]);
    else pairs.push([name, value.map(flatText).join(delimiters[style])]);
  } else if (isRecord(value)) {
    const members = membersOf(value);
    if (explode) for (const [member, item] of members) pairs.push([member, flatText(item)]);
    else pairs.push([name, members.flatMap(([member, item]) => [member, flatText(item)]).join(delimiters[style])]);
  }
};

/** The body's text: the fields in the order given, each by its encoding. */
export const formBodyText = (fields: readonly FormField[]): string => {
  const pairs: [string, string][] = [];
  for (const field of fields) fieldPairs(field, pairs);
  return new URLSearchParams(pairs).toString();
};

const emptyMessage = 'A form body cannot carry an empty list or object: leave the field out.';
const nullMessage = 'A form body cannot carry null: leave the field out.';

/** A list's items by index, or an object's members by name. */
const entriesOf = (value: readonly unknown[] | Readonly<Record<string, unknown>>): [string | number, unknown][] =>
  Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);

/** Nulls and empty lists or objects under a field written with nesting (they would vanish or read as ""). */
const nestedProblems = (value: unknown, path: (string | number)[], deep: boolean, found: FormProblem[]): void => {
  if (value === null) found.push({ path, message: nullMessage });
  else if (Array.isArray(value) || isRecord(value)) {
    const members = entriesOf(value);
    if (members.length === 0) found.push({ path, message: emptyMessage });
    for (const [key, item] of members) {
      if (deep && typeof key === 'string' && /[[\]]/.test(key)) {
        found.push({ path: [...path, key], message: 'A member name in a form body cannot hold "[" or "]".' });
      }
      // Below the first level only deepObject nests; elsewhere a nested value travels as JSON text.
      if (deep) nestedProblems(item, [...path, key], deep, found);
      else if (item === null) found.push({ path: [...path, key], message: nullMessage });
    }
  }
};

/**
 * What the fields' values would lose in a form body, each with its path under its field: nulls,
 * empty lists and objects, "[" or "]" in a deepObject member name, a delimiter inside an item of a
 * delimited list, and an exploded object's member named like another form field.
 */
export const formProblems = (fields: readonly FormField[]): FormProblem[] => {
  const found: FormProblem[] = [];
  const fieldNames = new Set(fields.map((field) => field.name));
  // Names exploded objects' members are sent under: another field's, or one written twice, would clash.
  const spread = new Set<string>();
  for (const { name, value, encoding } of fields) {
    const { style, explode } = effective(value, encoding);
    if (style === 'json') continue;
    nestedProblems(value, [name], style === 'deepObject', found);
    if (style === 'deepObject' || !(Array.isArray(value) || isRecord(value))) continue;
    for (const [key, item] of entriesOf(value)) {
      const texts = typeof key === 'string' ? [key, flatText(item)] : [flatText(item)];
      if (!explode && texts.some((text) => text.includes(delimiters[style]))) {
        found.push({
          path: [name, key],
          message: `This value cannot hold "${delimiters[style]}": the form body separates values with it.`,
        });
      }
      if (explode && typeof key === 'string') {
        if ((fieldNames.has(key) && key !== name) || spread.has(key)) {
          found.push({
            path: [name, key],
            message: `This member would be sent as the form field "${key}", which the body has already.`,
          });
        }
        spread.add(key);
      }
    }
  }
  return found;
};
