// Reading a configuration snapshot from the configuration text and the files it names (OpenAPI
// documents, policies), as the local runtime does and as config:push does before compiling it.
// The deployed functions never read files: they load what config:push compiled.
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { compileValidator } from '../arguments/compile-validator.js';
import { buildSystemTools, type SystemTools } from '../catalog/build.js';
import { loadOpenApiDocument } from '../catalog/openapi-document.js';
import { type OperationSpec, operationsFromAdmin, operationsFromOpenApi } from '../catalog/operations.js';
import type { CatalogTool, ToolWithValidator } from '../catalog/tool.js';
import { buildToolServerTools, type ToolServerToolSpec } from '../catalog/tool-server-tools.js';
import { loadConfigText } from '../config/load.js';
import type { LoadOptions } from '../config/resolve.js';
import {
  type ConfigProblem,
  configProblemAt,
  type ResolvedCallToolSystem,
  type ResolvedConfig,
  type ResolvedMcpSystem,
  type ResolvedOpenApiSystem,
} from '../config/resolved.js';
import { type PolicyFile, splitPolicies } from '../policy/policy-set.js';
import { assembleSnapshot, type SnapshotLoad, type SnapshotParts } from './gateway-snapshot.js';

export type { GatewaySnapshot } from './gateway-snapshot.js';

/** Reads a file the configuration names, by its path relative to the configuration file. */
export interface ConfigFiles {
  read(relativePath: string): Promise<string | undefined>;
}

/** Paths the configuration names are relative to it and may not leave its folder tree. */
const normalizeConfigPath = (relativePath: string): string | null => {
  const normalized = posix.normalize(relativePath.replaceAll('\\', '/'));
  if (normalized.startsWith('../') || normalized === '..' || posix.isAbsolute(normalized)) return null;
  return normalized;
};

/** The tools of a call-tool system, as its configuration describes them. */
const channelToolSpecs = (system: ResolvedCallToolSystem): ToolServerToolSpec[] =>
  system.tools.map((tool, index) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input_schema,
    outputSchema: tool.output_schema,
    access: tool.access,
    configPath: ['tools', index],
    source: `systems[${system.key}].tools[${index}]`,
  }));

/** The tools each MCP system's server last listed, by system key (absent: not discovered yet). */
export type DiscoveredTools = ReadonlyMap<string, readonly ToolServerToolSpec[]>;

/** What discovery found: each server's tools, and the systems whose catalog is too old to offer. */
interface McpDiscovered {
  readonly discovered?: DiscoveredTools | undefined;
  readonly withdrawn?: ReadonlySet<string> | undefined;
}

export interface SnapshotInput {
  text: string;
  file: string;
  environment: Readonly<Record<string, string | undefined>>;
  files: ConfigFiles;
  options?: LoadOptions;
  /** What MCP systems' servers offer (discovered by the caller: locally at load, in AWS by config:push). */
  discovered?: DiscoveredTools;
  /** MCP systems whose catalog is too old to offer: their tools are declared to policies, offered to nobody. */
  withdrawn?: ReadonlySet<string>;
  /**
   * Discovers what MCP systems' servers offer once the configuration is read (in place of
   * `discovered` and `withdrawn`), so a caller that asks the servers need not read the file twice.
   */
  discover?: (config: ResolvedConfig) => Promise<McpDiscovered>;
}

/** What the files make, before validators and policies: the catalog's tools as data. */
export interface ReadSnapshot extends Omit<SnapshotParts, 'tools' | 'disabled'> {
  readonly tools: readonly CatalogTool[];
  readonly disabled: readonly CatalogTool[];
  /** The configuration file's content as data, references as written. */
  readonly data: unknown;
  /** The line of a path in the configuration file (null when absent). */
  readonly lineAt: (path: readonly PropertyKey[]) => number | null;
}

export type SnapshotRead = { ok: true; read: ReadSnapshot } | { ok: false; problems: ConfigProblem[] };

/** One reading of the configuration's files: what was read, and the problems and warnings found, each at its line. */
class Reading {
  readonly problems: ConfigProblem[] = [];
  readonly warnings: ConfigProblem[] = [];
  /** Each file read, by its normalized path: read once, and part of the version. */
  readonly read = new Map<string, string>();

  constructor(
    private readonly input: SnapshotInput,
    private readonly lineAt: (path: readonly PropertyKey[]) => number | null,
  ) {}

  at(path: readonly PropertyKey[], message: string): ConfigProblem {
    return configProblemAt(this.input.file, this.lineAt, path, message);
  }

  /** A file the configuration names at `path`, or undefined with the problem noted. */
  async file(relativePath: string, path: readonly PropertyKey[]): Promise<string | undefined> {
    const normalized = normalizeConfigPath(relativePath);
    if (normalized === null) {
      this.problems.push(this.at(path, `"${relativePath}" must be inside the configuration's folder`));
      return undefined;
    }
    const text = this.read.get(normalized) ?? (await this.input.files.read(normalized));
    if (text === undefined) {
      this.problems.push(this.at(path, `the file ${relativePath} cannot be read`));
      return undefined;
    }
    this.read.set(normalized, text);
    return text;
  }
}

/** An OpenAPI system's tools: those of its document (when it names one) and its configured operations. */
const openApiTools = async (reading: Reading, system: ResolvedOpenApiSystem, index: number): Promise<SystemTools> => {
  const operations: OperationSpec[] = [];
  if (system.openapi !== undefined) {
    const path = ['systems', index, 'openapi'];
    const text = await reading.file(system.openapi, path);
    if (text !== undefined) {
      const document = await loadOpenApiDocument(text);
      if (document.ok) operations.push(...operationsFromOpenApi(document.document));
      else
        for (const message of document.messages)
          reading.problems.push(reading.at(path, `${system.openapi}: ${message}`));
    }
  }
  operations.push(...operationsFromAdmin(system.operations, index));
  return buildSystemTools(system, index, operations);
};

