// Amounts as canonical decimal strings: the one reading of an amount (Arabic-Indic and Persian
// digits read as 0-9, a JSON number from its source text), its order and its exact arithmetic.
import { canonicalText } from './text-rules.js';

const arabicIndicZero = 0x0660;
const persianZero = 0x06f0;
/** U+066B ARABIC DECIMAL SEPARATOR: the decimal point of Arabic-script numbers. */
const arabicDecimalSeparator = '\u066b';

/** Arabic-Indic (U+0660–0669) and Persian (U+06F0–06F9) digits as ASCII digits. */
export const asciiDigits = (text: string): string =>
  text.replace(/[\u0660-\u0669\u06f0-\u06f9]/g, (digit) => {
    const code = digit.charCodeAt(0);
    return String(code >= persianZero ? code - persianZero : code - arabicIndicZero);
  });

const decimalPattern = /^(-?)(\d+)(?:\.(\d+))?$/;
const numberPattern = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Digits without leading zeros (integer part) or trailing zeros (fraction), sign kept apart. */
const assemble = (negative: boolean, integer: string, fraction: string): string => {
  const whole = integer.replace(/^0+(?=\d)/, '');
  const part = fraction.replace(/0+$/, '');
  const text = part.length > 0 ? `${whole}.${part}` : whole;
  return negative && /[1-9]/.test(text) ? `-${text}` : text;
};

/**
 * The canonical decimal form of an amount, or null when it is not a decimal number. Strings take
 * Arabic-Indic and Persian digits and the Arabic decimal separator; thousands separators, signs
 * other than a leading minus, exponents and spaces inside are refused, not guessed at. A JSON
 * number is taken from its source text, so no binary rounding ever happens.
 */
export const canonicalDecimal = (value: unknown, numberText?: string): string | null => {
  if (typeof value === 'number') {
    const match = numberPattern.exec(numberText ?? String(value));
    if (match === null) return null;
    const [, sign = '', integer = '0', fraction = '', exponentText = '0'] = match;
    const exponent = Number(exponentText);
    if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 1000) return null;
    const digits = integer + fraction;
    const point = integer.length + exponent;
    if (point <= 0) return assemble(sign === '-', '0', '0'.repeat(-point) + digits);
    if (point >= digits.length) return assemble(sign === '-', digits + '0'.repeat(point - digits.length), '');
    return assemble(sign === '-', digits.slice(0, point), digits.slice(point));
  }
  if (typeof value !== 'string') return null;
  const text = asciiDigits(canonicalText(value)).replace(arabicDecimalSeparator, '.');
  const match = decimalPattern.exec(text);
  if (match === null) return null;
  const [, sign = '', integer = '0', fraction = ''] = match;
  return assemble(sign === '-', integer, fraction);
};

/** Compares two canonical decimal strings: negative, zero or positive like a - b. */
export const compareDecimals = (left: string, right: string): number => {
  const negativeLeft = left.startsWith('-');
  const negativeRight = right.startsWith('-');
  if (negativeLeft !== negativeRight) return negativeLeft ? -1 : 1;
  const [leftInteger = '', leftFraction = ''] = left.replace('-', '').split('.');
  const [rightInteger = '', rightFraction = ''] = right.replace('-', '').split('.');
  let order = 0;
  if (leftInteger.length !== rightInteger.length) order = leftInteger.length - rightInteger.length;
  else if (leftInteger !== rightInteger) order = leftInteger < rightInteger ? -1 : 1;
  else {
    const width = Math.max(leftFraction.length, rightFraction.length);
    const a = leftFraction.padEnd(width, '0');
    const b = rightFraction.padEnd(width, '0');
    order = a === b ? 0 : a < b ? -1 : 1;
  }
  return negativeLeft ? -order : order;
};

/**
 * A canonical decimal as an integer count of 10^-scale, for exact arithmetic. A fraction longer
 * than `scale` is not rounded: callers pass a scale at least as long as the decimal's own.
 */
export const scaledDecimal = (decimal: string, scale: number): bigint => {
  const negative = decimal.startsWith('-');
  const [integer = '0', fraction = ''] = decimal.replace('-', '').split('.');
  const digits = BigInt(integer + fraction.padEnd(scale, '0'));
  return negative ? -digits : digits;
};

const scaleOf = (decimal: string): number => decimal.split('.')[1]?.length ?? 0;

/** Whether `amount` is a whole multiple of `step` (both canonical decimals, step > 0). */
export const isMultipleOf = (amount: string, step: string): boolean => {
  const scale = Math.max(scaleOf(amount), scaleOf(step));
  const divisor = scaledDecimal(step, scale);
  return divisor !== 0n && scaledDecimal(amount, scale) % divisor === 0n;
};

/** The canonical decimal that `scaled` counts in units of 10^-scale (the inverse of scaledDecimal). */
export const decimalFromScaled = (scaled: bigint, scale: number): string => {
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(scale + 1, '0');
  if (scale === 0) return assemble(negative, digits, '');
  return assemble(negative, digits.slice(0, -scale), digits.slice(-scale));
};
