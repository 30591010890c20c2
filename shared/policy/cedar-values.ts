// Canonical arguments as Cedar values, typed by the tool's Cedar shape. A value Cedar cannot hold
// exactly (an amount with more than four decimals or beyond Cedar's decimal range) makes the
// whole call unrepresentable: it is refused, never evaluated with a field missing.
import type { CedarValueJson } from '@cedar-policy/cedar-wasm/nodejs';
import { compareDecimals } from '../arguments/decimal.js';
import { isJsonObject } from '../catalog/tool.js';
import type { CedarType, RecordShape } from './cedar-schema.js';

/** Cedar decimals: at most four fractional digits, within ±922337203685477.5807. */
export const cedarDecimalLimit = '922337203685477.5807';

/** The Cedar literal text of a canonical decimal ("1500" → "1500.0"), or null when Cedar cannot hold it. */
export const cedarDecimalText = (decimal: string): string | null => {
  const [, fraction = ''] = decimal.split('.');
  if (fraction.length > 4) return null;
  const magnitude = decimal.replace('-', '');
  if (
    compareDecimals(magnitude, cedarDecimalLimit) > 0 &&
    !(decimal.startsWith('-') && magnitude === '922337203685477.5808')
  ) {
    return null;
  }
  return decimal.includes('.') ? decimal : `${decimal}.0`;
};

export const decimalValue = (text: string): CedarValueJson => ({ __extn: { fn: 'decimal', arg: text } });

const longMinimum = -(2n ** 63n);
const longMaximum = 2n ** 63n - 1n;

export type CedarConversion = { ok: true; value: CedarValueJson } | { ok: false; path: string };

const convert = (value: unknown, type: CedarType, path: string): CedarConversion => {
  switch (type.kind) {
    case 'string':
      return typeof value === 'string' ? { ok: true, value } : { ok: false, path };
    case 'bool':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, path };
    case 'long':
      return typeof value === 'number' &&
        Number.isSafeInteger(value) &&
        BigInt(value) >= longMinimum &&
        BigInt(value) <= longMaximum
        ? { ok: true, value }
        : { ok: false, path };
    case 'decimal': {
      const text = typeof value === 'string' ? cedarDecimalText(value) : null;
      return text === null ? { ok: false, path } : { ok: true, value: decimalValue(text) };
    }
    case 'set': {
      if (!Array.isArray(value)) return { ok: false, path };
      const items: CedarValueJson[] = [];
      for (const [index, item] of value.entries()) {
        const converted = convert(item, type.element, `${path}/${index}`);
        if (!converted.ok) return converted;
        items.push(converted.value);
      }
      return { ok: true, value: items };
    }
    case 'record':
      return toCedarRecord(value, type, path);
  }
};

/** Fields the shape leaves out are skipped; null (an absent optional value) is skipped too. */
export const toCedarRecord = (value: unknown, shape: RecordShape, path = ''): CedarConversion => {
  if (!isJsonObject(value)) return { ok: false, path };
  const record: Record<string, CedarValueJson> = {};
  for (const [name, attribute] of shape.attributes) {
    const child = Object.hasOwn(value, name) ? value[name] : undefined;
    if (child === undefined || child === null) {
      if (attribute.required) return { ok: false, path: `${path}/${name}` };
      continue;
    }
    const converted = convert(child, attribute.type, `${path}/${name}`);
    if (!converted.ok) return converted;
    record[name] = converted.value;
  }
  return { ok: true, value: record };
};
