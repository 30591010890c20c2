// The catalogs of MCP servers over time: discovered at load and on refresh (sooner on the server's
// hint), kept within allowed_staleness while a server is down, then withdrawn from agents but still
// known to the policies; a server down at start offers nothing until it answers.
import { describe, expect, it } from 'vitest';
import type { McpPins } from '../../../shared/catalog/mcp-pins.js';
import { formatProblem, type ResolvedMcpSystem } from '../../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../../shared/control-plane/gateway-snapshot.js';
import {
  type McpCatalog,
  McpCatalogs,
  type McpListing,
  type McpToolSource,
} from '../../../shared/control-plane/mcp-catalogs.js';
import { loadSnapshot } from '../../../shared/control-plane/snapshot.js';
import { ManualClock } from '../../support/clock.js';
import { verifies } from '../../support/requirements.js';

const config = [
  'settings: { allowed_staleness: 15m }',
  'systems:',
  '  - key: erp',
  '    base_url: http://erp.test',
  '    operations:',
  '      - { id: orders.list, method: GET, path: /orders, description: Lists orders. }',
  '  - kind: mcp',
  '    key: docs',
  '    url: http://docs.test/mcp',
  '    refresh: 1m',
  'policies: [policies.cedar]',
  '',
].join('\n');

const byGroup = `
permit (principal, action in Action::"docs", resource);
permit (principal, action == Action::"erp.orders.list", resource);
`;
const byName = `${byGroup}
forbid (principal, action == Action::"docs.search", resource) when { context.arguments has q && context.arguments.q == "x" };
`;

const searchTool = {
  name: 'search',
  description: 'Searches.',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};

/** A source the test switches between answering and failing; it counts the listings asked for. */
const fakeSource = () => {
  const source = {
    up: true,
    ttlMs: null as number | null,
    asked: 0,
    tools: [searchTool] as unknown[],
    listTools: async (_system: ResolvedMcpSystem): Promise<McpListing> => {
      source.asked += 1;
      if (!source.up) throw new Error('the server could not be reached');
      return { tools: source.tools, ttlMs: source.ttlMs, truncated: null };
    },
  };
  return source satisfies McpToolSource;
};

const quietLog = { info: () => undefined, warn: () => undefined };

/** Loads the configuration with the catalogs as they are now, as the local control plane does. */
const snapshotWith = async (catalogs: McpCatalogs, policy: string): Promise<GatewaySnapshot> => {
  const probe = await loadSnapshot({
    text: config,
    file: 'gateway.config.yaml',
    environment: {},
    files: { read: async () => byGroup },
  });
  if (!probe.ok) throw new Error(probe.problems.map(formatProblem).join('\n'));
  const systems = probe.snapshot.config.systems.filter((system) => system.kind === 'mcp');
  await catalogs.refresh(systems);
  const view = catalogs.view(systems, probe.snapshot.config.settings.allowed_staleness);
  const outcome = await loadSnapshot({
    text: config,
    file: 'gateway.config.yaml',
    environment: {},
    files: { read: async () => policy },
    discovered: view.discovered,
    withdrawn: view.withdrawn,
  });
  if (!outcome.ok) throw new Error(outcome.problems.map(formatProblem).join('\n'));
  return outcome.snapshot;
};

const offered = (snapshot: GatewaySnapshot) => snapshot.catalog.tools.map((tool) => tool.name).sort();

