// An API Gateway stage's throttling (steady rate and burst) for every API the stack serves agents
// from: the defaults, and the values API Gateway would not take refused at synthesis, naming them.

export interface StageThrottlingProps {
  /** Steady-state requests per second the stage accepts, all clients together. @default 200 */
  readonly rateLimitPerSecond?: number;
  /** Requests the stage accepts at once above the rate. @default 400 */
  readonly burstLimit?: number;
}

export const stageThrottling = (
  construct: string,
  props: StageThrottlingProps,
): { readonly rateLimit: number; readonly burstLimit: number } => {
  const rateLimit = props.rateLimitPerSecond ?? 200;
  const burstLimit = props.burstLimit ?? 400;
  if (!Number.isFinite(rateLimit) || rateLimit <= 0) {
    throw new Error(`${construct}: rateLimitPerSecond must be a number above 0 (got ${rateLimit}).`);
  }
  if (!Number.isInteger(burstLimit) || burstLimit < 1) {
    throw new Error(`${construct}: burstLimit must be a whole number of at least 1 (got ${burstLimit}).`);
  }
  return { rateLimit, burstLimit };
};
