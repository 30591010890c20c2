// The gateway configuration file (gateway.config.yaml): its zod schema is the single source for
// validation, for the types the runtime uses and for the JSON Schema published to editors.
// (Descriptions quote the file's own ${secret:NAME} and ${env:NAME} syntax, which is why the linter's template-string
// rule is off for this file.)
//
// Long: the file's whole format lives here (settings, limits, the three kinds of system, people,
// agents), so that one schema validates it, types it and publishes it.
import * as z from 'zod';
import { maxResponseSizeCeiling } from '../executions/record-size.js';
import { defaultRetentionMs, maxRetentionMs, minRetentionMs } from '../executions/retention.js';
import { headerNamePattern, reservedCredentialHeaders } from '../wire/headers.js';
import { ByteSize, Duration } from './duration.js';

/** A reference to the environment as the file writes it: `${env:NAME}`. */
export const secretReference = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * A reference to a stored secret: `${secret:NAME}`, or `${secret:NAME#field}` for one field of a
 * secret holding a JSON object. Names take the characters AWS Secrets Manager allows.
 */
export const storedSecretReference = /^\$\{secret:([A-Za-z0-9/_+=.@-]{1,256})(?:#([A-Za-z0-9_.-]{1,128}))?\}$/;

/**
 * A secret: `${secret:NAME}` (AWS Secrets Manager when deployed, the data folder or the
 * environment locally), `${env:NAME}` (the local runtime's environment) or, for demos, the literal value.
 */
const Secret = z
  .string()
  .min(1)
  .meta({
    description:
      'A secret: ${secret:NAME} or ${secret:NAME#field} (AWS Secrets Manager when deployed; the data folder or a GATEWAY_SECRET_ variable locally), ${env:NAME} (the local environment only), or a literal value (demo only).',
  })
  .transform((text) => {
    const stored = storedSecretReference.exec(text);
    if (stored?.[1] !== undefined) return { kind: 'secret', name: stored[1], field: stored[2] ?? null } as const;
    const match = secretReference.exec(text);
    return match?.[1] === undefined
      ? ({ kind: 'literal', value: text } as const)
      : ({ kind: 'env', name: match[1] } as const);
  });
export type SecretRef = z.output<typeof Secret>;

const identifier = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'expected lowercase letters, digits, "_", "." or "-" (at most 64)');

/** Bounds of the approval time: a timer of at least a second, and a request still worth deciding. */
const minApprovalMs = 1_000;
const maxApprovalMs = 14 * 86_400_000;

const Webhook = z
  .object({
    url: Secret.describe('The webhook URL; often holds a token, so ${secret:NAME} in real configurations.'),
    text: z
      .boolean()
      .default(true)
      .describe('Adds a Slack-style `text` line to the JSON body, for chat incoming-webhooks.'),
  })
  .strict();

const Notifications = z
  .object({
    webhooks: z.array(Webhook).default([]).describe('Each held call is POSTed as JSON to every webhook.'),
  })
  .strict();

/** Per-agent limits: how much of the gateway one agent may use, so one agent cannot starve the others. */
const wholeNumber = (field: string, max: number) =>
  z
    .number({ error: `expected ${field} as a whole number` })
    .int(`expected ${field} as a whole number`)
    .min(1, `expected ${field} of at least 1`)
    .max(max, `expected ${field} of at most ${max}`);

/** Byte allowances hold at least the largest request (256 KiB), so every request can be admitted. */
const minRequestBytes = 256 * 1024;
const requestBytes = (field: string) =>
  z
    .number({ error: `expected ${field} as a whole number` })
    .int(`expected ${field} as a whole number`)
    .min(minRequestBytes, `expected ${field} of at least ${minRequestBytes} (the largest request)`)
    .max(Number.MAX_SAFE_INTEGER, `expected ${field} of at most ${Number.MAX_SAFE_INTEGER}`);

/** Largest pending_calls: an agent's held calls are tracked in one store item, which must stay small. */
const maxPendingCallsLimit = 1_000;

const LimitValues = z
  .object({
    concurrent_requests: wholeNumber('concurrent_requests', 10_000).describe(
      'MCP requests one agent may have in progress at once.',
    ),
    requests_per_second: z
      .number({ error: 'expected requests_per_second as a number' })
      .positive('expected requests_per_second above 0')
      .max(100_000, 'expected requests_per_second of at most 100000')
      .describe('MCP requests per second one agent may make on average (a token bucket refilled at this rate).'),
    burst: wholeNumber('burst', 100_000).describe(
      'Requests one agent may make at once above its rate (the bucket size).',
    ),
    pending_calls: wholeNumber('pending_calls', maxPendingCallsLimit).describe(
      'Calls of one agent that may wait for approval at once; a call that would be held beyond it is denied.',
    ),
    request_bytes_per_second: requestBytes('request_bytes_per_second').describe(
      "Bytes of MCP requests one agent may send per second (a bucket of one second's worth): what reading its requests may cost the gateway.",
    ),
    request_bytes_per_day: requestBytes('request_bytes_per_day').describe(
      'Bytes of MCP requests one agent may send per day (a bucket of one day refilled evenly): a bound on what its calls can make the gateway store.',
    ),
  })
  .strict();

const LimitOverrides = LimitValues.partial().strict();

export const Limits = LimitValues.extend({
  concurrent_requests: LimitValues.shape.concurrent_requests.default(32),
  requests_per_second: LimitValues.shape.requests_per_second.default(50),
  burst: LimitValues.shape.burst.default(100),
  pending_calls: LimitValues.shape.pending_calls.default(100),
  request_bytes_per_second: LimitValues.shape.request_bytes_per_second.default(1_048_576),
  request_bytes_per_day: LimitValues.shape.request_bytes_per_day.default(1_073_741_824),
  groups: z
    .record(z.string().min(1), LimitOverrides)
    .default({})
    .describe(
      'Group → limits overriding the defaults for agents of that group; an agent in several groups gets, per limit, the highest any of them sets.',
    ),
  agents: z
    .record(z.string().min(1), LimitOverrides)
    .default({})
    .describe('Agent id → limits overriding the defaults and its groups.'),
}).strict();
export type Limits = z.output<typeof Limits>;

const Settings = z
  .object({
    enabled: z.boolean().default(true).describe('When false, agents see only get_execution_status.'),
    approval_time: Duration.prefault('24h')
      .refine((ms) => ms >= minApprovalMs && ms <= maxApprovalMs, {
        message: 'expected an approval time from 1s to 14d',
      })
      .describe('How long a held call waits for a decision before it expires (1s to 14d).'),
    retention: Duration.prefault(`${defaultRetentionMs / 86_400_000}d`)
      .refine((ms) => ms >= minRetentionMs && ms <= maxRetentionMs, {
        message: 'expected a retention from 1d to 3650d',
      })
      .describe(
        "How long a call is kept once it is final (succeeded, failed, unknown, denied, rejected, expired), then deleted (by the table's time to live in AWS, by a sweep every ten minutes locally; 1d to 3650d). Calls still waiting or running are kept. Each call keeps the retention in force when it was made.",
      ),
    join_pending_calls: z
      .boolean()
      .default(true)
      .describe(
        'When true, a held call asked for again (the same agent, tool and canonical arguments, without an idempotency key) while the first still waits for approval answers that first call: no second record, no second notice. False holds each such call on its own.',
      ),
    allowed_staleness: Duration.prefault('15m').describe(
      'How old the last good configuration load may be before the gateway stops offering tools.',
    ),
    public_url: z.url().optional().describe('Base URL used in links (console, approval_url).'),
    notifications: Notifications.prefault({}).describe('Where approvers hear about held calls, besides the console.'),
    limits: Limits.prefault({}).describe(
      'Per-agent limits on concurrent requests, request rate, request bytes and calls waiting for approval; overridable per group and per agent.',
    ),
    data_key: Secret.optional().describe(
      'Local runtime only: the 256-bit key (base64) that encrypts secret argument values at rest. Default: a key kept in the data folder. In AWS, KMS does this.',
    ),
  })
  .strict();

const operationId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/, 'expected letters, digits, "_", "." or "-" (at most 100)');

