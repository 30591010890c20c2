// The control plane of the deployed functions: the table's pointer to the deployed bundle is read
// at most once per refresh interval; the bundle itself is fetched and checked (hash, signature)
// only when the pointer names another version, and cached by the function instance. Each
// successful read counts as a sync; a refused bundle or an unreachable table or bucket keeps the
// last good configuration until the allowed staleness runs out. The snapshot is the one config:push compiled (MCP
// servers' tools included, as pushed): nothing is parsed, compiled or discovered here.
import type { Clock } from '../clock.js';
import { formatProblem } from '../config/resolved.js';
import type { Log } from '../log.js';
import { type BundleRead, type ConfigBundleStore, type DeployedBundle, versionOf } from './bundle.js';
import { loadCompiledSnapshot, pushAgain } from './compiled-snapshot.js';
import { type ControlPlane, type ControlPlaneState, SyncedConfiguration } from './control-plane.js';

export class StoredControlPlane implements ControlPlane {
  private readonly synced: SyncedConfiguration;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | null = null;
  /** The object last refused (key, version and hash). */
  private refused: string | null = null;

  constructor(
    private readonly store: ConfigBundleStore,
    private readonly environment: Readonly<Record<string, string | undefined>>,
    private readonly clock: Clock,
    private readonly log: Log,
    private readonly refreshMs = 30_000,
  ) {
    this.synced = new SyncedConfiguration(clock);
  }

  async current(): Promise<ControlPlaneState> {
    if (this.clock.now() - this.checkedAt >= this.refreshMs) {
      this.refreshing ??= this.refresh().finally(() => {
        this.refreshing = null;
      });
      await this.refreshing;
    }
    return this.synced.state();
  }

  /** The configuration in use and when the table last confirmed it (for the staleness metric). */
  get lastGood() {
    return this.synced.lastGood;
  }

  get lastSyncedAt(): number {
    return this.synced.lastSyncedAt;
  }

  private async refresh(): Promise<void> {
    this.checkedAt = this.clock.now();
    let deployed: DeployedBundle | undefined;
    try {
      deployed = await this.store.deployed();
    } catch (error) {
      this.log.warn('configuration could not be read; keeping the last good one', { error });
      return;
    }
    if (deployed === undefined) {
      this.log.warn('no configuration has been pushed yet');
      return;
    }
    if (versionOf(deployed) === this.synced.lastGood?.version) {
      this.synced.confirm();
      return;
    }
    if (deployed.kind === 'unsigned') {
      this.log.warn(
        `the pushed configuration was pushed by an older config:push, into the table without a signature; ${pushAgain}; keeping the last good one`,
        { version: deployed.version },
      );
      return;
    }
    const { pointer } = deployed;
    // A refused bundle is not fetched again until the table names another (or signs it otherwise).
    const identity = JSON.stringify(pointer);
    if (identity === this.refused) return;
    let read: BundleRead;
    try {
      read = await this.store.load(pointer);
    } catch (error) {
      this.log.warn('the pushed configuration could not be fetched; keeping the last good one', {
        version: pointer.version,
        error,
      });
      return;
    }
    if (!read.ok) {
      this.refused = identity;
      this.log.warn(`the pushed configuration is refused: ${read.reason}; keeping the last good one`, {
        version: pointer.version,
        object: `${pointer.object_key}@${pointer.object_version}`,
      });
      return;
    }
    const outcome = loadCompiledSnapshot(read.bundle, this.environment);
    if (outcome.ok) this.synced.accept(outcome.snapshot);
    else {
      this.refused = identity;
      this.log.warn('the pushed configuration is not valid here; keeping the last good one', {
        version: pointer.version,
        problems: outcome.problems.map(formatProblem),
      });
    }
  }
}
