// Agents' bearer tokens checked in process, by aws-jwt-verify, with the checks API Gateway's JWT
// authorizer makes: the one token check of the agent authorizer (the HTTP API and the /tool/call-tool
// WebSocket API) and of the gRPC container. It finds the caller the token names; who that caller is
// (its entry in the configuration) is decided behind it (identifyCaller).
import { JwksValidationError } from 'aws-jwt-verify/error';
import { type Fetcher, SimpleFetcher } from 'aws-jwt-verify/https';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import type { JwtPayload } from 'aws-jwt-verify/jwt-model';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import * as z from 'zod';
import { type Caller, type ClaimNames, callerFromClaims } from '../auth/agent.js';
import { errorText } from '../errors.js';

export interface JwtAgentAuthenticatorOptions {
  /** The OIDC issuer; a token's `iss` must equal it. */
  readonly issuer: string;
  /**
   * Accepted audiences (or Cognito app client ids): the token's `aud` must name one, or, when it
   * has no `aud`, its `client_id` must be one (API Gateway's rule). null (or none) checks neither:
   * then a required scope binds the token to the gateway, as the stack's Cognito pool does, where
   * any app client granted the agent scope is an agent, added without a redeploy.
   */
  readonly audience: string | readonly string[] | null;
  readonly claimNames: ClaimNames;
  /** Where the issuer's keys are. @default the `jwks_uri` of the issuer's OpenID configuration */
  readonly jwksUri?: string;
  /** Scopes of which the token's `scope` (or `scp`) must carry at least one. @default none required */
  readonly requiredScopes?: readonly string[];
  /** How documents are fetched (tests serve them on loopback). @default aws-jwt-verify's HTTPS fetcher */
  readonly fetcher?: Fetcher;
}

/** The signature algorithms API Gateway's JWT authorizer accepts: RSA only. */
const acceptedAlgorithms = new Set(['RS256', 'RS384', 'RS512']);

const OpenIdConfiguration = z.object({ jwks_uri: z.url() });

const asList = (value: string | readonly string[] | null): readonly string[] | null => {
  const list = value === null ? [] : typeof value === 'string' ? [value] : value;
  return list.length === 0 ? null : list;
};

const scopesOf = (payload: JwtPayload): string[] => {
  const value = payload.scope ?? payload.scp;
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return typeof value === 'string' ? value.split(' ').filter((item) => item.length > 0) : [];
};

/** The checks aws-jwt-verify leaves to the caller, as API Gateway's JWT authorizer makes them. */
const authorizerChecks =
  (audience: readonly string[] | null, requiredScopes: readonly string[]) =>
  ({ header, payload }: { header: { alg?: string }; payload: JwtPayload }): void => {
    if (header.alg === undefined || !acceptedAlgorithms.has(header.alg)) throw new Error('unsupported algorithm');
    // aws-jwt-verify checks exp when present; the authorizer requires it.
    if (typeof payload.exp !== 'number') throw new Error('no expiry');
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000) throw new Error('issued in the future');
    if (audience !== null) {
      const named = payload.aud === undefined ? [payload.client_id] : [payload.aud].flat();
      if (!named.some((value) => typeof value === 'string' && audience.includes(value))) {
        throw new Error('not for this audience');
      }
    }
    if (requiredScopes.length > 0 && !scopesOf(payload).some((scope) => requiredScopes.includes(scope))) {
      throw new Error('no required scope');
    }
  };

/** The issuer's configuration or keys could not be had: the token was not judged. */
export class TokenCheckUnavailable extends Error {
  constructor(cause: unknown) {
    super(`The issuer's configuration or keys could not be had: ${errorText(cause)}`, {
      cause,
    });
    this.name = 'TokenCheckUnavailable';
  }
}

/**
 * A bearer token to the caller it names, or null for any token that is not valid (malformed,
 * unsigned or wrongly signed, expired or not yet valid, another issuer, audience or scope, or
 * naming no subject). Throws nothing for a bad token; throws TokenCheckUnavailable when the
 * issuer's configuration or keys cannot be had, so that an outage is never told as a bad token.
 * Throws at once when given neither an audience nor a required scope: any token of the issuer would do.
 */
export const jwtAgentAuthenticator = (options: JwtAgentAuthenticatorOptions) => {
  if (asList(options.audience) === null && (options.requiredScopes ?? []).length === 0) {
    throw new Error(
      "Agents' tokens need an audience or a required scope: without either, any token of the issuer would do.",
    );
  }
  const inner = options.fetcher ?? new SimpleFetcher();
  // A document that cannot be fetched judges no token: the failure is told as an outage.
  const fetcher: Fetcher = {
    fetch: (...args) =>
      inner.fetch(...args).catch((error: unknown) => {
        throw new TokenCheckUnavailable(error);
      }),
  };
  const jwksCache = new SimpleJwksCache({ fetcher });
  const fetchJson = async (uri: string): Promise<unknown> =>
    JSON.parse(new TextDecoder().decode(await fetcher.fetch(uri)));
  const audience = asList(options.audience);
  const customJwtCheck = authorizerChecks(audience, options.requiredScopes ?? []);
  // Discovery as API Gateway does it; retried on the next token after a failure.
  let verifier: Promise<ReturnType<typeof createVerifier>> | undefined;
  const createVerifier = (jwksUri: string) =>
    JwtVerifier.create({ issuer: options.issuer, audience: null, jwksUri, customJwtCheck }, { jwksCache });
  const verifierFor = () => {
    verifier ??= (async () => {
      if (options.jwksUri !== undefined) return createVerifier(options.jwksUri);
      const discovery = `${options.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      return createVerifier(OpenIdConfiguration.parse(await fetchJson(discovery)).jwks_uri);
    })().catch((error: unknown) => {
      verifier = undefined;
      throw error;
    });
    return verifier;
  };
  return async (token: string): Promise<Caller | null> => {
    const verify = await verifierFor().catch((error: unknown) => {
      throw error instanceof TokenCheckUnavailable ? error : new TokenCheckUnavailable(error);
    });
    try {
      return callerFromClaims(await verify.verify(token), options.claimNames);
    } catch (error) {
      // Keys that could not be fetched (or read) judge no token; anything else is the token's fault.
      if (error instanceof TokenCheckUnavailable) throw error;
      if (error instanceof JwksValidationError) throw new TokenCheckUnavailable(error);
      return null;
    }
  };
};