describe('MCP catalogs over time', () => {
  it(
    verifies('systems.mcp-staleness', 'a server down at start offers nothing, then its tools appear on their own'),
    async () => {
      const clock = new ManualClock();
      const source = fakeSource();
      source.up = false;
      const catalogs = new McpCatalogs(source, null, clock, quietLog);
      // The system is an action group from the start: a policy may name it before its tools are known.
      const down = await snapshotWith(catalogs, byGroup);
      expect(offered(down)).toEqual(['erp.orders.list']);
      expect(down.warnings.map((warning) => warning.message)).toContain(
        'the tools of docs are not known yet: its MCP server has not answered tools/list',
      );
      source.up = true;
      // Asked again only once the retry is due.
      await snapshotWith(catalogs, byGroup);
      expect(source.asked).toBe(1);
      clock.advance(10_000);
      const back = await snapshotWith(catalogs, byName);
      expect(offered(back)).toEqual(['docs.search', 'erp.orders.list']);
      expect(back.catalog.tools.find((tool) => tool.name === 'docs.search')?.access).toBe('read');
    },
  );

  it(
    verifies('systems.mcp-staleness', 'keeps a silent server within allowed_staleness, then withdraws its tools only'),
    async () => {
      const clock = new ManualClock();
      const source = fakeSource();
      const catalogs = new McpCatalogs(source, null, clock, quietLog);
      const fresh = await snapshotWith(catalogs, byName);
      expect(offered(fresh)).toEqual(['docs.search', 'erp.orders.list']);
      source.up = false;
      clock.advance(14 * 60_000);
      const kept = await snapshotWith(catalogs, byName);
      expect(offered(kept)).toEqual(['docs.search', 'erp.orders.list']);
      expect(kept.version).toBe(fresh.version);
      clock.advance(2 * 60_000);
      // Past allowed_staleness: withdrawn, yet the policy naming docs.search still validates.
      const withdrawn = await snapshotWith(catalogs, byName);
      expect(offered(withdrawn)).toEqual(['erp.orders.list']);
      expect(withdrawn.catalog.disabled.map((tool) => tool.name)).toContain('docs.search');
      expect(withdrawn.version).not.toBe(fresh.version);
      expect(withdrawn.warnings.map((warning) => warning.message)).toContain(
        'the tools of docs are withdrawn: its MCP server has not answered tools/list within allowed_staleness',
      );
      source.up = true;
      clock.advance(10_000);
      expect(offered(await snapshotWith(catalogs, byName))).toEqual(['docs.search', 'erp.orders.list']);
    },
  );

  it(
    verifies('systems.mcp-staleness', "refreshes every refresh, sooner on the server's ttlMs but never within 30 s"),
    async () => {
      const clock = new ManualClock();
      const source = fakeSource();
      const catalogs = new McpCatalogs(source, null, clock, quietLog);
      await snapshotWith(catalogs, byGroup);
      clock.advance(59_000);
      await snapshotWith(catalogs, byGroup);
      expect(source.asked).toBe(1);
      clock.advance(1_000);
      source.ttlMs = 5_000;
      await snapshotWith(catalogs, byGroup);
      expect(source.asked).toBe(2);
      // A hint of 5 s brings the next fetch to 30 s, not 5.
      clock.advance(29_000);
      await snapshotWith(catalogs, byGroup);
      expect(source.asked).toBe(2);
      clock.advance(1_000);
      await snapshotWith(catalogs, byGroup);
      expect(source.asked).toBe(3);
      source.ttlMs = 40_000;
      clock.advance(40_000);
      await snapshotWith(catalogs, byGroup);
      expect(source.asked).toBe(4);
    },
  );

  it(
    verifies('systems.mcp-staleness', 'a restart with the server down knows its tools from the kept catalog'),
    async () => {
      const clock = new ManualClock();
      const kept = new Map<string, McpCatalog>();
      const store = {
        read: async (key: string) => kept.get(key),
        write: async (key: string, catalog: McpCatalog) => void kept.set(key, catalog),
      };
      await snapshotWith(new McpCatalogs(fakeSource(), store, clock, quietLog), byName);
      expect(kept.get('docs')?.specs.map((spec) => spec.name)).toEqual(['search']);
      const down = fakeSource();
      down.up = false;
      clock.advance(60_000);
      const restarted = await snapshotWith(new McpCatalogs(down, store, clock, quietLog), byName);
      expect(offered(restarted)).toEqual(['docs.search', 'erp.orders.list']);
    },
  );

  it(
    verifies('systems.mcp-pinned-tools', 'a restart holds what the server changed while the gateway was stopped'),
    async () => {
      const clock = new ManualClock();
      const kept = new Map<string, McpPins>();
      const pins = {
        read: async (key: string) => kept.get(key),
        write: async (key: string, value: McpPins) => void kept.set(key, value),
      };
      const source = fakeSource();
      source.tools = [{ ...searchTool, annotations: {} }];
      const first = await snapshotWith(new McpCatalogs(source, null, clock, quietLog, pins), byGroup);
      expect(first.catalog.byName.get('docs.search')?.access).toBe('write');
      expect(kept.get('docs')?.map((pin) => [pin.name, pin.access])).toEqual([['search', 'write']]);
      source.tools = [{ ...searchTool, description: 'Searches, and reads this first.' }];
      const restarted = await snapshotWith(new McpCatalogs(source, null, clock, quietLog, pins), byGroup);
      expect(restarted.catalog.byName.get('docs.search')).toMatchObject({ access: 'write', description: 'Searches.' });
    },
  );

  it(
    verifies('systems.mcp-pinned-tools', 'pins that cannot be read hold every tool as a write, not as seen first'),
    async () => {
      const clock = new ManualClock();
      let readable = false;
      const pins = {
        read: async (): Promise<McpPins | undefined> => {
          if (!readable) throw new Error('EIO');
          return [];
        },
        write: async () => undefined,
      };
      const catalogs = new McpCatalogs(fakeSource(), null, clock, quietLog, pins);
      const held = await snapshotWith(catalogs, byGroup);
      expect(held.catalog.byName.get('docs.search')?.access).toBe('write');
      readable = true;
      const systems = held.config.systems.flatMap((system) => (system.kind === 'mcp' ? [system] : []));
      await catalogs.reloadPins(systems);
      const taken = await snapshotWith(catalogs, byGroup);
      expect(taken.catalog.byName.get('docs.search')?.access).toBe('read');
    },
  );
  it(
    verifies(
      'systems.mcp-catalog-store-logged',
      'a kept catalog that cannot be read or written is logged with its system and the error',
    ),
    async () => {
      const warnings: { message: string; attributes: Record<string, unknown> }[] = [];
      const log = {
        info: () => undefined,
        warn: (message: string, attributes: Record<string, unknown> = {}) =>
          void warnings.push({ message, attributes }),
      };
      const store = {
        read: async (): Promise<McpCatalog | undefined> => {
          throw new Error('EACCES: the catalog file cannot be opened');
        },
        write: async (): Promise<void> => {
          throw new Error('ENOSPC: no space left on device');
        },
      };
      // The server still answers: a cache that fails costs only the cache.
      const snapshot = await snapshotWith(new McpCatalogs(fakeSource(), store, new ManualClock(), log), byGroup);
      expect(offered(snapshot)).toEqual(['docs.search', 'erp.orders.list']);
      expect(warnings.map((line) => line.attributes)).toEqual([
        { system: 'docs', reason: 'EACCES: the catalog file cannot be opened' },
        { system: 'docs', reason: 'ENOSPC: no space left on device' },
      ]);
      expect(warnings.map((line) => line.message)).toEqual([
        expect.stringContaining('cannot be read'),
        expect.stringContaining('could not be kept'),
      ]);
    },
  );
});
