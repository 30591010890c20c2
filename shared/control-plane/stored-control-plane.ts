// The control plane of the deployed functions: the configuration bundle is read from the table
// at most once per refresh interval and cached by the function instance. Each successful read
// counts as a sync; a broken bundle or an unreachable table keeps the last good configuration
// until the allowed staleness runs out. The snapshot is the one config:push compiled (MCP
// servers' tools included, as pushed): nothing is parsed, compiled or discovered here.
import type { Clock } from '../clock.js';
import { formatProblem } from '../config/resolved.js';
import type { Log } from '../log.js';
import type { ConfigBundleStore } from './bundle.js';
import { loadCompiledSnapshot, pushAgain } from './compiled-snapshot.js';
import { type ControlPlane, type ControlPlaneState, SyncedConfiguration } from './control-plane.js';

export class StoredControlPlane implements ControlPlane {
  private readonly synced: SyncedConfiguration;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | null = null;

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
    let bundle: Awaited<ReturnType<ConfigBundleStore['fetch']>>;
    try {
      bundle = await this.store.fetch();
    } catch (error) {
      this.log.warn('configuration could not be read; keeping the last good one', { error });
      return;
    }
    if (bundle === undefined) {
      this.log.warn('no configuration has been pushed yet');
      return;
    }
    if (bundle.version === this.synced.lastGood?.version) {
      this.synced.confirm();
      return;
    }
    const { compiled } = bundle;
    if (compiled === undefined) {
      this.log.warn(
        `the pushed configuration was pushed by an older config:push, without the compiled snapshot the functions load; ${pushAgain}; keeping the last good one`,
        { version: bundle.version },
      );
      return;
    }
    const outcome = loadCompiledSnapshot({ ...bundle, compiled }, this.environment);
    if (outcome.ok) this.synced.accept(outcome.snapshot);
    else {
      this.log.warn('the pushed configuration is not valid here; keeping the last good one', {
        version: bundle.version,
        problems: outcome.problems.map(formatProblem),
      });
    }
  }
}
