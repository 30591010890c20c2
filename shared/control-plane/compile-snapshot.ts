// What config:push writes for the functions: the snapshot read from the files (YAML, OpenAPI,
// policies) and built here, in plain data, with each tool's validator generated ahead of time as
// ajv's standalone code, so that nothing on the functions' request path parses or compiles.
// The snapshot is also assembled here, with the generated validators, so that a push fails on
// what the functions would refuse.
import { validatorCode } from '../arguments/compile-validator.js';
import { instantiateValidator } from '../arguments/standalone-validators.js';
import { listedIdentity } from '../auth/agent.js';
import { type CatalogTool, isJsonObject, type ToolWithValidator } from '../catalog/tool.js';
import { referencePaths } from '../config/resolve.js';
import { type ConfigProblem, formatPath } from '../config/resolved.js';
import { errorText } from '../errors.js';
import type { CheckedPolicySet } from '../policy/policy-set.js';
import {
  type BundledMcpCatalog,
  type CompiledSnapshot,
  type CompiledTool,
  type ConfigBundle,
  compiledSnapshotFormatOf,
  encodeCompiledSnapshot,
} from './bundle.js';
import { assembleSnapshot, type GatewaySnapshot } from './gateway-snapshot.js';
import { type ReadSnapshot, readSnapshot, type SnapshotInput } from './snapshot.js';

export type SnapshotCompilation =
  | { ok: true; snapshot: GatewaySnapshot; compiled: CompiledSnapshot }
  | { ok: false; problems: ConfigProblem[] };

/** A tool as the compiled snapshot carries it: its data, named field by field, and its validator. */
const compiledTool = (tool: CatalogTool, validator: string): CompiledTool => ({
  name: tool.name,
  systemKey: tool.systemKey,
  operationId: tool.operationId,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.inputSchema,
  annotations: tool.annotations,
  access: tool.access,
  target: tool.target,
  responseSchema: tool.responseSchema,
  validator,
});

/** Each tool with its validator's code and the validator that code makes, or the problem. */
const withGeneratedValidators = (
  read: ReadSnapshot,
  tools: readonly CatalogTool[],
  problems: ConfigProblem[],
): { compiled: CompiledTool[]; instantiated: ToolWithValidator[] } => {
  const compiled: CompiledTool[] = [];
  const instantiated: ToolWithValidator[] = [];
  for (const tool of tools) {
    let code: string;
    try {
      code = validatorCode(tool.inputSchema);
    } catch (error) {
      const index = read.config.systems.findIndex((system) => system.key === tool.systemKey);
      const path = index === -1 ? [] : ['systems', index];
      problems.push({
        file: read.file,
        path: formatPath(path),
        line: read.lineAt(path),
        message: `the input schema of ${tool.name} cannot be compiled (${errorText(error)})`,
      });
      continue;
    }
    const instance = instantiateValidator(code);
    if (!instance.ok) throw new Error(`the validator generated for ${tool.name} does not load: ${instance.reason}`);
    compiled.push(compiledTool(tool, code));
    instantiated.push({ ...tool, validate: instance.validate });
  }
  return { compiled, instantiated };
};

/** The checked policies as the compiled snapshot's plain data. */
const policySetData = (checked: CheckedPolicySet): CompiledSnapshot['policy_set'] => ({
  texts: { ...checked.texts },
  policies: checked.policies.map((policy) => ({ ...policy, approvals: [...policy.approvals] })),
  argumentsRead: checked.argumentsRead === 'all' ? 'all' : [...checked.argumentsRead],
});

export const compileSnapshot = async (input: SnapshotInput): Promise<SnapshotCompilation> => {
  const outcome = await readSnapshot(input);
  if (!outcome.ok) return outcome;
  const { read } = outcome;
  const problems: ConfigProblem[] = [];
  const tools = withGeneratedValidators(read, read.tools, problems);
  const disabled = withGeneratedValidators(read, read.disabled, problems);
  if (problems.length > 0) return { ok: false, problems };
  const assembled = assembleSnapshot({ ...read, tools: tools.instantiated, disabled: disabled.instantiated });
  if (!assembled.ok) return assembled;
  if (!isJsonObject(read.data)) throw new Error('a configuration that loaded is an object');
  const referenceLines: Record<string, number> = {};
  for (const path of referencePaths(read.data)) {
    const line = read.lineAt(path);
    if (line !== null) referenceLines[formatPath(path)] = line;
  }
  return {
    ok: true,
    snapshot: assembled.snapshot,
    compiled: {
      format: compiledSnapshotFormatOf(assembled.snapshot.policy.policies),
      version: read.version,
      config: read.data,
      reference_lines: referenceLines,
      tools: tools.compiled,
      disabled: disabled.compiled,
      policies: read.policies.map((policy) => ({ path: policy.path, text: policy.text })),
      policy_set: policySetData(assembled.snapshot.policy.checked),
      known_decisions: assembled.snapshot.policy.knownDecisions(
        assembled.snapshot.config.agents.map(listedIdentity),
        assembled.snapshot.catalog.tools,
      ),
      warnings: read.warnings.map((warning) => ({ ...warning })),
    },
  };
};

/** The bundle config:push writes: the raw files people read, and the compiled snapshot the functions load. */
export const bundleOf = (input: {
  readonly compilation: Extract<SnapshotCompilation, { ok: true }>;
  /** The configuration file's name, for messages. */
  readonly configFile: string;
  readonly mcpCatalogs: Readonly<Record<string, BundledMcpCatalog>>;
  readonly pushedAt: Date;
}): ConfigBundle => {
  const { snapshot, compiled } = input.compilation;
  return {
    version: snapshot.version,
    config_file: input.configFile,
    config_text: snapshot.source,
    files: Object.fromEntries(snapshot.files),
    pushed_at: input.pushedAt.toISOString(),
    ...(Object.keys(input.mcpCatalogs).length > 0 ? { mcp_catalogs: { ...input.mcpCatalogs } } : {}),
    compiled: encodeCompiledSnapshot(compiled),
  };
};
