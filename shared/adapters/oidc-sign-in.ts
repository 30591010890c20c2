// Approver sign-in through OpenID Connect (authorization code with PKCE, state and nonce), with
// openid-client doing discovery, the token exchange and the ID token's validation.
import * as oidc from 'openid-client';
import type { Approver } from '../approvals/approver.js';

export interface OidcSettings {
  /** The provider's issuer URL (discovery at /.well-known/openid-configuration). */
  readonly issuer: string;
  readonly clientId: string;
  /** A confidential client's secret; none for a public client (PKCE alone). */
  readonly clientSecret?: string;
  /** The ID token claim that names the approver. */
  readonly idClaim: string;
  /** The ID token claim listing the approver's groups. */
  readonly groupsClaim: string;
  readonly scopes: string;
  /** Allows an http:// issuer (a provider on loopback in tests); never set in AWS. */
  readonly allowHttp?: boolean;
}

/** What a sign-in in progress must remember between the redirect and the callback. */
export interface OidcFlow {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
}

const listClaim = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value === 'string') return value.split(/[\s,]+/).filter((item) => item.length > 0);
  return [];
};

export class OidcSignIn {
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(private readonly settings: OidcSettings) {}

  private discover(): Promise<oidc.Configuration> {
    this.configuration ??= oidc
      .discovery(
        new URL(this.settings.issuer),
        this.settings.clientId,
        this.settings.clientSecret === undefined ? undefined : { client_secret: this.settings.clientSecret },
        this.settings.clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(this.settings.clientSecret),
        this.settings.allowHttp === true ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        // A failed discovery is tried again on the next sign-in.
        this.configuration = undefined;
        throw error;
      });
    return this.configuration;
  }

  async start(redirectUri: string): Promise<{ url: string; flow: OidcFlow }> {
    const configuration = await this.discover();
    const flow: OidcFlow = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      response_type: 'code',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, flow };
  }

  /** Exchanges the callback's code and reads the approver from the validated ID token. */
  async finish(callbackUrl: URL, flow: OidcFlow): Promise<Approver> {
    const configuration = await this.discover();
    // The redirect_uri sent to the token endpoint is the callback's own address.
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (claims === undefined) throw new Error('The identity provider returned no ID token.');
    // An address the provider says it has not verified does not name an approver.
    if (this.settings.idClaim === 'email' && claims.email_verified === false) {
      throw new Error('The identity provider has not verified this email address.');
    }
    const id = claims[this.settings.idClaim];
    if (typeof id !== 'string' || id.length === 0) {
      throw new Error(`The ID token has no "${this.settings.idClaim}" claim to name the approver.`);
    }
    const name = typeof claims.name === 'string' ? claims.name : typeof claims.email === 'string' ? claims.email : null;
    return { id, name, groups: listClaim(claims[this.settings.groupsClaim]) };
  }
}
