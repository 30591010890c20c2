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
  formatPath,
  type ResolvedCallToolSystem,
  type ResolvedConfig,
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
export interface McpDiscovered {
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

/** Reads the configuration and every file it names, and builds the catalog's tools. */
export const readSnapshot = async (input: SnapshotInput): Promise<SnapshotRead> => {
  const loaded = loadConfigText(input.text, input.file, input.environment, input.options);
  if (!loaded.ok) return loaded;
  const { config, lineAt, data } = loaded;
  const { discovered, withdrawn } =
    input.discover === undefined
      ? { discovered: input.discovered, withdrawn: input.withdrawn }
      : await input.discover(config);
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  const problem = (path: readonly PropertyKey[], message: string): ConfigProblem => ({
    file: input.file,
    path: formatPath(path),
    line: lineAt(path),
    message,
  });
  const read = new Map<string, string>();
  const readFile = async (relativePath: string, path: readonly PropertyKey[]): Promise<string | undefined> => {
    const normalized = normalizeConfigPath(relativePath);
    if (normalized === null) {
      problems.push(problem(path, `"${relativePath}" must be inside the configuration's folder`));
      return undefined;
    }
    const text = read.get(normalized) ?? (await input.files.read(normalized));
    if (text === undefined) {
      problems.push(problem(path, `the file ${relativePath} cannot be read`));
      return undefined;
    }
    read.set(normalized, text);
    return text;
  };

  const tools: CatalogTool[] = [];
  const disabled: CatalogTool[] = [];
  const openApiTools = async (system: ResolvedOpenApiSystem, index: number): Promise<SystemTools> => {
    const operations: OperationSpec[] = [];
    if (system.openapi !== undefined) {
      const path = ['systems', index, 'openapi'];
      const text = await readFile(system.openapi, path);
      if (text !== undefined) {
        const document = await loadOpenApiDocument(text);
        if (document.ok) operations.push(...operationsFromOpenApi(document.document));
        else for (const message of document.messages) problems.push(problem(path, `${system.openapi}: ${message}`));
      }
    }
    operations.push(...operationsFromAdmin(system.operations, index));
    return buildSystemTools(system, index, operations);
  };
  for (const [index, system] of config.systems.entries()) {
    let built: SystemTools;
    if (system.kind === 'openapi') built = await openApiTools(system, index);
    else if (system.kind === 'call-tool') {
      built = buildToolServerTools(system, index, channelToolSpecs(system), { unusable: 'problem' });
    } else {
      const specs = discovered?.get(system.key);
      if (specs === undefined) {
        warnings.push(
          problem(
            ['systems', index, 'url'],
            `the tools of ${system.key} are not known yet: its MCP server has not answered tools/list`,
          ),
        );
        continue;
      }
      built = buildToolServerTools(system, index, specs, { unusable: 'warning' });
      if (withdrawn?.has(system.key) === true) {
        warnings.push(
          problem(
            ['systems', index, 'url'],
            `the tools of ${system.key} are withdrawn: its MCP server has not answered tools/list within allowed_staleness`,
          ),
        );
        built = { ...built, tools: [], disabled: [...built.disabled, ...built.tools] };
      }
    }
    tools.push(...built.tools);
    disabled.push(...built.disabled);
    for (const found of built.problems) problems.push(problem(found.path, found.message));
    for (const found of built.warnings) warnings.push(problem(found.path, found.message));
  }
  const policyFiles: PolicyFile[] = [];
  for (const [index, policy] of config.policies.entries()) {
    const text = await readFile(policy, ['policies', index]);
    if (text === undefined) continue;
    // An empty policy file permits nothing and would take every tool away: most likely one caught
    // half-written, so it is refused (`policies: []` says "nothing runs" on purpose).
    if (splitPolicies({ path: policy, text }).length === 0) {
      problems.push(problem(['policies', index], `the policy file ${policy} holds no policy`));
      continue;
    }
    policyFiles.push({ path: policy, text });
  }
  if (problems.length > 0) return { ok: false, problems };

  const hash = createHash('sha256').update(input.text);
  for (const [path, text] of [...read].sort(([left], [right]) => left.localeCompare(right))) {
    hash.update(`\0${path}\0${text}`);
  }
  // What the MCP servers offer is part of the configuration's content.
  for (const [key, specs] of [...(discovered ?? [])].sort(([left], [right]) => left.localeCompare(right))) {
    hash.update(`\0mcp:${key}\0${withdrawn?.has(key) === true ? 'withdrawn' : 'offered'}\0${JSON.stringify(specs)}`);
  }
  const version = hash.digest('hex').slice(0, 16);
  return {
    ok: true,
    read: {
      version,
      file: input.file,
      config,
      tools,
      disabled,
      policies: policyFiles,
      warnings,
      source: input.text,
      files: read,
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
