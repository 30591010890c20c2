// A resolved system, and catalog tools of it, for tests that build tools or calls by hand.
import type { CatalogTool, FieldBinding } from '../../shared/catalog/tool.js';
import type { ResolvedSystem } from '../../shared/config/load.js';

export const aSystem = (overrides: Partial<ResolvedSystem> = {}): ResolvedSystem => ({
  key: 'erp',
  base_url: 'https://erp.example.com',
  operations: [],
  credentials: { type: 'none' },
  timeout: 10_000,
  max_response_size: 1_048_576,
  sensitive_fields: [],
  identifier_fields: [],
  amount_fields: [],
  access: {},
  disabled_tools: [],
  ...overrides,
});

/** A hand-built catalog tool of the erp system: a read unless `access` says write. */
export const aTool = (overrides: Partial<CatalogTool> & { fields?: readonly FieldBinding[] } = {}): CatalogTool => {
  const access = overrides.access ?? 'read';
  return {
    name: 'erp.get_order',
    systemKey: 'erp',
    operationId: 'getOrder',
    title: 'Get an order',
    description: 'Reads one purchase order.',
    inputSchema: { type: 'object', properties: {} },
    annotations: {
      readOnlyHint: access === 'read',
      destructiveHint: false,
      idempotentHint: access === 'read',
      openWorldHint: false,
    },
    access,
    method: access === 'read' ? 'GET' : 'POST',
    path: '/orders',
    fields: [],
    responseSchema: null,
    ...overrides,
  };
};