const fieldName = z.string().min(1).max(128);

/** How the gateway authenticates to a system. Agents never see these values. */
export const Credentials = z.discriminatedUnion('type', [
  z.object({ type: z.literal('none') }).strict(),
  z.object({ type: z.literal('bearer'), token: Secret }).strict(),
  z
    .object({
      type: z.literal('api_key'),
      header: z
        .string()
        .regex(headerNamePattern, 'expected an HTTP header name (RFC 9110 token, e.g. X-Api-Key or api_key)')
        .refine((name) => !reservedCredentialHeaders.has(name.toLowerCase()), {
          message: 'expected a header of its own: the gateway sets this one itself',
        })
        .describe('The header that carries the key, e.g. X-Api-Key or api_key.'),
      value: Secret,
    })
    .strict(),
  z.object({ type: z.literal('basic'), username: z.string().min(1), password: Secret }).strict(),
]);

const httpMethods = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** An operation described in the file rather than in an OpenAPI document. */
export const AdminOperation = z
  .object({
    id: operationId.describe('Operation id; the tool is named <system key>.<id>, lowercased.'),
    method: z.enum(httpMethods),
    path: z
      .string()
      .regex(/^\/[^\s?#]*$/, 'expected a path starting with "/", without query or fragment')
      .describe('Path under the base URL; {name} segments are filled from the input field of that name.'),
    summary: z.string().min(1).optional().describe('Short title shown to agents and approvers.'),
    description: z.string().min(1).describe('What the operation does, for agents.'),
    input_schema: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe(
        'JSON Schema of the input object. Path fields fill {name} segments; GET/HEAD/DELETE send the others as the query, other methods as the JSON body.',
      ),
  })
  .strict();

/** What every kind of system shares: its key, what it may cost, and the gateway's own field rules. */
const systemFields = {
  key: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'expected a lowercase key such as "erp" (letters, digits, "_", "-")')
    .describe('Prefix of the tool names of this system.'),
  credentials: Credentials.prefault({ type: 'none' }),
  timeout: Duration.prefault('10s').describe('Total deadline of one call to the system.'),
  max_response_size: ByteSize.prefault(`${maxResponseSizeCeiling / 1024}KB`)
    .refine((bytes) => bytes <= maxResponseSizeCeiling, {
      error: `at most ${maxResponseSizeCeiling / 1024}KB: an execution record keeps the answer beside the call's arguments, in one 400 KB store item`,
    })
    .describe(`Largest answer read from the system, e.g. 64KB; at most ${maxResponseSizeCeiling / 1024}KB.`),
  sensitive_fields: z.array(fieldName).default([]).describe('Field names holding secrets, in inputs and answers.'),
  identifier_fields: z
    .array(fieldName)
    .default([])
    .describe('Input field names holding identifiers (codes, references).'),
  amount_fields: z.array(fieldName).default([]).describe('Input field names holding amounts or other decimal numbers.'),
  access: z
    .record(z.string(), z.enum(['read', 'write']))
    .default({})
    .describe('Tool name → read or write, overriding the default (GET/HEAD/OPTIONS read, others write).'),
  disabled_tools: z.array(z.string().min(1)).default([]).describe('Tool names not offered to agents.'),
  enabled_tools: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'Patterns of the tool names offered to agents, "*" matching any characters (e.g. github.repos_*); absent: every tool. disabled_tools still turns a tool off.',
    ),
};

