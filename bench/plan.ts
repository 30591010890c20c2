// How much the benchmark does: the full run (about fifteen minutes, ten of them the memory load)
// and --quick (a smoke check of every section in about a minute, with too few samples to judge by).

export interface Plan {
  readonly name: 'full' | 'quick';
  /**
   * Latency mode, direct calls: interleaved rounds, timed calls per target and round, untimed first.
   * The rounds fall into the judged runs (floor-ratios.ts), so a multiple of three.
   */
  readonly latencyRounds: number;
  readonly latencyCount: number;
  readonly latencyWarmup: number;
  /**
   * Untimed calls per target before the first round: the JIT's warm-up, so the rounds time the
   * steady state (a fresh process's first call is timed by itself, in the cold-start section).
   */
  readonly latencyPrimer: number;
  /** Throughput mode: fixed concurrency, one warm-up run per target, then rotated rounds (in the judged runs too). */
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
  /**
   * Untimed held calls per target before the first round, rejected before the rounds start (each one
   * is held, and rejected, on its own: a few hundred in all warm the path without doubling the section).
   */
  readonly heldPrimer: number;
  /** Held calls traced one at a time, and the pause after each (its approval run's steps end in it). */
  readonly heldPathCalls: number;
  readonly heldPathPauseMs: number;
  /** Approvals timed from the click to the system call. */
  readonly decisionTrials: number;
  /** Held calls approved and rejected for their approval run's transitions (expiry: one). */
  readonly outcomeTrials: number;
  /** Fresh processes per bundle for the import time, and whether to time them without source maps too. */
  readonly importRuns: number;
  readonly importWithoutSourceMaps: boolean;
  /** Fresh processes whose first tools/call to the bundled MCP function is timed. */
  readonly firstCallRuns: number;
  /** Steady load of direct calls on the local runtime in its own process, for its resident memory. */
  readonly memoryLoadMs: number;
  /** The first part of that load, after which memory counts as warmed up. */
  readonly memoryWarmupMs: number;
  /** How often the process's resident memory is read during the load. */
  readonly memorySampleMs: number;
  /** Calls in flight at once during that load. */
  readonly memoryConnections: number;
  /** Timed plain reads of the other agent per phase of the fairness section (alone, flooded, alone). */
  readonly fairnessCalls: number;
  /** The run is stopped (exit code 1) if it has not ended by then. */
  readonly watchdogMs: number;
}

export const plans: Readonly<Record<Plan['name'], Plan>> = {
  full: {
    name: 'full',
    latencyRounds: 9,
    latencyCount: 300,
    latencyWarmup: 30,
    latencyPrimer: 1_500,
    connections: 16,
    throughputWarmupMs: 1_500,
    throughputRounds: 15,
    throughputMs: 1_500,
    storeCountCalls: 20,
    heldRounds: 6,
    heldCount: 60,
    heldWarmup: 5,
    heldPrimer: 100,
    heldPathCalls: 120,
    heldPathPauseMs: 25,
    decisionTrials: 15,
    outcomeTrials: 3,
    importRuns: 11,
    importWithoutSourceMaps: true,
    firstCallRuns: 5,
    memoryLoadMs: 600_000,
    memoryWarmupMs: 60_000,
    memorySampleMs: 5_000,
    memoryConnections: 4,
    fairnessCalls: 100,
    // The ten-minute memory load and everything else, with room for a slow machine.
    watchdogMs: 1_320_000,
  },
  quick: {
    name: 'quick',
    latencyRounds: 3,
    latencyCount: 30,
    latencyWarmup: 5,
    latencyPrimer: 50,
    connections: 16,
    throughputWarmupMs: 300,
    throughputRounds: 3,
    throughputMs: 500,
    storeCountCalls: 5,
    heldRounds: 1,
    heldCount: 15,
    heldWarmup: 2,
    heldPrimer: 10,
    heldPathCalls: 15,
    heldPathPauseMs: 25,
    decisionTrials: 3,
    outcomeTrials: 1,
    importRuns: 1,
    importWithoutSourceMaps: false,
    firstCallRuns: 1,
    memoryLoadMs: 20_000,
    memoryWarmupMs: 4_000,
    memorySampleMs: 2_000,
    memoryConnections: 4,
    fairnessCalls: 20,
    watchdogMs: 240_000,
  },
};
