// The read and write tools and the secret rules the outbound-call tests share.
import type { SecretRules } from '../../../shared/secrets.js';
import { aTool } from '../../support/systems.js';

export const noSecretRules: SecretRules = { names: new Set<string>() };

export const readTool = aTool({ access: 'read', method: 'GET', name: 'erp.get_order' });
export const writeTool = aTool({
  access: 'write',
  method: 'POST',
  name: 'erp.create_order',
  operationId: 'createOrder',
  title: 'Create an order',
  path: '/orders',
});
