// What the gateway may offer right now. The last good configuration is kept while the source is
// broken or unreachable, but only for the allowed staleness: past it, or when the configuration
// turns the gateway off, agents see only get_execution_status (fail closed).
import type { Clock } from '../clock.js';
import type { GatewaySnapshot } from './gateway-snapshot.js';

export type ControlPlaneState =
  | { readonly kind: 'active'; readonly snapshot: GatewaySnapshot }
  | {
      readonly kind: 'unavailable';
      readonly reason: 'disabled' | 'stale' | 'not_loaded';
      readonly snapshot: GatewaySnapshot | null;
    };

/** The port the MCP server asks on every request. */
export interface ControlPlane {
  current(): Promise<ControlPlaneState>;
}

/** Holds the last good snapshot and when the source last confirmed it. */
export class SyncedConfiguration {
  private snapshot: GatewaySnapshot | null = null;
  private syncedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: Clock) {}

  /** A good configuration was loaded (new or unchanged). */
  accept(snapshot: GatewaySnapshot): void {
    this.snapshot = snapshot;
    this.syncedAt = this.clock.now();
  }

  /** The source confirmed that the configuration held is still the current one. */
  confirm(): void {
    if (this.snapshot !== null) this.syncedAt = this.clock.now();
  }

  get lastGood(): GatewaySnapshot | null {
    return this.snapshot;
  }

  get lastSyncedAt(): number {
    return this.syncedAt;
  }

  state(): ControlPlaneState {
    const snapshot = this.snapshot;
    if (snapshot === null) return { kind: 'unavailable', reason: 'not_loaded', snapshot };
    if (!snapshot.config.settings.enabled) return { kind: 'unavailable', reason: 'disabled', snapshot };
    if (this.clock.now() - this.syncedAt > snapshot.config.settings.allowed_staleness) {
      return { kind: 'unavailable', reason: 'stale', snapshot };
    }
    return { kind: 'active', snapshot };
  }
}
