// The load generator, on its own thread: the servers under test run on the main thread, the client
// here, so the client's own work does not queue on the event loop it measures. Jobs run one at a
// time, in the order the main thread sends them.
import { Worker } from 'node:worker_threads';

/** One HTTP request, repeated: where it goes and what a good answer contains. */
export interface Target {
  readonly name: string;
  /** What the server behind it does, for the report. */
  readonly description: string;
  readonly origin: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Text every good answer contains (a 200 without it counts as a failure). */
  readonly expect: string;
  /**
   * Text in the body each request replaces with its own number, as wide: each call then differs
   * from the others (a held call asked for again would join the one still waiting, not be held).
   */
  readonly numbered?: string;
}

/**
 * The bodies of successive requests: a target's own, or with its placeholder replaced by the
 * request's number (from 1, zero-padded to the placeholder's width, so every body is as long).
 */
export const bodyNumberer = () => {
  let sent = 0;
  return (target: Pick<Target, 'body' | 'numbered'>): string => {
    const placeholder = target.numbered;
    if (placeholder === undefined) return target.body;
    sent += 1;
    return target.body.replace(placeholder, String(sent).padStart(placeholder.length, '0').slice(-placeholder.length));
  };
};

/** Latency mode: one keep-alive connection, requests one after another, each timed. */
export interface LatencyJob {
  readonly kind: 'latency';
  readonly target: Target;
  /** Requests sent first and not timed (connection setup, caches). */
  readonly warmup: number;
  readonly count: number;
  /** Idle time after each timed answer before the next request (none unless given). */
  readonly pauseMs?: number;
}

/** Throughput mode: a fixed number of connections, each sending its next request as soon as one ends. */
export interface ThroughputJob {
  readonly kind: 'throughput';
  readonly target: Target;
  readonly connections: number;
  readonly durationMs: number;
}

export type LoadJob = LatencyJob | ThroughputJob;

export interface LatencyResult {
  readonly kind: 'latency';
  /** Milliseconds per request, from sending it to the last byte of its answer. */
  readonly samples: number[];
  readonly failures: number;
  readonly firstFailure: string | null;
}

export interface ThroughputResult {
  readonly kind: 'throughput';
  readonly completed: number;
  readonly failures: number;
  readonly firstFailure: string | null;
  readonly elapsedMs: number;
  /** Milliseconds per request under this load. */
  readonly samples: number[];
}

export type LoadResult = LatencyResult | ThroughputResult;

type WorkerAnswer = LoadResult | { readonly kind: 'error'; readonly message: string };

export class LoadClient {
  private readonly worker = new Worker(new URL('./load-worker.ts', import.meta.url));
  private queue: Promise<unknown> = Promise.resolve();

  run(job: LatencyJob): Promise<LatencyResult>;
  run(job: ThroughputJob): Promise<ThroughputResult>;
  run(job: LoadJob): Promise<LoadResult> {
    const next = this.queue.then(
      () =>
        new Promise<LoadResult>((resolve, reject) => {
          const onError = (error: Error) => {
            this.worker.off('message', onMessage);
            reject(error);
          };
          const onMessage = (answer: WorkerAnswer) => {
            this.worker.off('error', onError);
            if (answer.kind === 'error') reject(new Error(`load generator: ${answer.message}`));
            else resolve(answer);
          };
          this.worker.once('message', onMessage);
          this.worker.once('error', onError);
          this.worker.postMessage(job);
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
