// An OpenID Connect provider on loopback for the console's OIDC sign-in tests (approvers' and
// customers'): panva's oidc-provider in the test process, with one public client (authorization
// code with PKCE), the accounts the test names, and the provider's development login and consent
// pages (any password is accepted; the login names the account), which a real browser fills in.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { listen } from '../../infra/local/net.js';

/** An account's claims, by the login typed on the provider's sign-in page. */
export type OidcAccounts = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export interface OidcProviderOptions {
  /** The client's only redirect URI (the console's callback). */
  readonly redirectUri: string;
  readonly accounts: OidcAccounts;
  readonly clientId?: string;
  /** A port to listen on (127.0.0.1); a free one when not given. */
  readonly port?: number;
  /** More scopes and the claims each releases (e.g. `customer: ['customer_id']`). */
  readonly scopes?: Readonly<Record<string, readonly string[]>>;
  /** Puts auth_time in every ID token, asked for or not (as Cognito does). */
  readonly requireAuthTime?: boolean;
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`: discovery is at /.well-known/openid-configuration. */
  readonly issuer: string;
  readonly port: number;
  readonly clientId: string;
  /** Failures the provider itself reported (server_error); a clean run has none. */
  readonly errors: string[];
  close(): Promise<void>;
}

export const startOidcProvider = async (options: OidcProviderOptions): Promise<TestOidcProvider> => {
  const server = createServer();
  const listening = await listen(server, '127.0.0.1', options.port ?? 0);
  const issuer = `http://127.0.0.1:${listening.port}`;
  const clientId = options.clientId ?? 'approval-console';
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        redirect_uris: [options.redirectUri],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        ...(options.requireAuthTime === true ? { require_auth_time: true } : {}),
      },
    ],
    // Each scope and the claims it releases; `groups` is a scope of its own.
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
      ...Object.fromEntries(Object.entries(options.scopes ?? {}).map(([scope, claims]) => [scope, [...claims]])),
    },
    // The console reads the approver from the ID token, so the scopes' claims go there too.
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    jwks: { keys: [{ ...signingKey, use: 'sig', alg: 'RS256', kid: 'test-signing-key' }] },
    features: { devInteractions: { enabled: true } },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    findAccount: async (_context, sub) => {
      const claims = options.accounts[sub];
      if (claims === undefined) return undefined;
      return { accountId: sub, claims: () => ({ sub, ...claims }) };
    },
  });
  const errors: string[] = [];
  provider.on('server_error', (_context, error) => {
    errors.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
  });
  server.on('request', provider.callback());
  return { issuer, port: listening.port, clientId, errors, close: () => listening.close() };
};

const formAction = (html: string): string | undefined => /<form[^>]* action="([^"]+)"/.exec(html)?.[1];
const promptOf = (html: string): string | undefined => /name="prompt" value="([a-z]+)"/.exec(html)?.[1];

/**
 * Goes through the provider's login (any password) and consent pages over plain HTTP, as a browser
 * would, for an authorization request the console made (or a test altered); answers where the
 * provider then sends the browser: the redirect URI with the code, the state and the issuer, or
 * with an error.
 */
export const authorizationResponse = async (
  authorizationUrl: URL,
  login: string,
  redirectUri: string,
  /** The browser's cookies at the provider, kept across calls to keep its session; a new jar each time by default. */
  jar = new Map<string, string>(),
) => {
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 12; step += 1) {
    const response = await fetch(url, {
      redirect: 'manual',
      headers: {
        ...(jar.size === 0 ? {} : { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') }),
        ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form === undefined ? {} : { method: 'POST', body: form.toString() }),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const index = pair.indexOf('=');
      jar.set(pair.slice(0, index), pair.slice(index + 1));
    }
    const location = response.headers.get('location');
    if (location !== null) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.href.startsWith(`${redirectUri}?`)) return next;
      url = next;
      form = undefined;
      continue;
    }
    const html = await response.text();
    const action = formAction(html);
    const prompt = promptOf(html);
    if (response.status !== 200 || action === undefined || prompt === undefined) {
      throw new Error(`The provider answered ${response.status} at ${url.href}:\n${html.slice(0, 2_000)}`);
    }
    url = new URL(action.replaceAll('&amp;', '&'), url);
    form =
      prompt === 'login'
        ? new URLSearchParams({ prompt, login, password: 'any password will do' })
        : new URLSearchParams({ prompt });
  }
  throw new Error(`The provider never sent the browser back to ${redirectUri}.`);
};

/** An app client of the agent token issuer: OAuth client credentials, as a Cognito app client. */
export interface AgentClient {
  readonly id: string;
  readonly secret: string;
}

export interface AgentTokenIssuer {
  /** `http://127.0.0.1:<port>`: discovery is at /.well-known/openid-configuration. */
  readonly issuer: string;
  /** A client-credentials access token for the client, asking for the scope. */
  token(client: AgentClient, scope: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * An issuer of agents' tokens shaped like the stack's Cognito pool issues them: the client
 * credentials grant, a JWT access token (RS256) with `client_id`, `sub` (the client id), `scope`
 * and `token_use: access`, and nothing about groups or customers. (oidc-provider always puts an
 * `aud`, the resource, in a JWT access token; Cognito does not, and the gateway reads none.)
 */
export const startAgentTokenIssuer = async (options: {
  readonly clients: readonly AgentClient[];
  readonly scope: string;
}): Promise<AgentTokenIssuer> => {
  const server = createServer();
  const listening = await listen(server, '127.0.0.1', 0);
  const issuer = `http://127.0.0.1:${listening.port}`;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: options.clients.map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: options.scope,
    })),
    scopes: [options.scope],
    jwks: { keys: [{ ...signingKey, use: 'sig', alg: 'RS256', kid: 'agent-signing-key' }] },
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'https://gateway.example.com',
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: options.scope,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    formats: {
      customizers: {
        jwt: (_context, _token, jwt) => {
          jwt.payload.token_use = 'access';
        },
      },
    },
    ttl: { ClientCredentials: 600 },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    token: async (client, scope) => {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
      });
      const body: unknown = await response.json();
      const token = typeof body === 'object' && body !== null ? Reflect.get(body, 'access_token') : undefined;
      if (response.status !== 200 || typeof token !== 'string') {
        throw new Error(`The issuer answered ${response.status}: ${JSON.stringify(body)}`);
      }
      return token;
    },
    close: () => listening.close(),
  };
};
