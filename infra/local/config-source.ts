// The local control plane: the configuration file and the files it names, watched and checked
// every second. A good edit is taken at once; a broken one is logged and the last good
// configuration kept, until the allowed staleness runs out. The tools of MCP servers are discovered
// at load and again as each server's refresh comes due; a changed list makes a new snapshot.
import { createHash } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Clock } from '../../shared/clock.js';
import { formatProblem, type ResolvedMcpSystem } from '../../shared/config/resolved.js';
import type { SecretLookup } from '../../shared/config/stored-secrets.js';
import {
  type ControlPlane,
  type ControlPlaneState,
  SyncedConfiguration,
} from '../../shared/control-plane/control-plane.js';
import type { SnapshotLoad } from '../../shared/control-plane/gateway-snapshot.js';
import type { McpCatalogs } from '../../shared/control-plane/mcp-catalogs.js';
import { loadSnapshot } from '../../shared/control-plane/snapshot.js';
import type { Log } from '../../shared/log.js';

const fingerprintOf = (texts: readonly [string, string | undefined][]): string => {
  const hash = createHash('sha256');
  for (const [file, text] of texts) hash.update(`\0${file}\0${text ?? '\u0000missing'}`);
  return hash.digest('hex');
};

/** How long a changed file must stay the same before it is loaded. */
const settleMs = 150;

const readText = (path: string): Promise<string | undefined> => readFile(path, 'utf8').catch(() => undefined);

