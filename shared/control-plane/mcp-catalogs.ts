// The tools each MCP server offers, as last discovered: fetched at load and again every `refresh`
// (sooner when the server's own hint says so), kept while the server is down for as long as the
// configuration allows (`allowed_staleness`), then withdrawn: still known to the policies, offered
// to nobody, until the server answers again. A catalog may be kept on disk so that a restart with
// the server down still knows its tools. What the operator reviewed of each tool is pinned
// (mcp-pins.ts): a server's later change is held, logged once and counted, until accepted.
import { createHash } from 'node:crypto';
import { driftLine, type McpPins, pinnedSpecs, type ToolDrift } from '../catalog/mcp-pins.js';
import { type LeftOutTool, mcpToolSpecs } from '../catalog/mcp-tools.js';
import type { ToolServerToolSpec } from '../catalog/tool-server-tools.js';
import type { Clock } from '../clock.js';
import type { ResolvedMcpSystem } from '../config/resolved.js';
import { errorText } from '../errors.js';
import type { Log } from '../log.js';
import { type GatewayMetrics, noMetrics } from '../metrics.js';
import type { DiscoveredTools } from './snapshot.js';

/** What a server listed (the adapter pages through tools/list). */
export interface McpListing {
  readonly tools: readonly unknown[];
  /** The server's freshness hint for the list, in milliseconds (2026-07-28 `ttlMs`). */
  readonly ttlMs: number | null;
  /** Why the list was cut short, when it was. */
  readonly truncated: string | null;
}

/** The port discovery goes through: one listing, or a throw whose message is the gateway's own words. */
export interface McpToolSource {
  listTools(system: ResolvedMcpSystem): Promise<McpListing>;
}

/** A system's catalog as discovered, and when. */
export interface McpCatalog {
  readonly url: string;
  /** Milliseconds since the epoch. */
  readonly fetchedAt: number;
  readonly specs: readonly ToolServerToolSpec[];
  readonly leftOut: readonly LeftOutTool[];
}

/** Where the last good catalogs are kept across restarts (the local data folder). */
export interface McpCatalogStore {
  read(systemKey: string): Promise<McpCatalog | undefined>;
  write(systemKey: string, catalog: McpCatalog): Promise<void>;
}

/**
 * Where each system's pins are kept: the local data folder, or the deployed bundle as config:push
 * read it. Without one, pins last as long as the process.
 */
export interface McpPinStore {
  read(systemKey: string): Promise<McpPins | undefined>;
  write(systemKey: string, pins: McpPins): Promise<void>;
}

/** What a snapshot is built from: the catalogs to take, and those withdrawn (declared, not offered). */
export interface McpCatalogView {
  readonly discovered: DiscoveredTools;
  readonly withdrawn: ReadonlySet<string>;
  /** Changes exactly when the view would build another snapshot. */
  readonly signature: string;
}

/** The soonest a catalog is fetched again, whatever the configuration says. */
const minRefreshMs = 1_000;
/**
 * The soonest a server's own hint (`ttlMs`) brings the next fetch: each changed list rebuilds the
 * catalog and checks the policies again, so a server must not be able to keep the gateway busy.
 */
const minHintedRefreshMs = 30_000;
/** How soon a server that did not answer is asked again (at most its refresh). */
const retryMs = 10_000;

interface Entry {
  catalog: McpCatalog | null;
  specsHash: string;
  /** The same of the tools as offered (pins applied): what a snapshot is built from. */
  offeredHash: string;
  nextAt: number;
  failing: boolean;
  /** The server answered in this process (a catalog from the store alone has not). */
  answered: boolean;
  /** Why the last attempt failed (the gateway's words), or null. */
  lastError: string | null;
  /** Why the last list was cut short, or null. */
  truncated: string | null;
  loadedFromStore: boolean;
  /** The server the entry is about (address, revision, credentials), hashed. */
  identity: string;
  /** What the operator accepted (undefined: nothing yet; null: cannot be read), and whether it was read. */
  pins: McpPins | undefined | null;
  pinsRead: boolean;
  /** The catalog's tools as offered (pins applied), and those changed since they were reviewed. */
  offered: readonly ToolServerToolSpec[];
  drift: readonly ToolDrift[];
  /** Each changed tool as last warned about, so that one change is logged and counted once. */
  warned: Map<string, string>;
}

const identityOf = (system: ResolvedMcpSystem): string =>
  createHash('sha256')
    .update(JSON.stringify([system.url, system.protocol, system.credentials]))
    .digest('hex');

const hashOf = (specs: readonly ToolServerToolSpec[]): string =>
  createHash('sha256').update(JSON.stringify(specs)).digest('hex').slice(0, 16);

