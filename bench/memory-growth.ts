// Whether resident memory stays flat under load: the growth per call, fitted over samples that
// pair the resident size with the calls made until then.
import { leastSquaresSlope } from './stats.js';

/**
 * The growth per 10 000 calls that still counts as flat: 1 MB, 100 bytes a call. Anything the
 * runtime kept per call (a record, a request's buffers, a closure) is kilobytes, so a leak shows
 * as ten times this or more; what legitimately moves the resident size without a leak (the
 * store's write buffer filling and flushing, the heap's next collection) is a few megabytes in
 * all, spread over the tens of thousands of calls of the fit.
 */
export const flatBytesPer10kCalls = 1024 * 1024;

export interface MemorySample {
  readonly elapsedMs: number;
  readonly calls: number;
  /** The process's resident size (VmRSS): the gateway, the embedded store's native memory, V8 itself. */
  readonly rssBytes: number;
  /**
   * What JavaScript still reaches after a full collection: the V8 heap in use plus the memory its
   * objects hold outside it (buffers). Whatever the runtime kept per call would be here; the
   * embedded store's LevelDB (its write buffer, block cache, open-table indexes) is not.
   */
  readonly reachableBytes: number;
}

/** Growth in bytes per 10 000 calls: the least-squares slope over the samples of the load's second half. */
export const growthPer10kCalls = (
  samples: readonly MemorySample[],
  loadMs: number,
  of: 'rssBytes' | 'reachableBytes' = 'rssBytes',
): number =>
  leastSquaresSlope(
    samples.filter((sample) => sample.elapsedMs >= loadMs / 2).map((sample) => ({ x: sample.calls, y: sample[of] })),
  ) * 10_000;