export class LocalConfigSource implements ControlPlane {
  private readonly synced: SyncedConfiguration;
  private readonly folder: string;
  private fingerprint: string | null = null;
  private lastAttemptOk = false;
  /** Files (relative to the configuration) the last attempt read. */
  private dependencies: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private running: Promise<void> | null = null;
  private pending = false;
  /** The MCP systems of the configuration last read, and the catalogs' view the last attempt used. */
  private mcpSystems: readonly ResolvedMcpSystem[] = [];
  private allowedStalenessMs = 0;
  private catalogSignature = '';
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly path: string,
    private readonly environment: Readonly<Record<string, string | undefined>>,
    clock: Clock,
    private readonly log: Log,
    /** Discovers MCP servers' tools (absent: MCP systems offer nothing). */
    private readonly mcp: McpCatalogs | null = null,
    /** Where `${secret:…}` references are read (absent: each is unset). */
    private readonly secrets: SecretLookup | null = null,
  ) {
    this.synced = new SyncedConfiguration(clock);
    this.folder = dirname(path);
  }

  /** Loads the configuration once; the runtime refuses to start when this fails. */
  load(): Promise<SnapshotLoad> {
    return this.attempt();
  }

  /** Starts watching: file events trigger a check at once, and a check runs every interval. */
  watch(intervalMs = 1_000): void {
    this.timer = setInterval(() => void this.sync(), intervalMs);
    this.timer.unref();
    try {
      this.watcher = watch(this.folder, (_event, file) => {
        if (file === null || file === basename(this.path) || this.dependencies.includes(file)) void this.sync();
      });
      this.watcher.unref();
    } catch {
      // Polling alone still picks up every change.
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.watcher?.close();
  }

  async current(): Promise<ControlPlaneState> {
    return this.synced.state();
  }

  get lastGood() {
    return this.synced.lastGood;
  }

  /** When the files were last read and found good (for the staleness metric). */
  get lastSyncedAt(): number {
    return this.synced.lastSyncedAt;
  }

  /** One check; concurrent requests for a check collapse into one more run. */
  sync(): Promise<void> {
    if (this.running !== null) {
      this.pending = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.pending = false;
        await this.check();
      } while (this.pending);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async check(): Promise<void> {
    const fingerprint = await this.currentFingerprint();
    if (fingerprint === this.fingerprint) {
      if (!(await this.catalogsChanged())) {
        if (this.lastAttemptOk) this.synced.confirm();
        return;
      }
      // A server's tools changed, or a catalog outlived allowed_staleness: build again from the same files.
      const outcome = await this.attempt();
      if (outcome.ok) {
        this.log.info('MCP tools changed', {
          version: outcome.snapshot.version,
          tools: outcome.snapshot.catalog.tools.length,
        });
      } else {
        this.log.warn('MCP tools changed, and the configuration no longer loads; keeping the last good one', {
          problems: outcome.problems.map(formatProblem),
        });
      }
      return;
    }
    // An editor may still be writing: take the change once it has held still for a moment.
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    if ((await this.currentFingerprint()) !== fingerprint) {
      this.pending = true;
      return;
    }
    const outcome = await this.attempt();
    if (outcome.ok) {
      this.log.info('configuration reloaded', {
        version: outcome.snapshot.version,
        tools: outcome.snapshot.catalog.tools.length,
      });
    } else {
      this.log.warn('configuration change refused; keeping the last good configuration', {
        problems: outcome.problems.map(formatProblem),
        lastGoodVersion: this.synced.lastGood?.version ?? null,
      });
    }
  }

  /**
   * Starts refreshing the catalogs that are due, in the background (a server that hangs must not hold
   * up the checks of the files), and answers whether a snapshot built now would differ.
   */
  private async catalogsChanged(): Promise<boolean> {
    const mcp = this.mcp;
    if (mcp === null || this.mcpSystems.length === 0) return false;
    const changed = () => mcp.view(this.mcpSystems, this.allowedStalenessMs).signature !== this.catalogSignature;
    // An accepted change (`npm run tools:accept`) is taken within a check, not at the next refresh.
    await mcp.reloadPins(this.mcpSystems);
    if (this.refreshing === null && mcp.due(this.mcpSystems)) {
      this.refreshing = mcp.refresh(this.mcpSystems).finally(() => {
        this.refreshing = null;
        // What the refresh found is taken at once, not at the next tick.
        if (changed()) void this.sync();
      });
    }
    return changed();
  }

  private async currentFingerprint(): Promise<string> {
    const texts: [string, string | undefined][] = [[this.path, await readText(this.path)]];
    for (const dependency of this.dependencies) texts.push([dependency, await readText(join(this.folder, dependency))]);
    return fingerprintOf(texts);
  }

  private async attempt(): Promise<SnapshotLoad> {
    const text = await readText(this.path);
    // The fingerprint is made of exactly the texts this attempt read, so a change made while it
    // runs is seen by the next check.
    const texts: [string, string | undefined][] = [[this.path, text]];
    const touched: string[] = [];
    let outcome: SnapshotLoad;
    if (text === undefined || text.trim().length === 0) {
      const message = text === undefined ? 'the file cannot be read' : 'the file is empty';
      outcome = { ok: false, problems: [{ file: this.path, path: '', line: null, message }] };
    } else {
      this.mcpSystems = [];
      this.catalogSignature = '';
      const mcp = this.mcp;
      outcome = await loadSnapshot({
        text,
        file: this.path,
        environment: this.environment,
        ...(this.secrets === null ? {} : { options: { secrets: this.secrets } }),
        // The MCP systems are known once the file is read; their catalogs are fetched before the
        // snapshot is built, so that policies are checked against the tools they name.
        ...(mcp === null
          ? {}
          : {
              discover: async (config) => {
                this.mcpSystems = config.systems.filter((system) => system.kind === 'mcp');
                this.allowedStalenessMs = config.settings.allowed_staleness;
                await mcp.refresh(this.mcpSystems);
                const view = mcp.view(this.mcpSystems, this.allowedStalenessMs);
                this.catalogSignature = view.signature;
                return view;
              },
            }),
        files: {
          read: async (relativePath) => {
            const content = await readText(join(this.folder, relativePath));
            touched.push(relativePath);
            texts.push([relativePath, content]);
            return content;
          },
        },
      });
    }
    this.dependencies = touched;
    this.fingerprint = fingerprintOf(texts);
    this.lastAttemptOk = outcome.ok;
    if (outcome.ok) this.synced.accept(outcome.snapshot);
    return outcome;
  }
}
