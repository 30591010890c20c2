// How the local runtime reads its stop signals. A signal sent to the process group (a terminal's
// Ctrl-C, a service manager's stop, `kill -- -PGID`, `timeout`) reaches the runtime and may reach it
// again through whatever started it and relays signals: one stop arrives twice within a moment.
// Taking the copy as "stop at once" would cut calls in flight short, so the same signal repeated
// within a moment is the same request; a further signal still stops at once.

/** What one received signal asks for. */
export type StopRequest =
  /** The first signal: stop cleanly (refuse new requests, let calls in flight finish). */
  | 'stop'
  /** A copy of the first, within a moment: the same clean stop. */
  | 'same'
  /** Another signal: stop at once. */
  | 'force';

/** How long after the first signal the same signal counts as its copy. */
const repeatedSignalMs = 1_000;

/** Reads the signals the runtime receives, in order (now: the time of each, in ms). */
export const stopSignals = (now: () => number, repeatMs = repeatedSignalMs) => {
  let first: { readonly signal: string; readonly at: number } | undefined;
  let copyTaken = false;
  return (signal: string): StopRequest => {
    const at = now();
    if (first === undefined) {
      first = { signal, at };
      return 'stop';
    }
    if (!copyTaken && signal === first.signal && at - first.at <= repeatMs) {
      copyTaken = true;
      return 'same';
    }
    return 'force';
  };
};
