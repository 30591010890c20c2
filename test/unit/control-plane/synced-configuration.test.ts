// The staleness rule: the last good configuration serves only while its last sync is recent
// enough, and only while it leaves the gateway enabled.
import { describe, expect, it } from 'vitest';
import { SyncedConfiguration } from '../../../shared/control-plane/control-plane.js';
import { ManualClock } from '../../support/clock.js';
import { verifies } from '../../support/requirements.js';
import { adminOnlyConfig, snapshotOf } from '../../support/snapshots.js';

describe('SyncedConfiguration', () => {
  it(verifies('control.staleness', 'offers nothing before the first good load'), () => {
    const synced = new SyncedConfiguration(new ManualClock());
    expect(synced.state()).toEqual({ kind: 'unavailable', reason: 'not_loaded', snapshot: null });
    synced.confirm();
    expect(synced.state().kind).toBe('unavailable');
  });

  it(
    verifies('control.staleness', 'serves the last good configuration up to the allowed staleness, then stops'),
    async () => {
      const clock = new ManualClock();
      const synced = new SyncedConfiguration(clock);
      const snapshot = await snapshotOf(adminOnlyConfig({ staleness: '60s' }));
      synced.accept(snapshot);
      expect(synced.state()).toEqual({ kind: 'active', snapshot });
      clock.advance(60_000);
      expect(synced.state().kind).toBe('active');
      clock.advance(1);
      expect(synced.state()).toEqual({ kind: 'unavailable', reason: 'stale', snapshot });
      // A successful sync that finds nothing new counts as a sync.
      synced.confirm();
      expect(synced.state().kind).toBe('active');
    },
  );

  it(verifies('control.staleness', 'offers nothing while the configuration turns the gateway off'), async () => {
    const synced = new SyncedConfiguration(new ManualClock());
    synced.accept(await snapshotOf(adminOnlyConfig({ enabled: false })));
    expect(synced.state()).toMatchObject({ kind: 'unavailable', reason: 'disabled' });
  });
});
