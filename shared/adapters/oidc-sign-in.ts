// Sign-in through OpenID Connect (authorization code with PKCE, state and nonce), with openid-client
// doing discovery, the token exchange and the ID token's validation: approvers to the console, and
// customers to the one call they confirm, who must authenticate afresh every time.
import type { Configuration, IDToken } from 'openid-client';
import type { Approver, Customer } from '../approvals/approver.js';
import { onFirstUse } from './on-first-use.js';

/** openid-client, loaded on the first sign-in or sign-out: a console page with a session needs none of it. */
const openidClient = onFirstUse(() => import('./sdk/openid-client.js'));

interface OidcClientSettings {
  /** The provider's issuer URL (discovery at /.well-known/openid-configuration). */
  readonly issuer: string;
  readonly clientId: string;
  /** A confidential client's secret; none for a public client (PKCE alone). */
  readonly clientSecret?: string;
  readonly scopes: string;
  /** Allows an http:// issuer (a provider on loopback in tests); never set in AWS. */
  readonly allowHttp?: boolean;
}

export interface OidcSettings extends OidcClientSettings {
  /** The ID token claim that names the approver. */
  readonly idClaim: string;
  /** The ID token claim listing the approver's groups. */
  readonly groupsClaim: string;
  /**
   * The provider's logout endpoint when its discovery names no end_session_endpoint (Cognito's
   * `https://<domain>/logout`), sent `client_id` and `logout_uri`. @default discovery's end_session_endpoint
   */
  readonly logoutUrl?: string;
}

export interface CustomerOidcSettings extends OidcClientSettings {
  /** The ID token claim holding the customer id (the one agents act for). */
  readonly idClaim: string;
}

/** What a sign-in in progress must remember between the redirect and the callback. */
export interface OidcFlow {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  /** When a fresh sign-in started (ms since the epoch): the provider's auth_time may not be older. */
  readonly started?: number;
}

/**
 * How far the provider's clock may run behind ours when its auth_time is held to a sign-in's start.
 * A minute: clocks synchronized by NTP differ by far less, and a person cannot sign in at the
 * provider, be sent back, and have that sign-in replayed into a later one inside it.
 */
export const authTimeSkewMs = 60_000;

const listClaim = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value === 'string') return value.split(/[\s,]+/).filter((item) => item.length > 0);
  return [];
};

/** The claim naming the person: a non-empty string (an email the provider has not verified is none). */
const personId = (claims: IDToken, claim: string, who: 'approver' | 'customer'): string => {
  if (claim === 'email' && claims.email_verified === false) {
    throw new Error('The identity provider has not verified this email address.');
  }
  const id = claims[claim];
  if (typeof id !== 'string' || id.length === 0) {
    throw new Error(`The ID token has no "${claim}" claim to name the ${who}.`);
  }
  return id;
};

const nameOf = (claims: IDToken): string | null =>
  typeof claims.name === 'string' ? claims.name : typeof claims.email === 'string' ? claims.email : null;

/** A new authentication asked of the provider: how old it may be at most, and the classes it must be of. */
export interface FreshSignIn {
  readonly maxAgeS: number;
  /** The acr values to ask for (`acr_values`); null to ask for none. */
  readonly acrValues: readonly string[] | null;
}

/** When the person authenticated (epoch ms), by the ID token's auth_time; null when it says nothing. */
const authenticatedAt = (claims: IDToken): number | null =>
  typeof claims.auth_time === 'number' && Number.isFinite(claims.auth_time) ? claims.auth_time * 1000 : null;

/** One client at one provider: the authorization request and the validated ID token it ends with. */
class OidcClient {
  private configuration: Promise<Configuration> | undefined;

  constructor(
    private readonly settings: OidcClientSettings,
    /** Ask for a new authentication every time and hold the provider to it (customers). */
    private readonly fresh: boolean,
  ) {}

  private discover(): Promise<Configuration> {
    this.configuration ??= this.discovered().catch((error: unknown) => {
      // A failed discovery is tried again on the next sign-in.
      this.configuration = undefined;
      throw error;
    });
    return this.configuration;
  }

  private async discovered(): Promise<Configuration> {
    const oidc = await openidClient();
    return oidc.discovery(
      new URL(this.settings.issuer),
      this.settings.clientId,
      this.settings.clientSecret === undefined ? undefined : { client_secret: this.settings.clientSecret },
      this.settings.clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(this.settings.clientSecret),
      this.settings.allowHttp === true ? { execute: [oidc.allowInsecureRequests] } : undefined,
    );
  }

