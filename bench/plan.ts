// How much the benchmark does: the full run (about two minutes) and --quick (a smoke check of
// every section in about fifteen seconds, with too few samples to judge by).

export interface Plan {
  readonly name: 'full' | 'quick';
  /** Latency mode, direct calls: interleaved rounds, timed calls per target and round, untimed first. */
  readonly latencyRounds: number;
  readonly latencyCount: number;
  readonly latencyWarmup: number;
  /** Throughput mode: fixed concurrency, one warm-up run per target, then rotated rounds. */
  readonly connections: number;
  readonly throughputWarmupMs: number;
  readonly throughputRounds: number;
  readonly throughputMs: number;
  /** Direct calls whose store requests are counted. */
  readonly storeCountCalls: number;
  /** Latency mode, held calls. */
  readonly heldRounds: number;
  readonly heldCount: number;
  readonly heldWarmup: number;
  /** Approvals timed from the click to the system call. */
  readonly decisionTrials: number;
  /** Held calls approved and rejected for their approval run's transitions (expiry: one). */
  readonly outcomeTrials: number;
  /** Fresh processes per bundle for the import time, and whether to time them without source maps too. */
  readonly importRuns: number;
  readonly importWithoutSourceMaps: boolean;
  /** The run is stopped (exit code 1) if it has not ended by then. */
  readonly watchdogMs: number;
}

export const plans: Readonly<Record<Plan['name'], Plan>> = {
  full: {
    name: 'full',
    latencyRounds: 10,
    latencyCount: 300,
    latencyWarmup: 30,
    connections: 16,
    throughputWarmupMs: 1_500,
    throughputRounds: 10,
    throughputMs: 1_500,
    storeCountCalls: 20,
    heldRounds: 6,
    heldCount: 60,
    heldWarmup: 5,
    decisionTrials: 15,
    outcomeTrials: 3,
    importRuns: 7,
    importWithoutSourceMaps: true,
    watchdogMs: 480_000,
  },
  quick: {
    name: 'quick',
    latencyRounds: 2,
    latencyCount: 30,
    latencyWarmup: 5,
    connections: 16,
    throughputWarmupMs: 300,
    throughputRounds: 1,
    throughputMs: 800,
    storeCountCalls: 5,
    heldRounds: 1,
    heldCount: 15,
    heldWarmup: 2,
    decisionTrials: 3,
    outcomeTrials: 1,
    importRuns: 1,
    importWithoutSourceMaps: false,
    watchdogMs: 120_000,
  },
};
