// What a function needs only on some calls (the AWS SDK's KMS, Step Functions and EventBridge
// clients), loaded on the first such call: a direct call's cold start does not import them.

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

export const clientOf = <T extends object>(source: ClientSource<T>): Promise<T> =>
  typeof source === 'function' ? (source as () => Promise<T>)() : Promise.resolve(source);
