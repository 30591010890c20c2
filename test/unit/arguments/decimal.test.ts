import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalDecimal, decimalFromScaled, scaledDecimal } from '../../../shared/arguments/decimal.js';
import { verifies } from '../../support/requirements.js';

describe(verifies('args.amount-canonical', 'exact decimal arithmetic'), () => {
  it(verifies('args.amount-canonical', 'reads a canonical decimal back from its scaled integer'), () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.nat({ max: 8 }), (units, scale) => {
        const decimal = decimalFromScaled(units, scale);
        expect(canonicalDecimal(decimal)).toBe(decimal);
        expect(scaledDecimal(decimal, scale)).toBe(units);
      }),
    );
  });

  it(verifies('args.amount-canonical', 'writes zero, signs and small fractions canonically'), () => {
    expect(decimalFromScaled(0n, 4)).toBe('0');
    expect(decimalFromScaled(-1n, 4)).toBe('-0.0001');
    expect(decimalFromScaled(15_000_000n, 4)).toBe('1500');
    expect(decimalFromScaled(-42n, 0)).toBe('-42');
  });
});
