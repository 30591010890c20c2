// `npm run config:check [file]`: validates a gateway configuration (schema, OpenAPI documents,
// tool names, references) and says what is wrong and where. Exit 0 when valid, 1 when not. MCP
// servers are asked for their tools (with this environment's addresses and credentials), so that
// policies are checked against what they offer; --list-tools shows what each one offers.
import { parseArgs } from 'node:util';
import { compileSnapshotFromFile } from '../infra/local/config-files.js';
import { discoverMcpTools, type McpDiscovery } from '../infra/local/mcp-discovery.js';
import { directCallTimeoutWarnings, policyWarnings } from '../shared/config/checks.js';
import { formatProblem } from '../shared/config/resolved.js';
import type { GatewaySnapshot } from '../shared/control-plane/gateway-snapshot.js';

const usage = `Usage: npm run config:check -- [file] [--strict-env] [--list-tools] [--offline]

  file           the configuration (default examples/gateway.config.yaml)
  --strict-env   treat \${env:NAME} references unset here as errors (by default they are
                 noted: the gateway may run where they are set)
  --list-tools   show what each MCP server offers: every tool, read or write, turned off or
                 left out (and why)
  --offline      do not ask MCP servers for their tools (their tools stay unknown)
`;

/** What each MCP server offers, tool by tool. */
const mcpToolLines = (discovery: McpDiscovery, snapshot: GatewaySnapshot): string[] => {
  const lines: string[] = [];
  const turnedOff = new Set(snapshot.catalog.disabled.map((tool) => tool.name));
  const built = [...snapshot.catalog.tools, ...snapshot.catalog.disabled];
  for (const system of discovery.systems) {
    const catalog = discovery.catalogs.get(system.key);
    if (catalog === undefined) continue;
    lines.push(`    ${system.key}: ${catalog.specs.length + catalog.leftOut.length} tools listed`);
    for (const spec of catalog.specs) {
      const tool = built.find((found) => found.systemKey === system.key && found.operationId === spec.name);
      if (tool === undefined) continue;
      lines.push(`      ${tool.name}  [${tool.access}]${turnedOff.has(tool.name) ? ' (turned off)' : ''}`);
    }
    for (const left of catalog.leftOut) lines.push(`      left out: ${left.name}: ${left.reason}`);
  }
  return lines;
};

const run = async (): Promise<number> => {
  let parsed: ReturnType<
    typeof parseArgs<{
      options: {
        'strict-env': { type: 'boolean' };
        'list-tools': { type: 'boolean' };
        offline: { type: 'boolean' };
        help: { type: 'boolean' };
      };
      allowPositionals: true;
    }>
  >;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      options: {
        'strict-env': { type: 'boolean' },
        'list-tools': { type: 'boolean' },
        offline: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      allowPositionals: true,
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (parsed.values.help || parsed.positionals.length > 1) {
    process.stdout.write(usage);
    return parsed.values.help ? 0 : 2;
  }
  const file = parsed.positionals[0] ?? 'examples/gateway.config.yaml';
  const unset: string[] = [];
  const discovery = parsed.values.offline === true ? null : await discoverMcpTools(file, process.env);
  // Compiled as config:push compiles it, so that a configuration that checks also pushes.
  const outcome = await compileSnapshotFromFile(
    file,
    process.env,
    {
      unsetVariables: parsed.values['strict-env'] ? 'problem' : 'placeholder',
      onUnset: (name, path) => unset.push(`${path}: \${env:${name}} is not set here`),
    },
    discovery === null ? undefined : new Map([...discovery.catalogs].map(([key, catalog]) => [key, catalog.specs])),
  );
  if (!outcome.ok) {
    process.stderr.write(
      `${file} is not valid (${outcome.problems.length} problem${outcome.problems.length === 1 ? '' : 's'}):\n`,
    );
    for (const problem of outcome.problems) process.stderr.write(`  ${formatProblem(problem)}\n`);
    return 1;
  }
  const { snapshot } = outcome;
  const bySystem = new Map<string, number>();
  for (const tool of snapshot.catalog.tools) bySystem.set(tool.systemKey, (bySystem.get(tool.systemKey) ?? 0) + 1);
  process.stdout.write(`${file} is valid (version ${snapshot.version}).\n`);
  process.stdout.write(
    `  ${snapshot.catalog.tools.length} tools${bySystem.size > 0 ? ` (${[...bySystem].map(([key, count]) => `${key}: ${count}`).join(', ')})` : ''}\n`,
  );
  for (const tool of snapshot.catalog.tools) process.stdout.write(`    ${tool.name}  [${tool.access}]\n`);
  process.stdout.write(
    `  ${snapshot.config.agents.length} agents, ${snapshot.config.approvers.length} approvers, ${snapshot.config.customers.length} customers, ${snapshot.config.policies.length} policy files\n`,
  );
  if (discovery !== null) {
    for (const [key, why] of discovery.failures)
      process.stdout.write(`  note: the MCP server of ${key} was not asked or did not answer: ${why}\n`);
    for (const [key, why] of discovery.truncated)
      process.stdout.write(`  note: the tool list of ${key} was cut short: ${why}\n`);
    if (parsed.values['list-tools'] === true) {
      process.stdout.write('  MCP servers:\n');
      for (const line of mcpToolLines(discovery, snapshot)) process.stdout.write(`${line}\n`);
    }
  }
  for (const warning of snapshot.warnings) process.stdout.write(`  note: ${formatProblem(warning)}\n`);
  for (const warning of policyWarnings(snapshot, file)) process.stdout.write(`  warning: ${formatProblem(warning)}\n`);
  for (const warning of directCallTimeoutWarnings(snapshot, file))
    process.stdout.write(`  warning: ${formatProblem(warning)}\n`);
  for (const note of unset) process.stdout.write(`  note: ${note}\n`);
  return 0;
};

process.exitCode = await run();