/** A system described by OpenAPI (or operations in the file) and called over HTTP: the default kind. */
export const OpenApiSystem = z
  .object({
    kind: z.literal('openapi').default('openapi').describe('An HTTP system described by OpenAPI (the default).'),
    ...systemFields,
    base_url: Secret.describe(
      'Base URL of the system, or a ${secret:NAME} / ${env:NAME} reference. Only this URL is ever called.',
    ),
    openapi: z.string().min(1).optional().describe('OpenAPI 3.0 or 3.1 document, relative to this file.'),
    operations: z
      .array(AdminOperation)
      .default([])
      .describe('Operations described here instead of (or beside) OpenAPI.'),
    error_code_field: z
      .string()
      .regex(/^(\/[^/]*)*$/, 'expected a JSON Pointer such as /code or /error/code')
      .optional()
      .describe(
        'Where a 4xx answer carries its error code (JSON Pointer). Default: /code, /error_code or /error/code.',
      ),
  })
  .strict();

const toolName = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/, 'expected letters, digits, "_", "." or "-" (at most 128)');

/** A tool of a call-tool system, described in the file (the channel has no listing of its own). */
const ChannelTool = z
  .object({
    name: toolName.describe("The tool's name on its server; the gateway offers it as <system key>.<name>, lowercased."),
    title: z.string().min(1).optional().describe('Short title shown to agents and approvers.'),
    description: z.string().min(1).describe('What the tool does, for agents.'),
    input_schema: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe("JSON Schema of the tool's arguments (an object)."),
    output_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JSON Schema of its structured result, when it has one (used to find secret fields).'),
    access: z.enum(['read', 'write']).describe('Whether the tool only reads, or may change something.'),
  })
  .strict();

