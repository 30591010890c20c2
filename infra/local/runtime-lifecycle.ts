// How the local runtime stops: each part it starts says how it drains and how it closes, and a
// stop (a signal, a test, a start that failed half-way) undoes them in one order.
import type { Logger } from '@aws-lambda-powertools/logger';

/** A start that cannot go on; the message says why, for the person who ran `npm start`. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** The runtime's loggers, one per service name, at the run's level. */
export type LoggerFor = (serviceName: string) => Logger;

/**
 * The stop of a run. A clean stop drains first, in order (nothing new taken, work in flight
 * finished), then closes every part, the last started first.
 */
export class RuntimeStops {
  private readonly drains: (() => Promise<void>)[] = [];
  private readonly cleanups: (() => Promise<void>)[] = [];

  /** Closes a part at the stop, before the parts started before it. */
  onClose(cleanup: () => Promise<void>): void {
    this.cleanups.push(cleanup);
  }

  /** Drains, run in the order given, before anything closes. */
  onDrain(...drains: (() => Promise<void>)[]): void {
    this.drains.push(...drains);
  }

  readonly stop = async (): Promise<void> => {
    for (const drain of this.drains.splice(0)) await drain();
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup();
  };
}
