// A piece of the local runtime's upkeep run now and then every so often, one run at a time (a
// tick that finds the last run still going is skipped), stopped before the store closes.

/** Starts `work` (which reports its own failures) now and every `everyMs`; the answer stops it, waiting for a run under way. */
export const startPeriodicTask = (work: () => Promise<void>, everyMs: number): (() => Promise<void>) => {
  let running: Promise<void> | null = null;
  const tick = () => {
    running ??= work().finally(() => {
      running = null;
    });
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
};
