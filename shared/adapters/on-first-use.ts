// What a function needs only on some calls (the AWS SDK's KMS, Step Functions and EventBridge
// clients), loaded on the first such call: a direct call's cold start does not import them. Each
// SDK package is loaded through a module of ours that re-exports what the gateway uses (sdk/):
// the bundles require the package from there, where an import() of the package itself would have
// Node parse its whole source first to tell whether it is an ES module (the SDK does not say).

/** `load` run once, on the first call; a load that fails is tried again on the next. */
export const onFirstUse = <T>(load: () => Promise<T>): (() => Promise<T>) => {
  let loading: Promise<T> | undefined;
  return () => {
    if (loading === undefined) {
      const started = load();
      loading = started;
      started.catch(() => {
        if (loading === started) loading = undefined;
      });
    }
    return loading;
  };
};

/** A client given as is, or made on first use. */
export type ClientSource<T> = T | (() => Promise<T>);

/** Whether a client source is its loader (a client given as is is an SDK client object, not a function). */
const isLoader = <T extends object>(source: ClientSource<T>): source is () => Promise<T> =>
  typeof source === 'function';

export const clientOf = <T extends object>(source: ClientSource<T>): Promise<T> =>
  isLoader(source) ? source() : Promise.resolve(source);
