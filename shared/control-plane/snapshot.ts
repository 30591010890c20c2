// A configuration snapshot: the validated configuration with its tool catalog, built from the
// configuration text and the files it names (OpenAPI documents, policies). The same code builds
// it from local files and from the bundle pushed to the table in AWS.
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { buildSystemTools, type SystemTools } from '../catalog/build.js';
import { loadOpenApiDocument } from '../catalog/openapi-document.js';
import { type OperationSpec, operationsFromAdmin, operationsFromOpenApi } from '../catalog/operations.js';
import { type Catalog, type CatalogTool, catalogOf } from '../catalog/tool.js';
import { buildToolServerTools, type ToolServerToolSpec } from '../catalog/tool-server-tools.js';
import { loadConfigText } from '../config/load.js';
import type { LoadOptions } from '../config/resolve.js';
import type { ResolvedCallToolSystem, ResolvedOpenApiSystem } from '../config/resolved.js';
import { type ConfigProblem, formatPath, type ResolvedConfig } from '../config/resolved.js';
import { cedarModelOf } from '../policy/cedar-schema.js';
import { PolicyEngine } from '../policy/engine.js';
import { compilePolicies, type PolicyFile, splitPolicies } from '../policy/policy-set.js';

/** Reads a file the configuration names, by its path relative to the configuration file. */
export interface ConfigFiles {
  read(relativePath: string): Promise<string | undefined>;
}

export interface GatewaySnapshot {
  /** Content hash of the configuration and every file it names. */
  readonly version: string;
  readonly config: ResolvedConfig;
  readonly catalog: Catalog;
  /** The organization's policies, compiled against this catalog. */
  readonly policy: PolicyEngine;
  /** Problems that left something out but did not invalidate the configuration. */
  readonly warnings: readonly ConfigProblem[];
  /** The configuration text itself. */
  readonly source: string;
  /** Every file read, with its text: what `config:push` bundles. */
  readonly files: ReadonlyMap<string, string>;
}

export type SnapshotLoad = { ok: true; snapshot: GatewaySnapshot } | { ok: false; problems: ConfigProblem[] };

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

export const loadSnapshot = async (input: {
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
}): Promise<SnapshotLoad> => {
  const loaded = loadConfigText(input.text, input.file, input.environment, input.options);
  if (!loaded.ok) return loaded;
  const { config, lineAt } = loaded;
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
  const catalog = catalogOf(tools, disabled);
  // Policies are checked against a schema generated from this very catalog (turned-off tools too).
  // Every system is an action group, so a policy may name a system whose tools are not known yet.
  const model = cedarModelOf(
    [...catalog.tools, ...catalog.disabled],
    config.systems.map((system) => system.key),
  );
  const compiled = compilePolicies(policyFiles, model.schema, version);
  if (!compiled.ok) {
    return {
      ok: false,
      problems: compiled.problems.map((found) => ({
        file: posix.join(posix.dirname(input.file.replaceAll('\\', '/')), found.file),
        path: 'policies',
        line: found.line,
        message: found.message,
      })),
    };
  }
  return {
    ok: true,
    snapshot: {
      version,
      config,
      catalog,
      policy: new PolicyEngine(compiled.policies, model),
      warnings,
      source: input.text,
      files: read,
    },
  };
};
