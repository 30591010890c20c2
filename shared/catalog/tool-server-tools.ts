// Builds the tools of a system that is an MCP server: a call-tool proxy (its tools described in the
// configuration) or a remote MCP server (its tools discovered from `tools/list`). Each becomes
// `<system key>.<tool name>` under the same schema rules as an HTTP system's operation: the input
// is an object whose unknown fields are refused, with secrets, identifiers and amounts marked.
import type { ResolvedToolServer } from '../config/resolved.js';
import { type CatalogProblem, markRulesOf, type SystemTools } from './build.js';
import { fittedToolName, normalizeOperationId, shortenedNote } from './naming.js';
import { isTurnedOff, unknownToolNames } from './offered.js';
import { applyMarks, hasReference, toJsonSchema } from './schema-conversion.js';
import { type Access, type CatalogTool, isJsonObject, type JsonObject } from './tool.js';

/** One tool as its server (or the configuration) describes it. */
export interface ToolServerToolSpec {
  /** The tool's own name on its server. */
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema: JsonObject;
  readonly outputSchema?: JsonObject | undefined;
  /** Read or write as the source says; null when it does not say (then it is a write). */
  readonly access: Access | null;
  readonly destructiveHint?: boolean | undefined;
  readonly idempotentHint?: boolean | undefined;
  /**
   * The server changed the tool since the operator reviewed it (mcp-pins.ts): a write whatever
   * `access` says, until the change is accepted.
   */
  readonly changed?: boolean | undefined;
  /** Where the tool is described, under the system's path in the configuration (for messages). */
  readonly configPath: readonly PropertyKey[];
  /** How messages name the tool's source, e.g. `systems[2].tools[0]` or `tools/list of docs`. */
  readonly source: string;
}

export interface ToolServerBuildOptions {
  /**
   * What a tool the gateway cannot take costs: `problem` (the configuration described it, so the
   * file is wrong) or `warning` (the server offered it; it is left out with a note).
   */
  readonly unusable: 'problem' | 'warning';
}

/** The input schema as the gateway takes it, or why it cannot. */
const inputSchemaOf = (given: JsonObject): JsonObject | string => {
  const schema = toJsonSchema(given, { dialect: 'json-schema-2020-12', dropReadOnly: false });
  if (schema.type !== undefined && schema.type !== 'object') return 'its input schema does not describe an object';
  if (hasReference(schema)) return 'its input schema uses $ref, which the gateway does not follow';
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === 'string') : [];
  // Unknown fields are refused, as for every tool: the approver sees every argument that is sent.
  const { $schema: _dialect, ...rest } = schema;
  return {
    ...rest,
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
};

const outputSchemaOf = (given: JsonObject | undefined): JsonObject | null => {
  if (given === undefined) return null;
  const schema = toJsonSchema(given, { dialect: 'json-schema-2020-12', dropReadOnly: false });
  return hasReference(schema) ? null : schema;
};

export const buildToolServerTools = (
  system: ResolvedToolServer,
  systemIndex: number,
  specs: readonly ToolServerToolSpec[],
  options: ToolServerBuildOptions,
): SystemTools => {
  const tools: CatalogTool[] = [];
  const disabled: CatalogTool[] = [];
  const problems: CatalogProblem[] = [];
  const warnings: CatalogProblem[] = [];
  const systemPath = ['systems', systemIndex];
  const rules = markRulesOf(system);
  const unusable = (where: readonly PropertyKey[], message: string) =>
    (options.unusable === 'problem' ? problems : warnings).push({ path: where, message });
  const seen = new Map<string, string>();
  for (const spec of specs) {
    const where = [...systemPath, ...spec.configPath];
    const id = normalizeOperationId(spec.name);
    const fullName = `${system.key}.${id}`;
    const name = fittedToolName(fullName);
    if (id.length === 0) {
      unusable(where, `${spec.source}: the tool name ${JSON.stringify(spec.name.slice(0, 200))} cannot be offered`);
      continue;
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      unusable(where, `${spec.source}: the tool name ${name} is also used by ${earlier}`);
      continue;
    }
    seen.set(name, spec.source);
    if (name !== fullName) warnings.push({ path: where, message: `${spec.source}: ${shortenedNote(fullName, name)}` });
    const input = inputSchemaOf(spec.inputSchema);
    if (typeof input === 'string') {
      unusable(where, `${spec.source} (${name}) is left out: ${input}`);
      continue;
    }
    const access: Access = spec.changed === true ? 'write' : (system.access[name] ?? spec.access ?? 'write');
    const title = spec.title ?? spec.name;
    const outputSchema = outputSchemaOf(spec.outputSchema);
    // A turned-off tool is built all the same (policies may still name it) but never offered.
    (isTurnedOff(system, name) ? disabled : tools).push({
      name,
      systemKey: system.key,
      operationId: spec.name,
      title,
      description: spec.description ?? `${spec.name} on ${system.key}`,
      inputSchema: applyMarks(input, rules),
      annotations: {
        title,
        readOnlyHint: access === 'read',
        destructiveHint: access === 'write' && spec.destructiveHint !== false,
        idempotentHint: access === 'read' || spec.idempotentHint === true,
        openWorldHint: true,
      },
      access,
      target: { kind: 'tool-server', name: spec.name },
      responseSchema: outputSchema === null ? null : applyMarks(outputSchema, rules),
    });
  }
  for (const found of unknownToolNames(system, systemPath, seen)) unusable(found.path, found.message);
  return { tools, disabled, problems, warnings };
};
