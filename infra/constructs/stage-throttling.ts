// An API Gateway stage's throttling (steady rate and burst) for every API the stack serves agents
// from: the figures of shared/limits/transport-caps.ts unless the construct is told others, and
// the values API Gateway would not take refused at synthesis, naming them.
import { type StageThrottlingCaps, transportCaps } from '../../shared/limits/transport-caps.js';

export const stageThrottling = (
  construct: string,
  props: Partial<StageThrottlingCaps>,
): { readonly rateLimit: number; readonly burstLimit: number } => {
  const rateLimit = props.rateLimitPerSecond ?? transportCaps.apiStage.rateLimitPerSecond;
  const burstLimit = props.burstLimit ?? transportCaps.apiStage.burstLimit;
  if (!Number.isFinite(rateLimit) || rateLimit <= 0) {
    throw new Error(`${construct}: rateLimitPerSecond must be a number above 0 (got ${rateLimit}).`);
  }
  if (!Number.isInteger(burstLimit) || burstLimit < 1) {
    throw new Error(`${construct}: burstLimit must be a whole number of at least 1 (got ${burstLimit}).`);
  }
  return { rateLimit, burstLimit };
};
