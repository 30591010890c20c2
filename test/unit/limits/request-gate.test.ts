// The in-memory gate on a clock the test moves: a token bucket per agent for the rate, a count of
// requests in progress for concurrency, and refusals that take nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentLimits } from '../../../shared/limits/agent-limits.js';
import { type Admission, RequestGate } from '../../../shared/limits/request-gate.js';
import { ManualClock } from '../../support/clock.js';
import { verifies } from '../../support/requirements.js';

const limits = (overrides: Partial<AgentLimits> = {}): AgentLimits => ({
  concurrentRequests: 100,
  requestsPerSecond: 2,
  burst: 4,
  pendingCalls: 10,
  requestBytesPerSecond: 1_000_000,
  requestBytesPerDay: 1_000_000_000,
  ...overrides,
});

const admitted = (admission: Admission): (() => void) => {
  if (admission.kind !== 'admitted') throw new Error(`expected an admission, got ${JSON.stringify(admission)}`);
  return admission.release;
};

describe('RequestGate', () => {
  it(verifies('limits.rate', 'admits a burst at once, then one request per 1/rate seconds'), () => {
    const clock = new ManualClock();
    const gate = new RequestGate(clock);
    const rate = limits();
    for (let index = 0; index < 4; index += 1) admitted(gate.admit('agent', rate))();
    expect(gate.admit('agent', rate)).toEqual({
      kind: 'refused',
      refusal: {
        status: 'denied',
        code: 'rate_limited',
        message: 'This agent may make 2 requests per second (bursts of 4); nothing ran. Try again in 1 s.',
        retryAfterSeconds: 1,
      },
      first: true,
    });
    // Only the first refusal of a run of them is marked, so a flood logs one line.
    expect(gate.admit('agent', rate)).toMatchObject({ kind: 'refused', first: false });
    clock.advance(499);
    expect(gate.admit('agent', rate).kind).toBe('refused');
    clock.advance(1);
    admitted(gate.admit('agent', rate))();
    expect(gate.admit('agent', rate).kind).toBe('refused');
    // A long pause refills the bucket only up to the burst.
    clock.advance(3_600_000);
    for (let index = 0; index < 4; index += 1) admitted(gate.admit('agent', rate))();
    expect(gate.admit('agent', rate).kind).toBe('refused');
  });

  it(
    verifies(
      'limits.rate',
      'never admits more than burst + rate × elapsed time, whatever the pattern of requests (property)',
    ),
    () => {
      fc.assert(
        fc.property(
          fc.record({ requestsPerSecond: fc.integer({ min: 1, max: 50 }), burst: fc.integer({ min: 1, max: 20 }) }),
          fc.array(fc.record({ waitMs: fc.integer({ min: 0, max: 400 }), requests: fc.integer({ min: 0, max: 30 }) }), {
            maxLength: 40,
          }),
          ({ requestsPerSecond, burst }, steps) => {
            const clock = new ManualClock();
            const gate = new RequestGate(clock);
            const rate = limits({ requestsPerSecond, burst });
            const start = clock.now();
            let admittedCount = 0;
            for (const step of steps) {
              clock.advance(step.waitMs);
              for (let index = 0; index < step.requests; index += 1) {
                const admission = gate.admit('agent', rate);
                if (admission.kind === 'admitted') {
                  admittedCount += 1;
                  admission.release();
                }
              }
              const allowed = burst + ((clock.now() - start) * requestsPerSecond) / 1000;
              expect(admittedCount).toBeLessThanOrEqual(Math.floor(allowed + 1e-9));
            }
          },
        ),
      );
    },
  );

  it(verifies('limits.rate', 'tells a slow rate how long to wait, in whole seconds'), () => {
    const clock = new ManualClock();
    const gate = new RequestGate(clock);
    const slow = limits({ requestsPerSecond: 0.1, burst: 1 });
    admitted(gate.admit('agent', slow))();
    clock.advance(2_500);
    const refused = gate.admit('agent', slow);
    expect(refused.kind === 'refused' && refused.refusal.retryAfterSeconds).toBe(8);
  });

  it(
    verifies('limits.concurrency', 'refuses past concurrent_requests until one answers, without spending the rate'),
    () => {
      const clock = new ManualClock();
      const gate = new RequestGate(clock);
      const two = limits({ concurrentRequests: 2, burst: 3, requestsPerSecond: 0.001 });
      const first = admitted(gate.admit('agent', two));
      admitted(gate.admit('agent', two));
      const refusal = gate.admit('agent', two);
      expect(refusal).toMatchObject({ kind: 'refused', refusal: { code: 'concurrency_limited' } });
      expect(refusal.kind === 'refused' && refusal.refusal.message).toBe(
        'This agent may have 2 requests in progress at once; nothing ran. Try again when one has answered.',
      );
      expect(gate.admit('agent', two).kind).toBe('refused');
      first();
      first();
      expect(gate.inFlight('agent')).toBe(1);
      // The refusals took no token: the third of the burst is still there.
      admitted(gate.admit('agent', two));
    },
  );

  it(verifies('limits.one-agent-cannot-starve', 'one agent at its limits leaves every other agent its own'), () => {
    const clock = new ManualClock();
    const gate = new RequestGate(clock);
    const rate = limits({ concurrentRequests: 1, burst: 1 });
    admitted(gate.admit('flood', rate));
    for (let index = 0; index < 1_000; index += 1) expect(gate.admit('flood', rate).kind).toBe('refused');
    admitted(gate.admit('quiet', rate))();
  });

  it(
    verifies('limits.bounded-memory', 'forgets idle agents once it remembers many, keeping the ones in progress'),
    () => {
      const clock = new ManualClock();
      const gate = new RequestGate(clock);
      const rate = limits({ concurrentRequests: 1, burst: 1 });
      const busy = admitted(gate.admit('busy', rate));
      for (let index = 0; index < 10_000; index += 1) admitted(gate.admit(`agent-${index}`, rate))();
      clock.advance(1_000);
      admitted(gate.admit('newcomer', rate))();
      expect(gate.inFlight('busy')).toBe(1);
      expect(gate.admit('busy', rate).kind).toBe('refused');
      busy();
      expect(gate.remembered()).toBeLessThan(10);
    },
  );
});
