// Discovery for the configuration tools (config:check, config:push): the MCP systems of a
// configuration file are read with the addresses and credentials of this environment, each server
// is asked once for its tools, and the answers (or why there is none) come back by system key.
import { readFile } from 'node:fs/promises';
import { McpServerClient } from '../../shared/adapters/mcp-server-client.js';
import { systemClock } from '../../shared/clock.js';
import { loadConfigText } from '../../shared/config/load.js';
import type { ResolvedMcpSystem } from '../../shared/config/resolved.js';
import { type McpCatalog, McpCatalogs } from '../../shared/control-plane/mcp-catalogs.js';

export interface McpDiscovery {
  readonly systems: readonly ResolvedMcpSystem[];
  readonly catalogs: ReadonlyMap<string, McpCatalog>;
  /** Why a system has no catalog (unset address, or the server's failure in the gateway's words). */
  readonly failures: ReadonlyMap<string, string>;
  /** Why a system's list was cut short. */
  readonly truncated: ReadonlyMap<string, string>;
}

/** Asks each MCP server of the file for its tools, once. */
export const discoverMcpTools = async (
  file: string,
  environment: Readonly<Record<string, string | undefined>>,
): Promise<McpDiscovery> => {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  const unset = new Map<string, string>();
  const parsed =
    text === undefined
      ? null
      : loadConfigText(text, file, environment, {
          unsetVariables: 'placeholder',
          onUnset: (reference, path) => {
            const key = /^systems\[(\d+)\]/.exec(path)?.[1];
            if (key !== undefined && !unset.has(key)) unset.set(key, `${reference} is not set here`);
          },
        });
  const failures = new Map<string, string>();
  const truncated = new Map<string, string>();
  const catalogs = new Map<string, McpCatalog>();
  if (parsed === null || !parsed.ok) return { systems: [], catalogs, failures, truncated };
  const systems: ResolvedMcpSystem[] = [];
  for (const [index, system] of parsed.config.systems.entries()) {
    if (system.kind !== 'mcp') continue;
    const why = unset.get(String(index));
    if (why === undefined) systems.push(system);
    else failures.set(system.key, why);
  }
  const client = new McpServerClient();
  const log = { info: () => undefined, warn: () => undefined };
  try {
    const found = new McpCatalogs(client, null, systemClock, log);
    await found.refresh(systems, true);
    for (const system of systems) {
      const catalog = found.catalogOf(system.key);
      const status = found.statusOf(system.key);
      if (catalog !== null) catalogs.set(system.key, catalog);
      else failures.set(system.key, status.error ?? 'the server did not answer');
      if (status.truncated !== null) truncated.set(system.key, status.truncated);
    }
  } finally {
    await client.close();
  }
  return { systems: [...systems], catalogs, failures, truncated };
};
