// The load generator's thread (see load.ts): undici pools on loopback, one per job, closed after it.
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { Pool } from 'undici';
import { errorText } from '../shared/errors.js';
import { bodyNumberer, type LatencyResult, type LoadJob, type Target, type ThroughputResult } from './load.js';

interface Exchange {
  readonly ms: number;
  /** Why the answer was not good, or null. */
  readonly failure: string | null;
}

/** Each request's body, numbered in the order this thread sends them (see Target.numbered). */
const nextBody = bodyNumberer();

const exchange = async (pool: Pool, target: Target): Promise<Exchange> => {
  const started = performance.now();
  try {
    const response = await pool.request({
      path: target.path,
      method: 'POST',
      headers: target.headers,
      body: nextBody(target),
    });
    const text = await response.body.text();
    const ms = performance.now() - started;
    const good = response.statusCode === 200 && text.includes(target.expect);
    return { ms, failure: good ? null : `${response.statusCode}: ${text.slice(0, 300)}` };
  } catch (error) {
    return { ms: performance.now() - started, failure: errorText(error) };
  }
};

const latency = async (target: Target, warmup: number, count: number, pauseMs: number): Promise<LatencyResult> => {
  const pool = new Pool(target.origin, { connections: 1, pipelining: 1 });
  try {
    for (let index = 0; index < warmup; index += 1) await exchange(pool, target);
    const samples: number[] = [];
    let failures = 0;
    let firstFailure: string | null = null;
    for (let index = 0; index < count; index += 1) {
      const result = await exchange(pool, target);
      samples.push(result.ms);
      if (result.failure !== null) {
        failures += 1;
        firstFailure ??= result.failure;
      }
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    return { kind: 'latency', samples, failures, firstFailure };
  } finally {
    await pool.close();
  }
};

const throughput = async (target: Target, connections: number, durationMs: number): Promise<ThroughputResult> => {
  const pool = new Pool(target.origin, { connections, pipelining: 1 });
  const samples: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const started = performance.now();
  const until = started + durationMs;
  const loop = async () => {
    while (performance.now() < until) {
      const result = await exchange(pool, target);
      samples.push(result.ms);
      if (result.failure !== null) {
        failures += 1;
        firstFailure ??= result.failure;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, loop));
    const elapsedMs = performance.now() - started;
    return { kind: 'throughput', completed: samples.length - failures, failures, firstFailure, elapsedMs, samples };
  } finally {
    await pool.close();
  }
};

const port = parentPort;
if (port === null) throw new Error('load-worker.ts runs as a worker thread (see load.ts).');
port.on('message', (job: LoadJob) => {
  const work =
    job.kind === 'latency'
      ? latency(job.target, job.warmup, job.count, job.pauseMs ?? 0)
      : throughput(job.target, job.connections, job.durationMs);
  work.then(
    (result) => port.postMessage(result),
    (error: unknown) => port.postMessage({ kind: 'error', message: errorText(error) }),
  );
});
