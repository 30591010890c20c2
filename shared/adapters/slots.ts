// A fixed number of slots, waited for in order: how many calls one MCP server has in progress.

/** Waiting for one of a fixed number of slots; a waiter gives up when its signal aborts. */
export class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  acquire(limit: number, signal: AbortSignal): Promise<boolean> {
    if (this.active < limit) {
      this.active += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener('abort', giveUp);
        this.active += 1;
        resolve(true);
      };
      const giveUp = () => {
        const index = this.waiting.indexOf(wake);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      };
      if (signal.aborted) return resolve(false);
      signal.addEventListener('abort', giveUp, { once: true });
      this.waiting.push(wake);
    });
  }

  release(): void {
    this.active -= 1;
    this.waiting.shift()?.();
  }
}
