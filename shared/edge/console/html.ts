// Server-rendered HTML for the console: every interpolated value is escaped unless it is already
// HTML built by this module, so no text an agent or a system sent can become markup.

const brand = Symbol('html');

export interface Html {
  readonly [brand]: true;
  readonly text: string;
}

const fragment = (text: string): Html => ({ [brand]: true, text });

const isHtml = (value: unknown): value is Html =>
  typeof value === 'object' && value !== null && brand in value && value[brand] === true;

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and double- or single-quoted attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => entities[character] ?? '');

type Interpolation = Html | string | number | null | undefined | false | readonly Interpolation[];

const render = (value: Interpolation): string => {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map((item: Interpolation) => render(item)).join('');
  if (isHtml(value)) return value.text;
  return escapeHtml(String(value));
};

/** A template whose interpolations are escaped (arrays are joined; null, undefined and false vanish). */
export const html = (strings: TemplateStringsArray, ...values: readonly Interpolation[]): Html =>
  fragment(
    strings.reduce((out, part, index) => out + part + (index < values.length ? render(values[index] ?? null) : ''), ''),
  );

export const htmlText = (value: Html): string => value.text;