/** Where a tool server is reached: http(s) or ws(s), without query or fragment. */
const serverUrl = Secret.describe(
  "The server's URL, or a ${secret:NAME} / ${env:NAME} reference. Only this URL is ever called.",
);

/** An MCP server's tools behind a /tool/call-tool proxy: each call opens the channel once. */
export const CallToolSystem = z
  .object({
    kind: z.literal('call-tool').describe('Tools run through a /tool/call-tool proxy, one channel per call.'),
    ...systemFields,
    url: serverUrl.describe('Base URL of the proxy (ws, wss, http or https); the gateway opens <url>/tool/call-tool.'),
    tools: z.array(ChannelTool).min(1, 'expected at least one tool').describe('The tools the proxy runs.'),
  })
  .strict();

/** OAuth client credentials against the MCP server's authorization server (RFC 6749 §4.4). */
const OAuthClientCredentials = z
  .object({
    type: z.literal('oauth_client_credentials'),
    token_url: z.url().optional().describe("Token endpoint; by default found from the server's metadata."),
    client_id: z.string().min(1),
    client_secret: Secret,
    scope: z.string().min(1).optional(),
  })
  .strict();

const mcpRevisions = ['2025-11-25', '2026-07-28'] as const;

/** A remote MCP server (Streamable HTTP): its tools are discovered and offered under the system's key. */
export const McpSystem = z
  .object({
    kind: z.literal('mcp').describe('A remote MCP server over Streamable HTTP.'),
    ...systemFields,
    credentials: z
      .union([Credentials, OAuthClientCredentials])
      .prefault({ type: 'none' })
      .describe("What the gateway presents to the server; never the agent's token."),
    url: serverUrl.describe('The MCP endpoint, e.g. https://tools.example.com/mcp.'),
    protocol: z
      .enum(['auto', ...mcpRevisions])
      .default('auto')
      .describe('The MCP revision spoken to the server; auto takes the newest both sides speak.'),
    max_concurrency: z
      .number()
      .int()
      .min(1)
      .max(256)
      .default(8)
      .describe('Calls to this server in progress at once; more wait for a free slot.'),
    refresh: Duration.prefault('5m').describe(
      "How often the tool list is fetched again (the server's own hints may shorten it).",
    ),
    access: systemFields.access.describe(
      "Tool name → read or write, overriding the server's readOnlyHint (a tool is a write unless it says it only reads).",
    ),
  })
  .strict();

export const System = z.discriminatedUnion('kind', [OpenApiSystem, CallToolSystem, McpSystem], {
  error: 'expected kind to be openapi (the default), call-tool or mcp',
});

