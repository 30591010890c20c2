// Execution records for tests, valid by construction.
import type { Execution } from '../../shared/executions/execution.js';
import { uuidV7Ids } from '../../shared/ids.js';
import type { ExecutionStatus } from '../../shared/result.js';

export const anExecution = (overrides: Partial<Execution> = {}): Execution => {
  const at = overrides.created_at ?? new Date().toISOString();
  const status: ExecutionStatus = overrides.status ?? 'pending_approval';
  return {
    execution_id: uuidV7Ids.next(),
    agent_id: 'procurement-agent',
    customer_id: null,
    tool: 'erp.purchase_orders.create',
    status,
    arguments_json: '{"amount":"1500","currency":"EUR"}',
    code: null,
    message: null,
    result_json: null,
    approval_url: null,
    input_errors: null,
    arguments_hash: null,
    decision: null,
    sealed_arguments: null,
    claimed_at: null,
    deadline_at: null,
    http_status: null,
    latency_ms: null,
    trace_id: null,
    created_at: at,
    updated_at: at,
    history: [{ status, at }],
    ...overrides,
  };
};