/** An MCP system's tools as its server last listed them (withdrawn ones disabled), or null when not known yet. */
const mcpTools = (
  reading: Reading,
  system: ResolvedMcpSystem,
  index: number,
  { discovered, withdrawn }: McpDiscovered,
): SystemTools | null => {
  const where = ['systems', index, 'url'];
  const specs = discovered?.get(system.key);
  if (specs === undefined) {
    reading.warnings.push(
      reading.at(where, `the tools of ${system.key} are not known yet: its MCP server has not answered tools/list`),
    );
    return null;
  }
  const built = buildToolServerTools(system, index, specs, { unusable: 'warning' });
  if (withdrawn?.has(system.key) !== true) return built;
  reading.warnings.push(
    reading.at(
      where,
      `the tools of ${system.key} are withdrawn: its MCP server has not answered tools/list within allowed_staleness`,
    ),
  );
  return { ...built, tools: [], disabled: [...built.disabled, ...built.tools] };
};

/** The catalog's tools, system by system, with what building them found. */
const catalogTools = async (
  reading: Reading,
  config: ResolvedConfig,
  found: McpDiscovered,
): Promise<Pick<ReadSnapshot, 'tools' | 'disabled'>> => {
  const tools: CatalogTool[] = [];
  const disabled: CatalogTool[] = [];
  for (const [index, system] of config.systems.entries()) {
    const built =
      system.kind === 'openapi'
        ? await openApiTools(reading, system, index)
        : system.kind === 'call-tool'
          ? buildToolServerTools(system, index, channelToolSpecs(system), { unusable: 'problem' })
          : mcpTools(reading, system, index, found);
    if (built === null) continue;
    tools.push(...built.tools);
    disabled.push(...built.disabled);
    for (const problem of built.problems) reading.problems.push(reading.at(problem.path, problem.message));
    for (const warning of built.warnings) reading.warnings.push(reading.at(warning.path, warning.message));
  }
  return { tools, disabled };
};

/** The policy files, each read and holding at least one policy. */
const policyFilesOf = async (reading: Reading, config: ResolvedConfig): Promise<PolicyFile[]> => {
  const policyFiles: PolicyFile[] = [];
  for (const [index, policy] of config.policies.entries()) {
    const text = await reading.file(policy, ['policies', index]);
    if (text === undefined) continue;
    // An empty policy file permits nothing and would take every tool away: most likely one caught
    // half-written, so it is refused (`policies: []` says "nothing runs" on purpose).
    if (splitPolicies({ path: policy, text }).length === 0) {
      reading.problems.push(reading.at(['policies', index], `the policy file ${policy} holds no policy`));
      continue;
    }
    policyFiles.push({ path: policy, text });
  }
  return policyFiles;
};

/** The configuration's version: a hash of its text, the files it names and what its MCP servers offer. */
const contentVersion = (
  text: string,
  read: ReadonlyMap<string, string>,
  { discovered, withdrawn }: McpDiscovered,
): string => {
  const hash = createHash('sha256').update(text);
  for (const [path, content] of [...read].sort(([left], [right]) => left.localeCompare(right))) {
    hash.update(`\0${path}\0${content}`);
  }
  // What the MCP servers offer is part of the configuration's content.
  for (const [key, specs] of [...(discovered ?? [])].sort(([left], [right]) => left.localeCompare(right))) {
    hash.update(`\0mcp:${key}\0${withdrawn?.has(key) === true ? 'withdrawn' : 'offered'}\0${JSON.stringify(specs)}`);
  }
  return hash.digest('hex').slice(0, 16);
};

/** Reads the configuration and every file it names, and builds the catalog's tools. */
export const readSnapshot = async (input: SnapshotInput): Promise<SnapshotRead> => {
  const loaded = loadConfigText(input.text, input.file, input.environment, input.options);
  if (!loaded.ok) return loaded;
  const { config, lineAt, data } = loaded;
  const found: McpDiscovered =
    input.discover === undefined
      ? { discovered: input.discovered, withdrawn: input.withdrawn }
      : await input.discover(config);
  const reading = new Reading(input, lineAt);
  const { tools, disabled } = await catalogTools(reading, config, found);
  const policies = await policyFilesOf(reading, config);
  if (reading.problems.length > 0) return { ok: false, problems: reading.problems };
  return {
    ok: true,
    read: {
      version: contentVersion(input.text, reading.read, found),
      file: input.file,
      config,
      tools,
      disabled,
      policies,
      warnings: reading.warnings,
      source: input.text,
      files: reading.read,
      data,
      lineAt,
    },
  };
};

/** A tool with its validator, compiled on its first call. */
const withCompiledValidator = (tool: CatalogTool): ToolWithValidator => ({
  ...tool,
  validate: compileValidator(tool.inputSchema),
});

/** The snapshot as the local runtime loads it: files read, validators compiled as they are used. */
export const loadSnapshot = async (input: SnapshotInput): Promise<SnapshotLoad> => {
  const outcome = await readSnapshot(input);
  if (!outcome.ok) return outcome;
  const { read } = outcome;
  return assembleSnapshot({
    ...read,
    tools: read.tools.map(withCompiledValidator),
    disabled: read.disabled.map(withCompiledValidator),
  });
};