  /**
   * The provider's address for a sign-in starting `now`; `fresh` asks for a new authentication (a
   * customer's every time, an approver's signing in again for a call) and holds the provider to it.
   */
  async start(redirectUri: string, now: number, fresh?: FreshSignIn): Promise<{ url: string; flow: OidcFlow }> {
    const [configuration, oidc] = await Promise.all([this.discover(), openidClient()]);
    const asked = fresh ?? (this.fresh ? { maxAgeS: 0, acrValues: null } : null);
    const flow: OidcFlow = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      ...(asked === null ? {} : { started: now }),
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      response_type: 'code',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      // Whatever session the provider holds, the person authenticates again now. Both are only
      // asked for (a provider may ignore them, a browser may strip them): auth_time decides below.
      ...(asked === null ? {} : { prompt: 'login', max_age: String(asked.maxAgeS) }),
      // The classes a call needs are asked for too; the decision holds the returned acr to them.
      ...(asked === null || asked.acrValues === null ? {} : { acr_values: asked.acrValues.join(' ') }),
    });
    return { url: url.href, flow };
  }

  /** The provider's end-session endpoint sending the browser back to `returnUri`; null when it has none. */
  async endSessionUrl(returnUri: string): Promise<string | null> {
    const [configuration, oidc] = await Promise.all([this.discover(), openidClient()]);
    if (configuration.serverMetadata().end_session_endpoint === undefined) return null;
    return oidc.buildEndSessionUrl(configuration, {
      client_id: this.settings.clientId,
      post_logout_redirect_uri: returnUri,
    }).href;
  }

  /** Exchanges the callback's code and answers the validated ID token's claims. */
  async claims(callbackUrl: URL, flow: OidcFlow): Promise<IDToken> {
    const [configuration, oidc] = await Promise.all([this.discover(), openidClient()]);
    // The redirect_uri sent to the token endpoint is the callback's own address.
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (claims === undefined) throw new Error('The identity provider returned no ID token.');
    if (this.fresh || flow.started !== undefined) freshAuthentication(claims, flow);
    return claims;
  }
}

/** A fresh sign-in's ID token says when the person authenticated: not before the sign-in started. */
export const freshAuthentication = (claims: Pick<IDToken, 'auth_time'>, flow: OidcFlow): void => {
  if (flow.started === undefined) throw new Error('The sign-in did not record when it started.');
  const authTime = claims.auth_time;
  if (typeof authTime !== 'number' || !Number.isFinite(authTime)) {
    throw new Error('The ID token has no auth_time, so a fresh sign-in cannot be told from an old session.');
  }
  if (authTime * 1000 < flow.started - authTimeSkewMs) {
    throw new Error(
      `The identity provider reused an authentication from ${new Date(authTime * 1000).toISOString()}, before this sign-in started (${new Date(flow.started).toISOString()}).`,
    );
  }
};

/** Approvers: the console's session names the approver and their groups from the ID token. */
export class OidcSignIn {
  private readonly client: OidcClient;

  constructor(private readonly settings: OidcSettings) {
    this.client = new OidcClient(settings, false);
  }

  start(redirectUri: string): Promise<{ url: string; flow: OidcFlow }> {
    return this.client.start(redirectUri, Date.now());
  }

  /**
   * Signing in again for a call that asks a fresh or strong sign-in: the provider is asked for a
   * new authentication (`prompt=login`, `max_age`, and `acr_values` when the call names classes),
   * and its auth_time is held to this sign-in's start (`now`, the console's clock).
   */
  startAgain(redirectUri: string, now: number, fresh: FreshSignIn): Promise<{ url: string; flow: OidcFlow }> {
    return this.client.start(redirectUri, now, fresh);
  }

  /**
   * Where signing out sends the browser so the provider's session ends too, then back to
   * `returnUri` (which the provider must list for this client): the configured logout endpoint
   * (Cognito's), else discovery's end_session_endpoint; null when the provider has neither.
   */
  async signOutUrl(returnUri: string): Promise<string | null> {
    if (this.settings.logoutUrl === undefined) return this.client.endSessionUrl(returnUri);
    const url = new URL(this.settings.logoutUrl);
    url.searchParams.set('client_id', this.settings.clientId);
    url.searchParams.set('logout_uri', returnUri);
    return url.href;
  }

  /** Exchanges the callback's code and reads the approver from the validated ID token. */
  async finish(callbackUrl: URL, flow: OidcFlow): Promise<Approver> {
    const claims = await this.client.claims(callbackUrl, flow);
    return {
      id: personId(claims, this.settings.idClaim, 'approver'),
      name: nameOf(claims),
      groups: listClaim(claims[this.settings.groupsClaim]),
      signedInAt: authenticatedAt(claims),
      acr: typeof claims.acr === 'string' && claims.acr.length > 0 ? claims.acr : null,
    };
  }
}

/**
 * Customers: every sign-in asks for a new authentication (`prompt=login`, `max_age=0`) and the ID
 * token's auth_time must not be older than the sign-in's start; the customer id comes from the
 * configured claim.
 */
export class CustomerOidcSignIn {
  private readonly client: OidcClient;

  constructor(private readonly settings: CustomerOidcSettings) {
    this.client = new OidcClient(settings, true);
  }

  /** The provider's address for a sign-in starting `now` (ms since the epoch, the console's clock). */
  start(redirectUri: string, now: number): Promise<{ url: string; flow: OidcFlow }> {
    return this.client.start(redirectUri, now);
  }

  async finish(callbackUrl: URL, flow: OidcFlow): Promise<Customer> {
    const claims = await this.client.claims(callbackUrl, flow);
    const id = personId(claims, this.settings.idClaim, 'customer');
    return { id, name: typeof claims.name === 'string' ? claims.name : null };
  }
}