export class McpCatalogs {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly source: McpToolSource,
    private readonly store: McpCatalogStore | null,
    private readonly clock: Clock,
    private readonly log: Log,
    private readonly pins: McpPinStore | null = null,
    private readonly metrics: Pick<GatewayMetrics, 'mcpToolChanged'> = noMetrics,
  ) {}

  /** Fetches the catalogs that are due (every one on first sight, or all with `force`). */
  async refresh(systems: readonly ResolvedMcpSystem[], force = false): Promise<void> {
    await Promise.all(systems.map((system) => this.refreshOne(system, force)));
  }

  /** Whether a system's catalog is due to be fetched (or has never been). */
  due(systems: readonly ResolvedMcpSystem[]): boolean {
    const now = this.clock.now();
    return systems.some((system) => {
      const entry = this.entries.get(system.key);
      return entry === undefined || entry.identity !== identityOf(system) || now >= entry.nextAt;
    });
  }

  /** The catalogs as a snapshot takes them now. */
  view(systems: readonly ResolvedMcpSystem[], allowedStalenessMs: number): McpCatalogView {
    const now = this.clock.now();
    const discovered = new Map<string, readonly ToolServerToolSpec[]>();
    const withdrawn = new Set<string>();
    const parts: string[] = [];
    for (const system of systems) {
      const entry = this.entries.get(system.key);
      const catalog = entry?.catalog;
      if (entry === undefined || catalog === null || catalog === undefined || catalog.url !== system.url) {
        parts.push(`${system.key}:-`);
        continue;
      }
      discovered.set(system.key, entry.offered);
      // A server is judged when it is asked: one that answered its last refresh is current, however
      // long ago that was; one that did not is stale once its last answer is older than allowed.
      const stale = (entry.failing || !entry.answered) && now - catalog.fetchedAt > allowedStalenessMs;
      if (stale) withdrawn.add(system.key);
      parts.push(`${system.key}:${entry.offeredHash}:${stale ? 'withdrawn' : 'offered'}`);
    }
    return { discovered, withdrawn, signature: parts.join('\n') };
  }

  /** The last catalog of a system, for `config:check` and `config:push`. */
  catalogOf(systemKey: string): McpCatalog | null {
    return this.entries.get(systemKey)?.catalog ?? null;
  }

  /** A system's tools as offered (pins applied), those changed since reviewed, and its pins. */
  pinningOf(systemKey: string) {
    const entry = this.entries.get(systemKey);
    return { offered: entry?.offered ?? [], drift: entry?.drift ?? [], pins: entry?.pins ?? [] };
  }

  /**
   * Reads the pins again (an operator may have accepted a change since: `npm run tools:accept`),
   * and applies them to the catalogs held.
   */
  async reloadPins(systems: readonly ResolvedMcpSystem[]): Promise<void> {
    await Promise.all(
      systems.map(async (system) => {
        const entry = this.entries.get(system.key);
        // Only a change can be accepted: a catalog that matches its pins has nothing to take.
        if (entry === undefined || !entry.pinsRead || (entry.drift.length === 0 && entry.pins !== null)) return;
        const before = JSON.stringify(entry.pins);
        await this.readPins(system.key, entry);
        if (JSON.stringify(entry.pins) !== before) await this.applyPins(system.key, entry);
      }),
    );
  }

  /** Reads a system's pins; pins that cannot be read hold every tool of the system as a write. */
  private async readPins(systemKey: string, entry: Entry): Promise<void> {
    entry.pinsRead = true;
    try {
      entry.pins = (await this.pins?.read(systemKey)) ?? undefined;
    } catch (error) {
      if (entry.pins !== null) {
        this.log.warn('MCP tool pins cannot be read; every tool of the system is held as a write until they can', {
          system: systemKey,
          reason: errorText(error),
        });
      }
      entry.pins = null;
    }
  }

  /** How the last attempt to list a system's tools went: why it failed, or why its list was cut short. */
  statusOf(systemKey: string): { readonly error: string | null; readonly truncated: string | null } {
    const entry = this.entries.get(systemKey);
    return { error: entry?.lastError ?? null, truncated: entry?.truncated ?? null };
  }

  private async refreshOne(system: ResolvedMcpSystem, force: boolean): Promise<void> {
    const entry = this.entryOf(system);
    if (entry.catalog === null && !entry.loadedFromStore && this.store !== null) await this.readKept(system, entry);
    if (!entry.pinsRead) {
      await this.readPins(system.key, entry);
      if (entry.catalog !== null) await this.applyPins(system.key, entry);
    }
    if (!force && this.clock.now() < entry.nextAt) return;
    const refreshMs = Math.max(minRefreshMs, system.refresh);
    try {
      await this.take(system, entry, await this.source.listTools(system), refreshMs);
    } catch (error) {
      this.failed(system, entry, error, refreshMs);
    }
  }

  /** A system's entry; another address, revision or credentials is another server: a new entry, its old list forgotten. */
  private entryOf(system: ResolvedMcpSystem): Entry {
    const identity = identityOf(system);
    const known = this.entries.get(system.key);
    if (known !== undefined && known.identity === identity) return known;
    const entry: Entry = {
      catalog: null,
      specsHash: '',
      offeredHash: '',
      nextAt: 0,
      failing: false,
      answered: false,
      lastError: null,
      truncated: null,
      loadedFromStore: false,
      identity,
      pins: undefined,
      pinsRead: false,
      offered: [],
      drift: [],
      warned: new Map(),
    };
    this.entries.set(system.key, entry);
    return entry;
  }

  /** The catalog kept across restarts, read once: one that cannot be read is as none kept (the server is asked). */
  private async readKept(system: ResolvedMcpSystem, entry: Entry): Promise<void> {
    entry.loadedFromStore = true;
    const stored = await this.store?.read(system.key).catch((error: unknown) => {
      this.log.warn('the kept MCP catalog cannot be read; its server is asked as if none was kept', {
        system: system.key,
        reason: errorText(error),
      });
      return undefined;
    });
    if (stored !== undefined && stored.url === system.url) {
      entry.catalog = stored;
      entry.specsHash = hashOf(stored.specs);
    }
  }

  /** A listing the server answered: taken as the system's catalog, logged when it says something new, kept. */
  private async take(system: ResolvedMcpSystem, entry: Entry, listing: McpListing, refreshMs: number): Promise<void> {
    const { specs, leftOut } = mcpToolSpecs(system.key, listing.tools);
    const catalog: McpCatalog = { url: system.url, fetchedAt: this.clock.now(), specs, leftOut };
    const specsHash = hashOf(specs);
    this.logListing(system, entry, listing, catalog, specsHash !== entry.specsHash);
    entry.catalog = catalog;
    entry.specsHash = specsHash;
    await this.applyPins(system.key, entry);
    entry.failing = false;
    entry.answered = true;
    entry.lastError = null;
    entry.truncated = listing.truncated;
    const hinted =
      listing.ttlMs !== null && listing.ttlMs > 0
        ? Math.min(refreshMs, Math.max(minHintedRefreshMs, listing.ttlMs))
        : refreshMs;
    entry.nextAt = this.clock.now() + hinted;
    // Kept with its time, so that a restart knows how fresh it is; one not kept costs only that.
    await this.store?.write(system.key, catalog).catch((error: unknown) => {
      this.log.warn('the MCP catalog could not be kept; a restart with its server down will not know its tools', {
        system: system.key,
        reason: errorText(error),
      });
    });
  }

  /** What a listing says that the log has not: the server back, its tools changed, some left out, a list cut short. */
  private logListing(
    system: ResolvedMcpSystem,
    entry: Entry,
    listing: McpListing,
    catalog: McpCatalog,
    changed: boolean,
  ): void {
    const tools = catalog.specs.length;
    // The first list is shown where the gateway starts; later ones are logged when they change.
    const known = entry.catalog !== null && entry.answered;
    if (entry.failing) this.log.info('MCP server answers again', { system: system.key, tools });
    else if (changed && known) this.log.info('MCP server tools changed', { system: system.key, tools });
    if (changed && catalog.leftOut.length > 0) {
      this.log.warn('MCP server tools left out', {
        system: system.key,
        leftOut: catalog.leftOut.map((tool) => `${tool.name}: ${tool.reason}`),
      });
    }
    if (listing.truncated !== null) {
      this.log.warn('MCP server tool list cut short', { system: system.key, reason: listing.truncated });
    }
  }

  /** A server that did not answer: its last catalog kept (logged once), asked again sooner. */
  private failed(system: ResolvedMcpSystem, entry: Entry, error: unknown, refreshMs: number): void {
    if (!entry.failing) {
      this.log.warn('MCP server did not answer tools/list; keeping its last catalog within allowed_staleness', {
        system: system.key,
        reason: errorText(error),
        lastFetchedAt: entry.catalog === null ? null : new Date(entry.catalog.fetchedAt).toISOString(),
      });
    }
    entry.failing = true;
    entry.lastError = errorText(error);
    entry.nextAt = this.clock.now() + Math.min(refreshMs, retryMs);
  }

  /** The catalog's tools against the pins: new tools pinned, each new change logged and counted once. */
  private async applyPins(systemKey: string, entry: Entry): Promise<void> {
    const pinned = pinnedSpecs(entry.catalog?.specs ?? [], entry.pins);
    entry.offered = pinned.specs;
    entry.offeredHash = hashOf(pinned.specs);
    entry.drift = pinned.drift;
    if (pinned.added) {
      entry.pins = pinned.pins;
      await this.pins?.write(systemKey, pinned.pins).catch((error: unknown) => {
        this.log.warn('MCP tool pins could not be kept', {
          system: systemKey,
          reason: errorText(error),
        });
      });
    }
    const fresh = pinned.drift.filter((drift) => entry.warned.get(drift.tool) !== JSON.stringify(drift.listed));
    entry.warned = new Map(pinned.drift.map((drift) => [drift.tool, JSON.stringify(drift.listed)]));
    if (fresh.length === 0) return;
    this.log.warn('MCP server changed tools since they were reviewed; they stay writes with their reviewed text', {
      system: systemKey,
      changed: fresh.map(driftLine),
      accept: `npm run tools:accept -- ${systemKey} (locally), or config:push --accept ${systemKey}`,
    });
    for (const _drift of fresh) this.metrics.mcpToolChanged();
  }
}
