// A resolved system for tests that build tools or calls by hand.
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
