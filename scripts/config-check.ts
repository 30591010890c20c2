// `npm run config:check [file]`: validates a gateway configuration (schema, OpenAPI documents,
// tool names, references) and says what is wrong and where. Exit 0 when valid, 1 when not. MCP
// servers are asked for their tools (with this environment's addresses and credentials), so that
// policies are checked against what they offer; --list-tools shows what each one offers. A tool
// changed since the local runtime pinned it (in the data folder) is shown as held, with how to accept.
// `${secret:…}` references are read as the local runtime reads them, or, with --aws, from the
// deployed stack's Secrets Manager prefix: each missing secret or field is reported, no value printed.
import { readFile } from 'node:fs/promises';
import { compileSnapshotFromFile } from '../infra/local/config-files.js';
import { localSecrets } from '../infra/local/local-secrets.js';
import { McpPinFiles, mcpCatalogFolder } from '../infra/local/mcp-catalog-files.js';
import { discoverMcpTools, driftLines, type McpDiscovery } from '../infra/local/mcp-discovery.js';
import { defaultConfigFile, defaultDataDir } from '../infra/local/options.js';
import { defaultSecretsManagerClient, SecretsManagerSecrets } from '../shared/adapters/secrets-manager-secrets.js';
import { unlistedSubjectNote } from '../shared/auth/agent.js';
import { directCallTimeoutWarnings, policyWarnings } from '../shared/config/checks.js';
import { referencePaths } from '../shared/config/resolve.js';
import { type ConfigProblem, formatPath, formatProblem } from '../shared/config/resolved.js';
import { storedSecretReference } from '../shared/config/schema.js';
import { type SecretLookup, secretLookupOf, secretValue, storedSecretNames } from '../shared/config/stored-secrets.js';
import { readYaml } from '../shared/config/yaml-lines.js';
import type { GatewaySnapshot } from '../shared/control-plane/gateway-snapshot.js';
import { errorText } from '../shared/errors.js';
import { readCommandLine } from './command-line.js';

