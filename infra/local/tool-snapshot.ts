// The configuration as the policy tools (policy:explain, policy:test) read it: loaded exactly as
// config:check loads it, MCP servers asked for their tools unless offline, and for each MCP
// system whose tools stay unknown, why. A system whose server cannot be asked from here (its
// address set only in the runtime's environment, as the demo's is) is known by the last list the
// running gateway kept in the data folder, held against the same pins it serves them by.
import { readFile } from 'node:fs/promises';
import { pinnedSpecs } from '../../shared/catalog/mcp-pins.js';
import type { ToolServerToolSpec } from '../../shared/catalog/tool-server-tools.js';
import { loadConfigText } from '../../shared/config/load.js';
import { formatProblem } from '../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import { errorText } from '../../shared/errors.js';
import { loadSnapshotFromFile } from './config-files.js';
import { McpCatalogFiles, McpPinFiles, mcpCatalogFolder } from './mcp-catalog-files.js';
import { discoverMcpTools } from './mcp-discovery.js';

export type ToolSnapshot =
  | {
      readonly ok: true;
      readonly snapshot: GatewaySnapshot;
      /** MCP systems whose tools are not known, with why. */
      readonly undiscovered: ReadonlyMap<string, string>;
      /** MCP systems known by the running gateway's last list, with when it was fetched. */
      readonly remembered: ReadonlyMap<string, string>;
    }
  | { readonly ok: false; readonly message: string };

/** The tools the running gateway last listed for each of `keys` it kept, as it offers them (pins applied). */
const rememberedTools = async (dataDir: string, keys: readonly string[]) => {
  const folder = mcpCatalogFolder(dataDir);
  const catalogs = new McpCatalogFiles(folder);
  const pins = new McpPinFiles(folder);
  const found = new Map<string, { offered: readonly ToolServerToolSpec[]; fetchedAt: string }>();
  /** Kept lists (or their pins) that could not be read: told as why the system's tools stay unknown. */
  const unreadable = new Map<string, string>();
  for (const key of keys) {
    try {
      const catalog = await catalogs.read(key);
      if (catalog === undefined) continue;
      const pinned = pinnedSpecs(catalog.specs, await pins.read(key));
      found.set(key, { offered: pinned.specs, fetchedAt: new Date(catalog.fetchedAt).toISOString() });
    } catch (error) {
      unreadable.set(key, `its last list in the data folder cannot be read: ${errorText(error)}`);
    }
  }
  return { found, unreadable };
};

/** The keys of the file's MCP systems, read without compiling anything (none if it does not parse). */
const mcpSystemKeys = async (file: string, environment: Readonly<Record<string, string | undefined>>) => {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  const parsed =
    text === undefined
      ? null
      : loadConfigText(text, file, environment, { unsetVariables: 'placeholder', secrets: 'unread' });
  return parsed?.ok === true
    ? parsed.config.systems.flatMap((system) => (system.kind === 'mcp' ? [system.key] : []))
    : [];
};

export const loadToolSnapshot = async (
  file: string,
  environment: Readonly<Record<string, string | undefined>>,
  offline: boolean,
  dataDir: string | null = null,
): Promise<ToolSnapshot> => {
  const discovery = offline ? null : await discoverMcpTools(file, environment);
  const offered = new Map(discovery?.offered ?? []);
  const unknown = (await mcpSystemKeys(file, environment)).filter((key) => !offered.has(key));
  const remembered = new Map<string, string>();
  const kept = dataDir === null || unknown.length === 0 ? null : await rememberedTools(dataDir, unknown);
  for (const [key, { offered: tools, fetchedAt }] of kept?.found ?? []) {
    offered.set(key, tools);
    remembered.set(key, fetchedAt);
  }
  const outcome = await loadSnapshotFromFile(file, environment, { unsetVariables: 'placeholder' }, offered);
  if (!outcome.ok) {
    const problems = outcome.problems.map((problem) => `  ${formatProblem(problem)}`).join('\n');
    return { ok: false, message: `${file} is not valid (see npm run config:check):\n${problems}` };
  }
  const undiscovered = new Map<string, string>();
  for (const key of unknown) {
    if (remembered.has(key)) continue;
    undiscovered.set(
      key,
      kept?.unreadable.get(key) ??
        (discovery === null ? 'not asked: --offline' : (discovery.failures.get(key) ?? 'the server did not answer')),
    );
  }
  return { ok: true, snapshot: outcome.snapshot, undiscovered, remembered };
};
