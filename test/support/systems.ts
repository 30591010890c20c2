// A resolved system, and catalog tools of it, for tests that build tools or calls by hand.
import type { CatalogTool, FieldBinding, HttpTarget } from '../../shared/catalog/tool.js';
import type { ResolvedCallToolSystem, ResolvedMcpSystem, ResolvedOpenApiSystem } from '../../shared/config/resolved.js';

/** What every kind of system takes, at its defaults. */
const systemDefaults = {
  credentials: { type: 'none' },
  timeout: 10_000,
  max_response_size: 1_048_576,
  sensitive_fields: [],
  identifier_fields: [],
  amount_fields: [],
  access: {},
  disabled_tools: [],
} as const satisfies Partial<ResolvedOpenApiSystem>;

export const aSystem = (overrides: Partial<ResolvedOpenApiSystem> = {}): ResolvedOpenApiSystem => ({
  ...systemDefaults,
  kind: 'openapi',
  key: 'erp',
  base_url: 'https://erp.example.com',
  operations: [],
  sensitive_fields: [],
  identifier_fields: [],
  amount_fields: [],
  disabled_tools: [],
  access: {},
  ...overrides,
});

/** A resolved call-tool system (tools described in the file, reached through a proxy). */
export const aCallToolSystem = (overrides: Partial<ResolvedCallToolSystem> = {}): ResolvedCallToolSystem => ({
  ...systemDefaults,
  kind: 'call-tool',
  key: 'notes',
  url: 'ws://127.0.0.1:9100',
  tools: [],
  sensitive_fields: [],
  identifier_fields: [],
  amount_fields: [],
  disabled_tools: [],
  access: {},
  ...overrides,
});

/** A resolved MCP system, at its defaults. */
export const anMcpSystem = (overrides: Partial<ResolvedMcpSystem> = {}): ResolvedMcpSystem => ({
  ...systemDefaults,
  kind: 'mcp',
  key: 'docs',
  url: 'https://docs.example.com/mcp',
  protocol: 'auto',
  max_concurrency: 8,
  refresh: 300_000,
  sensitive_fields: [],
  identifier_fields: [],
  amount_fields: [],
  disabled_tools: [],
  access: {},
  ...overrides,
});

/** The HTTP operation a tool calls (the tools of OpenAPI systems have one). */
export const httpTargetOf = (tool: CatalogTool): HttpTarget => {
  if (tool.target.kind !== 'http') throw new Error(`${tool.name} is not an HTTP operation`);
  return tool.target;
};

type ToolOverrides = Partial<CatalogTool> & {
  readonly method?: string;
  readonly path?: string;
  readonly fields?: readonly FieldBinding[];
};

/** A hand-built catalog tool of the erp system: a read unless `access` says write. */
export const aTool = (overrides: ToolOverrides = {}): CatalogTool => {
  const { method, path, fields, ...rest } = overrides;
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
    target: {
      kind: 'http',
      method: method ?? (access === 'read' ? 'GET' : 'POST'),
      path: path ?? '/orders',
      fields: fields ?? [],
    },
    responseSchema: null,
    ...rest,
  };
};
