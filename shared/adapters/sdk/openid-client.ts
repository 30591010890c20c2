// openid-client as the gateway uses it, loaded on the first sign-in (see oidc-sign-in.ts): through
// a module of ours naming what it uses, so the chunk holds those and what they need, not the
// whole package.
export {
  allowInsecureRequests,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  buildEndSessionUrl,
  ClientSecretBasic,
  calculatePKCECodeChallenge,
  discovery,
  None,
  randomNonce,
  randomPKCECodeVerifier,
  randomState,
} from 'openid-client';
