// The store's thread (store-thread.ts): starts dynalite with the options it was given, says where it
// listens, and answers its starter's requests until it is told to close.
import { parentPort, workerData } from 'node:worker_threads';
import { type DynaliteOptions, startDynalite } from './dynalite-server.js';

export interface StoreThreadRequest {
  readonly id: number;
  readonly kind: 'sharedBuffersKept' | 'close';
}

/** The thread's first message: where it listens, or why it could not start. */
export type StoreThreadStart =
  | { readonly kind: 'listening'; readonly endpoint: string }
  | { readonly kind: 'failed'; readonly message: string; readonly code: string | undefined };

/** The answer to a request, by its id (the count of shared buffers, or 0 once closed). */
export interface StoreThreadAnswer {
  readonly id: number;
  readonly value: number;
}

const port = parentPort;
if (port === null) throw new Error('store-thread-worker.ts runs as a worker thread (see store-thread.ts).');
const { options, cursors } = workerData as { options: DynaliteOptions; cursors: Int32Array };
const say = (message: StoreThreadStart | StoreThreadAnswer) => port.postMessage(message);

try {
  const server = await startDynalite(options, cursors);
  port.on('message', (request: StoreThreadRequest) => {
    if (request.kind === 'sharedBuffersKept') {
      void server.sharedBuffersKept().then((value) => say({ id: request.id, value }));
    } else {
      void server.close().then(() => {
        say({ id: request.id, value: 0 });
        port.close();
      });
    }
  });
  say({ kind: 'listening', endpoint: server.endpoint });
} catch (error) {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  say({ kind: 'failed', message: error instanceof Error ? error.message : String(error), code });
}
