// dynalite on a thread of its own: the local runtime's store serves its requests there, so its work
// (the signature checks, parsing, LevelDB) runs beside the gateway's, on another core, instead of
// between the gateway's steps on one event loop. The thread loads dynalite-server.ts through tsx,
// as the runtime itself is loaded, and answers over its message port: listening, the count of
// kept buffers that share a slab, closed. Open cursors are counted in shared memory.
import { Worker } from 'node:worker_threads';
import type { DynaliteOptions, DynaliteServer } from './dynalite-server.js';
import type { StoreThreadAnswer, StoreThreadRequest, StoreThreadStart } from './store-thread-worker.js';

/** What the thread says when it could not start its store (the error's message and code, if any). */
export class StoreThreadError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'StoreThreadError';
  }
}

export const startDynaliteThread = async (options: DynaliteOptions): Promise<DynaliteServer> => {
  const cursors = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const worker = new Worker(new URL('./store-thread-worker.ts', import.meta.url), {
    workerData: { options, cursors },
    // The thread compiles the store's TypeScript as this process does.
    execArgv: [...process.execArgv, '--import', 'tsx'],
    // The store's own log lines are dynalite's, which it writes only when verbose.
    stdout: false,
    stderr: false,
  });
  const waiting = new Map<number, (value: number) => void>();
  let lastId = 0;
  let ended: Error | null = null;
  const started = new Promise<string>((resolve, reject) => {
    const onExit = (code: number) =>
      reject(new StoreThreadError(`the store's thread ended (exit code ${code})`, undefined));
    worker.once('error', reject);
    worker.once('exit', onExit);
    worker.once('message', (start: StoreThreadStart) => {
      worker.off('error', reject);
      worker.off('exit', onExit);
      if (start.kind === 'listening') resolve(start.endpoint);
      else reject(new StoreThreadError(start.message, start.code));
    });
  });
  let endpoint: string;
  try {
    endpoint = await started;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  worker.on('message', (answer: StoreThreadAnswer) => {
    waiting.get(answer.id)?.(answer.value);
    waiting.delete(answer.id);
  });
  // A store that fails while the gateway runs fails the process, as it would on the gateway's own thread.
  worker.on('error', (error) => {
    ended = error;
    throw error;
  });
  const ask = (kind: StoreThreadRequest['kind']) =>
    new Promise<number>((resolve, reject) => {
      if (ended !== null) {
        reject(ended);
        return;
      }
      lastId += 1;
      waiting.set(lastId, resolve);
      worker.postMessage({ id: lastId, kind } satisfies StoreThreadRequest);
    });
  let closing: Promise<void> | undefined;
  return {
    endpoint,
    openCursors: () => Atomics.load(cursors, 0),
    sharedBuffersKept: () => ask('sharedBuffersKept'),
    close: () => {
      closing ??= (async () => {
        // The store closes its server and its database before the thread ends: the data folder's
        // LevelDB lock is released, so a store can open it again in this process.
        if (ended === null) await ask('close');
        await worker.terminate();
      })();
      return closing;
    },
  };
};
