// Watches requests arriving at this process's own HTTP servers through Node's built-in diagnostics
// channel (`http.server.request.start` fires for every request any http.Server here receives, once
// its headers are read), so the store and the demo ERP are observed on the wire without touching
// the gateway: DynamoDB operations by their X-Amz-Target, system calls by their x-request-id.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';

const channel = 'http.server.request.start';

/** DynamoDB operations that write (what DynamoDB bills as write requests). */
const writeOperations: ReadonlySet<string> = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);

/** DynamoDB operations that read (what DynamoDB bills as read requests). */
const readOperations: ReadonlySet<string> = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

export class WireWatch {
  private readonly storeCounts = new Map<string, number>();
  private readonly arrivals = new Map<string, (at: number) => void>();

  private readonly onRequest = (message: unknown) => {
    if (typeof message !== 'object' || message === null || !('request' in message)) return;
    const request = message.request as IncomingMessage;
    const port = request.socket.localPort;
    if (port === this.storePort) {
      const target = request.headers['x-amz-target'];
      const operation = typeof target === 'string' ? (target.split('.').pop() ?? target) : 'unknown';
      this.storeCounts.set(operation, (this.storeCounts.get(operation) ?? 0) + 1);
    } else if (this.systemPort !== null && port === this.systemPort) {
      const requestId = request.headers['x-request-id'];
      if (typeof requestId !== 'string') return;
      const waiter = this.arrivals.get(requestId);
      if (waiter === undefined) return;
      this.arrivals.delete(requestId);
      waiter(performance.now());
    }
  };

  constructor(
    /** The store's port (dynalite): its requests are counted by operation. */
    private readonly storePort: number,
    /** The system's port (the demo ERP), if any: arrivals can be awaited by request id. */
    private readonly systemPort: number | null,
  ) {
    subscribe(channel, this.onRequest);
  }

  /** Store operations counted since the last reset, by operation name. */
  storeOperations(): ReadonlyMap<string, number> {
    return new Map(this.storeCounts);
  }

  storeWrites(): number {
    let writes = 0;
    for (const [operation, count] of this.storeCounts) if (writeOperations.has(operation)) writes += count;
    return writes;
  }

  storeReads(): number {
    let reads = 0;
    for (const [operation, count] of this.storeCounts) if (readOperations.has(operation)) reads += count;
    return reads;
  }

  resetStore(): void {
    this.storeCounts.clear();
  }

  /** Resolves with the moment (performance.now) the system receives a call with this request id. */
  arrival(requestId: string, timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.arrivals.delete(requestId);
        reject(new Error(`the system did not receive ${requestId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.arrivals.set(requestId, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  close(): void {
    unsubscribe(channel, this.onRequest);
    this.arrivals.clear();
  }
}
