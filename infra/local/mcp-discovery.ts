// Discovery for the configuration tools (config:check, config:push): the MCP systems of a
// configuration file are read with the addresses and credentials of this environment, each server
// is asked once for its tools, and the answers (or why there is none) come back by system key,
// held against the pins given (the data folder's, or the deployed bundle's).
import { readFile } from 'node:fs/promises';
import { McpServerClient } from '../../shared/adapters/mcp-server-client.js';
import { driftLine, type McpPins, type ToolDrift } from '../../shared/catalog/mcp-pins.js';
import type { ToolServerToolSpec } from '../../shared/catalog/tool-server-tools.js';
import { systemClock } from '../../shared/clock.js';
import { loadConfigText } from '../../shared/config/load.js';
import type { ResolvedMcpSystem } from '../../shared/config/resolved.js';
import { type McpCatalog, McpCatalogs, type McpPinStore } from '../../shared/control-plane/mcp-catalogs.js';

export interface McpDiscovery {
  readonly systems: readonly ResolvedMcpSystem[];
  /** What each server listed. */
  readonly catalogs: ReadonlyMap<string, McpCatalog>;
  /** Its tools as offered: a tool changed since it was pinned is a write with its pinned text. */
  readonly offered: ReadonlyMap<string, readonly ToolServerToolSpec[]>;
  /** The tools changed since they were pinned, and the pins with new tools added. */
  readonly drift: ReadonlyMap<string, readonly ToolDrift[]>;
  readonly pins: ReadonlyMap<string, McpPins>;
  /** Why a system has no catalog (unset address, or the server's failure in the gateway's words). */
  readonly failures: ReadonlyMap<string, string>;
  /** Why a system's list was cut short. */
  readonly truncated: ReadonlyMap<string, string>;
}

/** Asks each MCP server of the file for its tools, once, held against the pins read from `pins` (never written). */
export const discoverMcpTools = async (
  file: string,
  environment: Readonly<Record<string, string | undefined>>,
  pins: Pick<McpPinStore, 'read'> | null = null,
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
  const offered = new Map<string, readonly ToolServerToolSpec[]>();
  const drift = new Map<string, readonly ToolDrift[]>();
  const pinned = new Map<string, McpPins>();
  const result = { catalogs, offered, drift, pins: pinned, failures, truncated };
  if (parsed === null || !parsed.ok) return { systems: [], ...result };
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
    const readOnly = pins === null ? null : { read: pins.read.bind(pins), write: async () => undefined };
    const found = new McpCatalogs(client, null, systemClock, log, readOnly);
    await found.refresh(systems, true);
    for (const system of systems) {
      const catalog = found.catalogOf(system.key);
      const status = found.statusOf(system.key);
      if (catalog !== null) {
        const pinning = found.pinningOf(system.key);
        catalogs.set(system.key, catalog);
        offered.set(system.key, pinning.offered);
        drift.set(system.key, pinning.drift);
        pinned.set(system.key, pinning.pins);
      } else failures.set(system.key, status.error ?? 'the server did not answer');
      if (status.truncated !== null) truncated.set(system.key, status.truncated);
    }
  } finally {
    await client.close();
  }
  return { systems: [...systems], ...result };
};

/** The tools each MCP server changed since they were pinned, and how to accept the change. */
export const driftLines = (discovery: McpDiscovery): string[] =>
  [...discovery.drift].flatMap(([key, drift]) =>
    drift.length === 0
      ? []
      : [
          `  warning: the MCP server of ${key} changed ${drift.length} tool${drift.length === 1 ? '' : 's'} since they were pinned (accept: npm run tools:accept -- ${key}; deployed: config:push --accept ${key}):`,
          ...drift.map((tool) => `    ${driftLine(tool)}`),
        ],
  );
