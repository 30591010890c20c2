// Small hand-built catalog tools and resolved systems for the outbound-call tests.
import type { CatalogTool, FieldBinding } from '../../../shared/catalog/tool.js';
import type { ResolvedCredentials, ResolvedSystem } from '../../../shared/config/load.js';
import type { SecretRules } from '../../../shared/secrets.js';
import { aSystem } from '../../support/systems.js';

export const noSecretRules: SecretRules = { names: new Set<string>() };

export const makeSystem = (
  overrides: Partial<ResolvedSystem> & { credentials?: ResolvedCredentials } = {},
): ResolvedSystem => aSystem(overrides);

export const makeTool = (overrides: Partial<CatalogTool> & { fields?: readonly FieldBinding[] } = {}): CatalogTool => {
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

export const readTool = makeTool({ access: 'read', method: 'GET', name: 'erp.get_order' });
export const writeTool = makeTool({
  access: 'write',
  method: 'POST',
  name: 'erp.create_order',
  operationId: 'createOrder',
  title: 'Create an order',
  path: '/orders',
});
