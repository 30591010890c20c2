// The deployed configuration: the configuration text with every file it names, as one bundle
// that `config:push` writes and the functions read (so AWS needs no file system).
import { z } from 'zod';

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
});
export type ConfigBundle = z.infer<typeof ConfigBundle>;

export type PushResult = { kind: 'pushed' } | { kind: 'unchanged' } | { kind: 'conflict'; current: string | null };

export interface ConfigBundleStore {
  fetch(): Promise<ConfigBundle | undefined>;
  /** Replaces the deployed bundle, only if the deployed version is still `expectedVersion` (null: none yet). */
  push(bundle: ConfigBundle, expectedVersion: string | null): Promise<PushResult>;
}
