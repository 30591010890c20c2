// How the runtime reads its stop signals: a copy of the first within a second is the same clean
// stop; anything further stops at once.
import { describe, expect, it } from 'vitest';
import { stopSignals } from '../../../infra/local/stop-signals.js';
import { ManualClock } from '../../support/clock.js';
import { verifies } from '../../support/requirements.js';

const reading = () => {
  const clock = new ManualClock();
  return { clock, read: stopSignals(() => clock.now()) };
};

describe('stopSignals', () => {
  it(verifies('local.group-stop-once', 'takes the same signal again within a second as the same stop'), () => {
    const { clock, read } = reading();
    expect(read('SIGTERM')).toBe('stop');
    clock.advance(1_000);
    expect(read('SIGTERM')).toBe('same');
    expect(read('SIGTERM')).toBe('force');
  });

  it(verifies('local.group-stop-once', 'forces on the same signal after a second, or on another signal'), () => {
    const late = reading();
    expect(late.read('SIGINT')).toBe('stop');
    late.clock.advance(1_001);
    expect(late.read('SIGINT')).toBe('force');
    const other = reading();
    expect(other.read('SIGTERM')).toBe('stop');
    expect(other.read('SIGINT')).toBe('force');
  });
});
