// The deployed configuration: the configuration text with every file it names, and the snapshot
// config:push compiled from them, as one bundle that `config:push` writes and the functions read
// (so AWS needs no file system). The functions load the compiled snapshot only; the raw text
// stays for people, for config:check and for the table's history.
import { gunzipSync, gzipSync } from 'node:zlib';
import * as z from 'zod';
import { isJsonObject, type JsonObject } from '../catalog/tool.js';

/** A tool as discovered from an MCP server (ToolServerToolSpec), as the bundle carries it. */
const BundledToolSpec = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  access: z.enum(['read', 'write']).nullable(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  configPath: z.array(z.union([z.string(), z.number()])),
  source: z.string(),
});

/** An MCP server's catalog, discovered by `config:push` (the functions never discover). */
export const BundledMcpCatalog = z.object({
  url: z.string(),
  fetchedAt: z.number(),
  specs: z.array(BundledToolSpec),
  leftOut: z.array(z.object({ name: z.string(), reason: z.string() })),
});
export type BundledMcpCatalog = z.infer<typeof BundledMcpCatalog>;

/** A JSON object kept as it was read (a schema's keys, whatever they are, are not copied). */
const JsonObjectValue = z.custom<JsonObject>(isJsonObject, 'expected a JSON object');

/** A catalog tool as data (CatalogTool), with the code of its arguments validator. */
const CompiledTool = z.object({
  name: z.string().min(1),
  systemKey: z.string().min(1),
  operationId: z.string(),
  title: z.string(),
  description: z.string(),
  inputSchema: JsonObjectValue,
  annotations: z.object({
    title: z.string().optional(),
    readOnlyHint: z.boolean(),
    destructiveHint: z.boolean(),
    idempotentHint: z.boolean(),
    openWorldHint: z.boolean(),
  }),
  access: z.enum(['read', 'write']),
  target: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('http'),
      method: z.string(),
      path: z.string(),
      fields: z
        .array(
          z.object({
            field: z.string(),
            in: z.enum(['path', 'query', 'header', 'body', 'whole-body']),
            name: z.string(),
          }),
        )
        .readonly(),
    }),
    z.object({ kind: z.literal('tool-server'), name: z.string() }),
  ]),
  responseSchema: JsonObjectValue.nullable(),
  /** ajv's standalone code (a CommonJS module) validating `validationSchema(inputSchema)`. */
  validator: z.string().min(1),
});
export type CompiledTool = z.infer<typeof CompiledTool>;

/** The form the functions read; a bundle compiled in another form is pushed again. */
export const compiledSnapshotFormat = 2;

/** Everything a snapshot is made of, read and built by config:push, nothing left to parse. */
export const CompiledSnapshot = z.object({
  format: z.literal(compiledSnapshotFormat),
  /** The snapshot's content version, the bundle's own. */
  version: z.string().min(1),
  /** The configuration file's content as data, `${env:NAME}` references as written. */
  config: JsonObjectValue,
  /** The line of each `${env:NAME}` reference in the file, by its path (`agents[0].token`), for messages. */
  reference_lines: z.record(z.string(), z.number().int().positive()),
  tools: z.array(CompiledTool),
  /** Turned-off tools: policies may name them, nobody is offered them. */
  disabled: z.array(CompiledTool),
  /** The policy files' texts, in the configuration's order. */
  policies: z.array(z.object({ path: z.string(), text: z.string() })),
  /** The same policies as config:push parsed and validated them against this catalog, by Cedar id. */
  policy_set: z.object({
    texts: z.record(z.string(), z.string()),
    policies: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        file: z.string(),
        line: z.number().int(),
        effect: z.enum(['permit', 'forbid']),
        approvals: z.array(z.enum(['staff', 'customer'])),
        approvers: z.string().nullable(),
      }),
    ),
    argumentsRead: z.union([z.literal('all'), z.array(z.string())]),
  }),
  warnings: z.array(z.object({ file: z.string(), path: z.string(), line: z.number().nullable(), message: z.string() })),
});
export type CompiledSnapshot = z.infer<typeof CompiledSnapshot>;

/** The compiled snapshot as the table stores it: gzip of its JSON, as the plain bytes the table gives back. */
export const encodeCompiledSnapshot = (compiled: CompiledSnapshot) =>
  new Uint8Array(gzipSync(JSON.stringify(compiled)));

/** The most a compiled snapshot may unpack to: a table item is at most 400 KB, so a larger result is a gzip bomb. */
export const maxCompiledSnapshotBytes = 64 * 1024 * 1024;

export type CompiledSnapshotRead = { ok: true; compiled: CompiledSnapshot } | { ok: false; reason: string };

export const decodeCompiledSnapshot = (bytes: Uint8Array): CompiledSnapshotRead => {
  let data: unknown;
  try {
    data = JSON.parse(gunzipSync(bytes, { maxOutputLength: maxCompiledSnapshotBytes }).toString('utf8'));
  } catch {
    return { ok: false, reason: 'its compiled snapshot cannot be read' };
  }
  if (isJsonObject(data) && data.format !== compiledSnapshotFormat) {
    return {
      ok: false,
      reason: `its compiled snapshot is in form ${JSON.stringify(data.format)}, and this gateway reads form ${compiledSnapshotFormat}`,
    };
  }
  // Parsed once per configuration: zod's compiled fast path would cost more to build than it saves.
  const parsed = CompiledSnapshot.safeParse(data, { jitless: true });
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    return {
      ok: false,
      reason: `its compiled snapshot is not well formed (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''})`,
    };
  }
  return { ok: true, compiled: parsed.data };
};

export const ConfigBundle = z.object({
  /** Content version of the snapshot the bundle builds (see loadSnapshot). */
  version: z.string().min(1),
  /** The configuration file's name, for messages. */
  config_file: z.string().min(1),
  config_text: z.string(),
  /** Files the configuration names, by their path relative to it. */
  files: z.record(z.string(), z.string()),
  pushed_at: z.iso.datetime(),
  /** The tools each MCP system's server offered at push time, by system key (part of the version). */
  mcp_catalogs: z.record(z.string(), BundledMcpCatalog).optional(),
  /**
   * The compiled snapshot (encodeCompiledSnapshot: gzip of its JSON), what the functions load;
   * absent from a bundle pushed before the functions stopped parsing.
   */
  compiled: z.instanceof(Uint8Array).optional(),
});
export type ConfigBundle = z.infer<typeof ConfigBundle>;

export type PushResult = { kind: 'pushed' } | { kind: 'unchanged' } | { kind: 'conflict'; current: string | null };

export interface ConfigBundleStore {
  fetch(): Promise<ConfigBundle | undefined>;
  /** Replaces the deployed bundle, only if the deployed version is still `expectedVersion` (null: none yet). */
  push(bundle: ConfigBundle, expectedVersion: string | null): Promise<PushResult>;
}
