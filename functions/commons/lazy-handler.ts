// A Lambda entry point composed from the environment on its first invocation, once per container,
// so importing a function's module (in tests, in the local runtime) reads no environment at all.

/**
 * The handler `build` makes, built when first invoked and reused after. A build that throws is
 * not kept: the invocation fails and the next one builds again, so a container whose first
 * attempt met a missing variable or a passing fault does not answer with that error forever.
 */
export const lazyHandler = <Args extends unknown[], Result>(
  build: () => (...args: Args) => Result,
): ((...args: Args) => Result) => {
  let built: ((...args: Args) => Result) | undefined;
  return (...args) => {
    built ??= build();
    return built(...args);
  };
};
