// Configuration bundles as config:push writes them, built by the real compiler from configuration
// texts; and the same snapshot loaded both ways (files read locally, compiled bundle in AWS),
// compared on what agents meet: catalog, tools, policy decisions and input errors.
import { basename } from 'node:path';
import { expect } from 'vitest';
import { canonicalizeArguments } from '../../shared/arguments/canonicalize.js';
import { readArguments } from '../../shared/arguments/strict-json.js';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { isJsonObject, type ToolWithValidator } from '../../shared/catalog/tool.js';
import { formatProblem } from '../../shared/config/resolved.js';
import {
  type CompiledSnapshot,
  type ConfigBundle,
  decodeCompiledSnapshot,
  encodeCompiledSnapshot,
} from '../../shared/control-plane/bundle.js';
import { bundleOf, compileSnapshot } from '../../shared/control-plane/compile-snapshot.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import type { DiscoveredTools } from '../../shared/control-plane/snapshot.js';
import type { SnapshotFiles } from './snapshots.js';

export type CompiledBundle = ConfigBundle & { readonly compiled: Uint8Array };

/** The bundle config:push would write for a configuration text (references left unresolved). */
export const compiledBundleOf = async (
  text: string,
  options: SnapshotFiles & { readonly discovered?: DiscoveredTools } = {},
): Promise<CompiledBundle> => {
  const files = options.files ?? {};
  const file = options.file ?? 'test.yaml';
  const outcome = await compileSnapshot({
    text,
    file,
    environment: options.environment ?? {},
    options: { unsetVariables: 'placeholder' },
    files: { read: async (path) => (Object.hasOwn(files, path) ? files[path] : undefined) },
    ...(options.discovered === undefined ? {} : { discovered: options.discovered }),
  });
  if (!outcome.ok)
    throw new Error(`expected the configuration to compile:\n${outcome.problems.map(formatProblem).join('\n')}`);
  const bundle = bundleOf({ compilation: outcome, configFile: basename(file), mcpCatalogs: {}, pushedAt: new Date() });
  const { compiled } = bundle;
  if (compiled === undefined) throw new Error('config:push always compiles');
  return { ...bundle, compiled };
};

/** The compiled snapshot a bundle carries. */
export const compiledOf = (bundle: CompiledBundle): CompiledSnapshot => {
  const decoded = decodeCompiledSnapshot(bundle.compiled);
  if (!decoded.ok) throw new Error(decoded.reason);
  return decoded.compiled;
};

/** The bundle with its compiled snapshot changed, as anyone who may write the table could. */
export const withCompiled = (
  bundle: CompiledBundle,
  change: (compiled: CompiledSnapshot) => CompiledSnapshot,
): CompiledBundle => ({ ...bundle, compiled: encodeCompiledSnapshot(change(compiledOf(bundle))) });

const toolData = ({ validate: _validate, ...tool }: ToolWithValidator) => tool;

/** Argument texts that break a tool's schema in many ways: every property given every kind of value. */
const hostileArguments = (tool: ToolWithValidator): string[] => {
  const properties = isJsonObject(tool.inputSchema.properties) ? Object.keys(tool.inputSchema.properties) : [];
  const values = [
    'null',
    '0',
    '-1',
    '1.5',
    '99999999999999999999',
    '"x"',
    '""',
    '" 1500.25 "',
    '"not-a-date"',
    JSON.stringify('long '.repeat(5000)),
    'true',
    '[]',
    '[1,"a",[]]',
    '{"a":{"b":1}}',
  ];
  return [
    '{}',
    '[]',
    '{"unknown_field":1,"__proto__":2}',
    JSON.stringify(Object.fromEntries(properties.map((name) => [name, 'x']))),
    ...properties.flatMap((name) => values.map((value) => `{${JSON.stringify(name)}:${value}}`)),
  ];
};

/** Calls meant to reach each kind of decision of the demo's policies. */
const demoCalls: Readonly<Record<string, readonly string[]>> = {
  'erp.purchase_orders.create': [
    '{"vendor_id":"V-100","amount":"250","currency":"EUR"}',
    '{"vendor_id":"V-100","amount":"25000","currency":"EUR"}',
    '{"vendor_id":"V-100","amount":"50000","currency":"EUR"}',
    '{"vendor_id":"V-100","amount":"-5","currency":"EUR"}',
  ],
  'erp.refunds.create': [
    '{"order_reference":"PO-1","amount":"100","currency":"EUR"}',
    '{"order_reference":"PO-1","amount":"900","currency":"EUR"}',
  ],
};

export interface Compared {
  /** The input-error codes the calls met, and the decisions they reached, to show the comparison held something. */
  readonly codes: ReadonlySet<string>;
  readonly decisions: ReadonlySet<string>;
}

/** Expects the snapshot loaded from the compiled bundle to answer exactly as the one read from files. */
export const expectSameAnswers = (aws: GatewaySnapshot, local: GatewaySnapshot): Compared => {
  expect(aws.version).toBe(local.version);
  expect(aws.config).toEqual(local.config);
  expect(aws.warnings).toEqual(local.warnings);
  expect(aws.catalog.tools.map(toolData)).toEqual(local.catalog.tools.map(toolData));
  expect(aws.catalog.disabled.map(toolData)).toEqual(local.catalog.disabled.map(toolData));
  expect([...aws.catalog.byName.keys()]).toEqual([...local.catalog.byName.keys()]);
  const agents: AgentIdentity[] = local.config.agents.map((agent) => ({
    id: agent.id,
    groups: agent.groups,
    customerId: agent.customer,
  }));
  const codes = new Set<string>();
  const decisions = new Set<string>();
  for (const tool of [...local.catalog.tools, ...local.catalog.disabled]) {
    const awsTool =
      aws.catalog.byName.get(tool.name) ?? aws.catalog.disabled.find((candidate) => candidate.name === tool.name);
    if (awsTool === undefined) throw new Error(`${tool.name} is missing from the compiled snapshot`);
    for (const agent of agents) expect(aws.policy.isListed(agent, awsTool)).toBe(local.policy.isListed(agent, tool));
    for (const text of [...hostileArguments(tool), ...(demoCalls[tool.name] ?? [])]) {
      const read = readArguments(text, []);
      if (read === null) throw new Error(`not JSON: ${text}`);
      const expected = canonicalizeArguments(tool, read);
      expect(canonicalizeArguments(awsTool, read), `${tool.name} ${text.slice(0, 80)}`).toEqual(expected);
      if (!expected.ok) {
        for (const found of expected.errors) codes.add(found.code);
        continue;
      }
      for (const agent of agents) {
        const decision = local.policy.decide(agent, tool, expected.arguments.value);
        expect(aws.policy.decide(agent, awsTool, expected.arguments.value)).toEqual(decision);
        decisions.add(decision.kind === 'allow' ? `allow ${JSON.stringify(decision.step)}` : `deny ${decision.reason}`);
      }
    }
  }
  return { codes, decisions };
};
