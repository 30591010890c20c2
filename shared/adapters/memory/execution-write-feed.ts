// The writes of a process that writes every decision and outcome itself (the local runtime), told
// by its store as each lands (measured-store.ts) to whoever waits on that execution: a waiter costs
// a listener and a timer, not a read.
import type { Execution } from '../../executions/execution.js';
import type { ExecutionWrites, WriteWait } from '../../executions/execution-writes.js';

type Waiter = (execution: Execution) => void;

export class ExecutionWriteFeed implements ExecutionWrites {
  readonly #waiters = new Map<string, Set<Waiter>>();

  /** A write of this record landed: whoever waits on it looks. */
  written(execution: Execution): void {
    for (const waiter of this.#waiters.get(execution.execution_id) ?? []) waiter(execution);
  }

  awaitWrite(executionId: string, settles: (execution: Execution) => boolean, wait: WriteWait): Promise<boolean> {
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(executionId) ?? new Set<Waiter>();
      const end = (): void => {
        clearTimeout(limit);
        wait.signal.removeEventListener('abort', end);
        waiters.delete(waiter);
        if (waiters.size === 0) this.#waiters.delete(executionId);
        resolve(true);
      };
      const waiter: Waiter = (execution) => {
        if (settles(execution)) end();
      };
      const limit = setTimeout(end, wait.limitMs);
      waiters.add(waiter);
      this.#waiters.set(executionId, waiters);
      if (wait.signal.aborted) end();
      else wait.signal.addEventListener('abort', end, { once: true });
    });
  }

  /** How many waits are open (a test's view: an ended wait leaves nothing behind). */
  get waiting(): number {
    let count = 0;
    for (const waiters of this.#waiters.values()) count += waiters.size;
    return count;
  }
}
