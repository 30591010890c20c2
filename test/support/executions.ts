// Execution records for tests, valid by construction.
import { type DecisionRecord, type Execution, newExecutionRecord } from '../../shared/executions/execution.js';
import { uuidV7Ids } from '../../shared/ids.js';

export const anExecution = (overrides: Partial<Execution> = {}): Execution =>
  newExecutionRecord({
    execution_id: uuidV7Ids.next(),
    agent_id: 'procurement-agent',
    customer_id: null,
    tool: 'erp.purchase_orders.create',
    status: 'pending_approval',
    created_at: new Date().toISOString(),
    arguments_json: '{"amount":"1500","currency":"EUR"}',
    ...overrides,
  });

/** A human step as the policy records it: who must agree, one approver, nothing more asked. */
export const humanStep = (
  parties: { readonly staff: string | null; readonly customer: boolean },
  more: Partial<NonNullable<DecisionRecord['step']>> = {},
): NonNullable<DecisionRecord['step']> => ({
  quorum: 1,
  escalation: null,
  reauth_ms: null,
  acr: null,
  ...parties,
  ...more,
});
