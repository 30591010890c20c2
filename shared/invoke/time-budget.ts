// How long a call to a system may take where it runs. A system's `timeout` is its own deadline; the
// function sending it has one too (Lambda stops it, and API Gateway answers /mcp within 30 s), and
// the outcome must still be recorded after the answer: a call is given the lesser of the two.

/** Time kept after a call's deadline to record its outcome (and answer) before the function stops. */
export const outcomeMarginMs = 2_000;

/** API Gateway gives an integration 30 s: the functions behind it are stopped a second sooner. */
export const apiFunctionTimeoutSeconds = 29;

/** The longest a direct call (through /mcp, /tool/call-tool or the channel) may take in AWS. */
export const directCallLimitMs = apiFunctionTimeoutSeconds * 1000 - outcomeMarginMs;

/**
 * A call's deadline: the system's timeout, cut to what the running function has left (`timeLeftMs`,
 * null where nothing stops it) less the margin to record the outcome; never below 1 ms.
 */
export const boundedTimeoutMs = (timeoutMs: number, timeLeftMs: number | null): number =>
  timeLeftMs === null ? timeoutMs : Math.max(1, Math.min(timeoutMs, timeLeftMs - outcomeMarginMs));
