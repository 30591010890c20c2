// Shared by the argument tests: the purchase-order input schema as the catalog builds it from
// examples/erp/openapi.yaml, and canonicalization of a JSON text.
import { type Canonicalization, canonicalizeArguments } from '../../../shared/arguments/canonicalize.js';
import { readArguments } from '../../../shared/arguments/strict-json.js';
import type { JsonObject } from '../../../shared/catalog/tool.js';
import { withValidator } from '../../support/validators.js';

export const purchaseOrder: JsonObject = {
  type: 'object',
  properties: {
    vendor_id: { type: 'string', 'x-identifier': true, maxLength: 40, description: "The vendor's id, e.g. V-100." },
    amount: {
      type: ['string', 'number'],
      format: 'decimal',
      description: 'A decimal amount such as 1500 or 1500.25.',
      'x-amount': true,
    },
    currency: { type: 'string', enum: ['EUR', 'USD', 'GBP', 'SAR', 'AED'] },
    description: { type: 'string', maxLength: 500, description: 'What is being bought, in free text.' },
    lines: {
      type: 'array',
      maxItems: 500,
      items: {
        type: 'object',
        required: ['sku', 'quantity'],
        additionalProperties: false,
        properties: {
          sku: { type: 'string', 'x-identifier': true, maxLength: 40 },
          quantity: { type: 'integer', minimum: 1 },
          note: { type: 'string', maxLength: 20000 },
        },
      },
    },
  },
  required: ['vendor_id', 'amount', 'currency'],
  additionalProperties: false,
};

export const canonicalize = (schema: JsonObject, text: string): Canonicalization => {
  const input = readArguments(text, []);
  if (input === null) throw new Error(`not JSON: ${text.slice(0, 80)}`);
  return canonicalizeArguments(withValidator({ inputSchema: schema }), input);
};