const usage = `Usage: npm run config:check -- [file] [--strict-env] [--list-tools] [--offline]
                                            [--data-dir <folder>] [--aws --stack <name>]

  file           the configuration (default examples/gateway.config.yaml)
  --strict-env   treat \${env:NAME} and \${secret:NAME} references unset here as errors (by
                 default they are noted: the gateway may run where they are set)
  --data-dir     where \${secret:NAME} is read locally (default .gateway-data: its secrets/
                 folder), after the GATEWAY_SECRET_<NAME> variables, and where the local
                 runtime pinned MCP servers' tools (changes since are shown)
  --aws          read \${secret:NAME} from AWS Secrets Manager as the deployed stack does
                 (approval-gateway/<stack>/NAME, with this shell's AWS credentials and region)
                 and report each one missing; no value is ever printed
  --stack        the deployed stack's name (with --aws; default ApprovalGateway)
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

const options = {
  'strict-env': { type: 'boolean' },
  'list-tools': { type: 'boolean' },
  offline: { type: 'boolean' },
  'data-dir': { type: 'string' },
  aws: { type: 'boolean' },
  stack: { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** Why the configuration is not valid, problem by problem. */
const reportInvalid = (file: string, problems: readonly ConfigProblem[]): void => {
  process.stderr.write(`${file} is not valid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n`);
  for (const problem of problems) process.stderr.write(`  ${formatProblem(problem)}\n`);
};

/** What a valid configuration makes: its tools, its people and policies, then what it should know. */
const reportValid = (
  file: string,
  snapshot: GatewaySnapshot,
  discovery: McpDiscovery | null,
  listTools: boolean,
): void => {
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
  process.stdout.write(`  note: ${unlistedSubjectNote(snapshot.config.agents)}\n`);
  if (discovery !== null) reportDiscovery(discovery, snapshot, listTools);
  for (const warning of snapshot.warnings) process.stdout.write(`  note: ${formatProblem(warning)}\n`);
  for (const warning of policyWarnings(snapshot, file)) process.stdout.write(`  warning: ${formatProblem(warning)}\n`);
  for (const warning of directCallTimeoutWarnings(snapshot, file))
    process.stdout.write(`  warning: ${formatProblem(warning)}\n`);
};

/** How asking the MCP servers went, and (with --list-tools) what each one offers. */
const reportDiscovery = (discovery: McpDiscovery, snapshot: GatewaySnapshot, listTools: boolean): void => {
  for (const [key, why] of discovery.failures)
    process.stdout.write(`  note: the MCP server of ${key} was not asked or did not answer: ${why}\n`);
  for (const [key, why] of discovery.truncated)
    process.stdout.write(`  note: the tool list of ${key} was cut short: ${why}\n`);
  for (const line of driftLines(discovery)) process.stdout.write(`${line}\n`);
  if (listTools) {
    process.stdout.write('  MCP servers:\n');
    for (const line of mcpToolLines(discovery, snapshot)) process.stdout.write(`${line}\n`);
  }
};

const run = async (): Promise<number> => {
  const parsed = readCommandLine(options, usage, { positionals: true });
  if ('exit' in parsed) return parsed.exit;
  if (parsed.positionals.length > 1) {
    process.stdout.write(usage);
    return 2;
  }
  const file = parsed.positionals[0] ?? defaultConfigFile;
  const dataDir = parsed.values['data-dir'] ?? defaultDataDir;
  const read: DeployedSecrets =
    parsed.values.aws === true
      ? await deployedSecrets(file, parsed.values.stack ?? 'ApprovalGateway')
      : { ok: true, secrets: localSecrets(dataDir, process.env), missing: [] };
  if (!read.ok) {
    process.stderr.write(`${read.message}\n`);
    return 2;
  }
  const unset: string[] = [];
  const pins = new McpPinFiles(mcpCatalogFolder(dataDir));
  const discovery = parsed.values.offline === true ? null : await discoverMcpTools(file, process.env, pins);
  // Compiled as config:push compiles it, so that a configuration that checks also pushes.
  const outcome = await compileSnapshotFromFile(
    file,
    process.env,
    {
      unsetVariables: parsed.values['strict-env'] ? 'problem' : 'placeholder',
      onUnset: (reference, path) => unset.push(`${path}: ${reference} is not set here`),
      secrets: read.secrets,
    },
    discovery?.offered,
  );
  if (!outcome.ok) {
    reportInvalid(file, outcome.problems);
    return 1;
  }
  reportValid(file, outcome.snapshot, discovery, parsed.values['list-tools'] === true);
  // With --aws, the secrets are reported below (as missing), not as unset here.
  for (const note of unset.filter((text) => parsed.values.aws !== true || !text.includes('${secret:')))
    process.stdout.write(`  note: ${note}\n`);
  if (read.missing.length > 0) {
    process.stderr.write(
      `${read.missing.length} secret reference${read.missing.length === 1 ? '' : 's'} cannot be read in AWS:\n`,
    );
    for (const missing of read.missing) process.stderr.write(`  ${missing}\n`);
    return 1;
  }
  return 0;
};

type DeployedSecrets = { ok: true; secrets: SecretLookup; missing: string[] } | { ok: false; message: string };

/** The secrets the file names, read from the stack's prefix; each reference that cannot be read, by path. */
const deployedSecrets = async (file: string, stack: string): Promise<DeployedSecrets> => {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  const read = text === undefined ? null : readYaml(text);
  // A file that cannot be read names no secret here; the check below says what is wrong with it.
  const data = read?.ok === true ? read.data : null;
  const source = new SecretsManagerSecrets(defaultSecretsManagerClient, `approval-gateway/${stack}/`, 0);
  let values: Map<string, string | undefined>;
  try {
    values = await source.read(storedSecretNames(data), true);
  } catch (error) {
    const reason = errorText(error);
    return {
      ok: false,
      message: `AWS Secrets Manager could not be read (${reason}); check this shell's AWS credentials and region.`,
    };
  }
  const secrets = secretLookupOf(values, (name) => source.where(name));
  const missing = referencePaths(data).flatMap((path) => {
    let value: unknown = data;
    for (const key of path) value = value !== null && typeof value === 'object' ? Reflect.get(value, key) : undefined;
    const match = typeof value === 'string' ? storedSecretReference.exec(value) : null;
    if (match?.[1] === undefined) return [];
    const outcome = secretValue(secrets, match[1], match[2] ?? null);
    return outcome.ok ? [] : [`${formatPath(path)}: ${outcome.reason}`];
  });
  return { ok: true, secrets, missing };
};

process.exitCode = await run();
