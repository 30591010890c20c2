// A small organization for policy:replay's tests: an ERP with a lookup, orders (a hidden note) and
// a vendor key (a secret its policy reads), and the policies it runs with today.

/** The configuration (its policies in policies.cedar beside it). */
export const replayConfig = [
  'systems:',
  '  - key: erp',
  '    base_url: http://127.0.0.1:9',
  '    operations:',
  '      - id: orders.list',
  '        method: GET',
  '        path: /orders',
  '        description: Lists orders.',
  '        input_schema: { type: object, properties: { vendor: { type: string } } }',
  '      - id: orders.create',
  '        method: POST',
  '        path: /orders',
  '        description: Creates an order.',
  '        input_schema:',
  '          type: object',
  '          required: [amount]',
  '          properties: { amount: { type: integer }, note: { type: string, x-sensitive: true } }',
  '      - id: vendors.update',
  '        method: POST',
  '        path: /vendors',
  '        description: Sets a vendor portal key.',
  '        input_schema:',
  '          type: object',
  '          required: [api_key]',
  '          properties: { api_key: { type: string, x-sensitive: true } }',
  'policies: [policies.cedar]',
  '',
].join('\n');

/** Today's policies (policies.cedar): lookups run, small orders run, large orders wait for finance, keys are checked. */
export const replayTodayPolicies = `@id("lookups")
permit (principal in Group::"procurement", action == Action::"erp.orders.list", resource);

@id("small-orders")
permit (principal in Group::"procurement", action == Action::"erp.orders.create", resource)
when { context.arguments.amount < 1000 };

@id("large-orders")
@approval("staff")
@approvers("finance")
permit (principal in Group::"procurement", action == Action::"erp.orders.create", resource)
when { context.arguments.amount >= 1000 };

@id("vendor-keys")
permit (principal in Group::"procurement", action == Action::"erp.vendors.update", resource)
when { context.arguments.api_key != "" };
`;