const Person = z
  .object({
    id: identifier,
    name: z.string().min(1).optional(),
    password: Secret.describe('Local sign-in password.'),
    groups: z.array(identifier).default([]),
  })
  .strict();

const Agent = z
  .object({
    id: identifier.describe('The agent id, as policies and executions name it.'),
    token: Secret.optional().describe('The bearer token this agent presents to the local runtime.'),
    subject: z
      .string()
      .regex(/^\S{1,255}$/, 'expected the token subject as issued (1 to 255 characters, no spaces)')
      .optional()
      .describe(
        "Who this agent is in the deployed stack's tokens: its Cognito app client id, or the `sub` another issuer gives it.",
      ),
    groups: z.array(identifier).default([]).describe('Groups the agent belongs to (policies may test them).'),
    customer: z.string().min(1).optional().describe('The customer this agent acts for, if it is an outside agent.'),
  })
  .strict()
  .refine((agent) => agent.token !== undefined || agent.subject !== undefined, {
    message: 'give the agent a token (local), a subject (deployed), or both',
  });

export const GatewayConfig = z
  .object({
    $schema: z.string().optional(),
    settings: Settings.prefault({}),
    systems: z.array(System).default([]).describe('The systems whose operations become tools.'),
    agents: z
      .array(Agent)
      .default([])
      .describe(
        'Agents: who a token names (a local token, or a deployed token subject) and the id, groups and customer it acts as.',
      ),
    approvers: z.array(Person).default([]).describe('Staff who decide held calls (local sign-in identities).'),
    customers: z
      .array(Person)
      .default([])
      .describe('Customers who confirm calls made for them (local sign-in identities).'),
    policies: z.array(z.string().min(1)).default([]).describe('Cedar policy files, relative to this file.'),
  })
  .strict()
  .superRefine((config, context) => {
    const unique = (items: readonly { readonly [key: string]: unknown }[], field: string, list: string) => {
      const seen = new Map<unknown, number>();
      items.forEach((item, index) => {
        const value = item[field];
        const first = seen.get(value);
        if (first !== undefined) {
          context.addIssue({
            code: 'custom',
            path: [list, index, field],
            message: `${field} "${String(value)}" is already used by ${list}[${first}]`,
          });
        } else seen.set(value, index);
      });
    };
    unique(config.agents, 'id', 'agents');
    // A subject names one agent: a second entry would give its token another agent's rights.
    const agentOfSubject = new Map<string, string>();
    config.agents.forEach((agent, index) => {
      if (agent.subject === undefined) return;
      const first = agentOfSubject.get(agent.subject);
      if (first === undefined) agentOfSubject.set(agent.subject, agent.id);
      else {
        context.addIssue({
          code: 'custom',
          path: ['agents', index, 'subject'],
          message: `agents "${first}" and "${agent.id}" have the same subject; each agent needs its own`,
        });
      }
    });
    unique(config.systems, 'key', 'systems');
    unique(config.approvers, 'id', 'approvers');
    unique(config.customers, 'id', 'customers');
    config.systems.forEach((system, index) => {
      if (system.kind === 'call-tool') unique(system.tools, 'name', `systems[${index}].tools`);
      if (system.kind !== 'openapi') return;
      if (system.openapi === undefined && system.operations.length === 0) {
        context.addIssue({
          code: 'custom',
          path: ['systems', index],
          message: 'a system needs an openapi document or at least one operation',
        });
      }
      unique(system.operations, 'id', `systems[${index}].operations`);
    });
  });

export type GatewayConfig = z.output<typeof GatewayConfig>;

export type System = z.output<typeof System>;
export type OpenApiSystem = z.output<typeof OpenApiSystem>;
export type CallToolSystem = z.output<typeof CallToolSystem>;
export type McpSystem = z.output<typeof McpSystem>;
export type Credentials = z.output<typeof Credentials>;
export type AdminOperation = z.output<typeof AdminOperation>;
