// The control plane of the deployed functions: the configuration bundle is read from the table
// at most once per refresh interval and cached by the function instance. Each successful read
// counts as a sync; a broken bundle or an unreachable table keeps the last good configuration
// until the allowed staleness runs out. The snapshot is the one config:push compiled (MCP
// servers' tools included, as pushed): nothing is parsed, compiled or discovered here.
// `${secret:…}` values are read before the snapshot is resolved, again at each refresh (from the
// source's cache until it expires), and fresh after a system refused the credentials; a changed
// value makes a new snapshot of the same bundle.
import type { Clock } from '../clock.js';
import { type ConfigProblem, formatProblem } from '../config/resolved.js';
import { type SecretSource, secretLookupOf, storedSecretNames } from '../config/stored-secrets.js';
import type { Log } from '../log.js';
import type { ConfigBundle, ConfigBundleStore } from './bundle.js';
import { decodeBundleSnapshot, loadDecodedSnapshot, pushAgain } from './compiled-snapshot.js';
import { type ControlPlane, type ControlPlaneState, SyncedConfiguration } from './control-plane.js';

/** Fresh secret values are asked for at most this often, however many calls a system refuses. */
const freshSecretsEveryMs = 60_000;

/** The bundle in use and the secret values its snapshot was resolved with. */
interface InUse {
  readonly bundle: ConfigBundle & { readonly compiled: Uint8Array };
  readonly secretNames: readonly string[];
  readonly secretValues: ReadonlyMap<string, string | undefined>;
}

export class StoredControlPlane implements ControlPlane {
  private readonly synced: SyncedConfiguration;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | null = null;
  private inUse: InUse | null = null;
  private freshSecretsAsked = false;
  private freshSecretsAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: ConfigBundleStore,
    private readonly environment: Readonly<Record<string, string | undefined>>,
    private readonly clock: Clock,
    private readonly log: Log,
    private readonly refreshMs = 30_000,
    /** Where `${secret:…}` values come from; 'unread' in a function that never calls a system. */
    private readonly secrets: SecretSource | 'unread' = 'unread',
  ) {
    this.synced = new SyncedConfiguration(clock);
  }

  /**
   * A system refused the credentials the configuration gave: the next request reads the secrets
   * fresh (at most once a minute), so a rotated secret is taken before its cached value expires.
   */
  credentialsRefused(): void {
    if (this.secrets === 'unread' || this.inUse === null || this.inUse.secretNames.length === 0) return;
    if (this.clock.now() - this.freshSecretsAt < freshSecretsEveryMs) return;
    this.freshSecretsAt = this.clock.now();
    this.freshSecretsAsked = true;
    this.checkedAt = Number.NEGATIVE_INFINITY;
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
    const fresh = this.freshSecretsAsked;
    this.freshSecretsAsked = false;
    if (bundle.version === this.synced.lastGood?.version && this.inUse !== null) {
      await this.keepWithSecrets(this.inUse, fresh);
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
    await this.take({ ...bundle, compiled }, fresh);
  }

  /** Loads a bundle with its secrets read (fresh when asked); a bundle that does not load is logged and left. */
  private async take(bundle: InUse['bundle'], fresh: boolean, secretValues?: InUse['secretValues']): Promise<void> {
    const decoded = decodeBundleSnapshot(bundle);
    if (!decoded.ok) {
      this.refuse(bundle, decoded.problems);
      return;
    }
    const secretNames = storedSecretNames(decoded.compiled.config);
    const values = secretValues ?? (await this.readSecrets(secretNames, fresh));
    if (values === null) return;
    const secrets = this.secrets;
    const options =
      secrets === 'unread'
        ? ({ secrets: 'unread' } as const)
        : { secrets: secretLookupOf(values, (name) => secrets.where(name)) };
    const outcome = loadDecodedSnapshot(bundle, decoded.compiled, this.environment, options);
    if (!outcome.ok) {
      this.refuse(bundle, outcome.problems);
      return;
    }
    this.inUse = { bundle, secretNames, secretValues: values };
    this.synced.accept(outcome.snapshot);
  }

  private refuse(bundle: ConfigBundle, problems: readonly ConfigProblem[]): void {
    this.log.warn('the pushed configuration is not valid here; keeping the last good one', {
      version: bundle.version,
      problems: problems.map(formatProblem),
    });
  }
  /** The bundle in use is still current: confirmed, and loaded again if a secret's value changed. */
  private async keepWithSecrets(inUse: InUse, fresh: boolean): Promise<void> {
    if (inUse.secretNames.length > 0) {
      const values = await this.readSecrets(inUse.secretNames, fresh);
      if (values !== null && inUse.secretNames.some((name) => values.get(name) !== inUse.secretValues.get(name))) {
        this.log.info('a secret the configuration names has a new value; loading it', {
          version: inUse.bundle.version,
        });
        await this.take(inUse.bundle, false, values);
        return;
      }
    }
    this.synced.confirm();
  }

  /** The named secrets' values, or null (logged) when the store cannot be read. */
  private async readSecrets(names: readonly string[], fresh: boolean): Promise<InUse['secretValues'] | null> {
    if (this.secrets === 'unread' || names.length === 0) return new Map();
    try {
      return await this.secrets.read(names, fresh);
    } catch (error) {
      this.log.warn('the secrets the configuration names could not be read; keeping the last good configuration', {
        error,
      });
      return null;
    }
  }
}
