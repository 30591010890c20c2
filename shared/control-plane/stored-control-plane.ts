// The control plane of the deployed functions: the table's pointer to the deployed bundle is read
// at most once per refresh interval; the bundle itself is fetched and checked (hash, signature)
// only when the pointer names another version, and cached by the function instance. Each
// successful read counts as a sync; a refused bundle or an unreachable table or bucket keeps the
// last good configuration until the allowed staleness runs out. The snapshot is the one
// config:push compiled (MCP servers' tools included, as pushed): nothing is parsed, compiled or
// discovered here. `${secret:…}` values are read before the snapshot is resolved, again at each
// refresh (from the source's cache until it expires), and fresh after a system refused the
// credentials; a changed value makes a new snapshot of the same bundle.
import type { Clock } from '../clock.js';
import { type ConfigProblem, formatProblem, isLocalOnly } from '../config/resolved.js';
import { type SecretSource, secretLookupOf, storedSecretNames } from '../config/stored-secrets.js';
import type { Log } from '../log.js';
import {
  type BundleRead,
  type ConfigBundle,
  type ConfigBundleStore,
  type DeployedBundle,
  versionOf,
} from './bundle.js';
import { decodeBundleSnapshot, loadDecodedSnapshot, pushAgain } from './compiled-snapshot.js';
import { type ControlPlane, type ControlPlaneState, SyncedConfiguration } from './control-plane.js';

/** Fresh secret values are asked for at most this often, however many calls a system refuses. */
const freshSecretsEveryMs = 60_000;

/** The bundle in use and the secret values its snapshot was resolved with. */
interface InUse {
  readonly bundle: ConfigBundle;
  readonly secretNames: readonly string[];
  readonly secretValues: ReadonlyMap<string, string | undefined>;
}

export class StoredControlPlane implements ControlPlane {
  private readonly synced: SyncedConfiguration;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | null = null;
  /** The object last refused (key, version and hash). */
  private refused: string | null = null;
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
    const fresh = this.freshSecretsAsked;
    this.freshSecretsAsked = false;
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
    if (versionOf(deployed) === this.synced.lastGood?.version && this.inUse !== null) {
      await this.keepWithSecrets(this.inUse, fresh);
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
    if ((await this.take(read.bundle, fresh)) === 'refused') this.refused = identity;
  }

  /**
   * Loads a bundle with its secrets read (fresh when asked): taken, refused (logged), or left for
   * the next refresh when the secrets cannot be read now.
   */
  private async take(
    bundle: ConfigBundle,
    fresh: boolean,
    secretValues?: InUse['secretValues'],
  ): Promise<'taken' | 'refused' | 'later'> {
    const decoded = decodeBundleSnapshot(bundle);
    if (!decoded.ok) return this.refuse(bundle, decoded.problems);
    // The values only the local runtime uses are never read here (resolve.ts leaves them unread).
    const secretNames = storedSecretNames(decoded.compiled.config, isLocalOnly);
    const values = secretValues ?? (await this.readSecrets(secretNames, fresh));
    if (values === null) return 'later';
    const secrets = this.secrets;
    const options =
      secrets === 'unread'
        ? ({ secrets: 'unread' } as const)
        : { secrets: secretLookupOf(values, (name) => secrets.where(name)) };
    const outcome = loadDecodedSnapshot(bundle, decoded.compiled, this.environment, options);
    if (!outcome.ok) return this.refuse(bundle, outcome.problems);
    this.inUse = { bundle, secretNames, secretValues: values };
    this.synced.accept(outcome.snapshot);
    return 'taken';
  }

  private refuse(bundle: ConfigBundle, problems: readonly ConfigProblem[]): 'refused' {
    this.log.warn('the pushed configuration is not valid here; keeping the last good one', {
      version: bundle.version,
      problems: problems.map(formatProblem),
    });
    return 'refused';
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
