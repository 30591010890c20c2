// An OpenID Connect provider on loopback for the console's OIDC sign-in tests (approvers' and
// customers'): panva's oidc-provider in the test process, with one public client (authorization
// code with PKCE), the accounts the test names, and the provider's development login and consent
// pages (any password is accepted; the login names the account), which a real browser fills in.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
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
  /** `http(s)://127.0.0.1:<port>`: discovery is at /.well-known/openid-configuration. */
  readonly issuer: string;
  /** A client-credentials access token for the client, asking for the scope. */
  token(client: AgentClient, scope: string): Promise<string>;
  /** Registers one more app client with the scopes, as an operator adds one to a Cognito pool. */
  addClient(client: AgentClient, scopes?: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export interface AgentTokenIssuerOptions {
  readonly clients: readonly AgentClient[];
  /** The scope every client is granted. */
  readonly scope: string;
  /** More scopes of the resource server, granted only to the clients added with them. */
  readonly otherScopes?: readonly string[];
  /** HTTPS with this key and certificate, as Cognito's issuer is; plain HTTP when not given. */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** Where the keys are served: Cognito's `/.well-known/jwks.json`. @default oidc-provider's `/jwks` */
  readonly jwksPath?: string;
}

/** POSTs a form over HTTP or HTTPS (trusting the issuer's own certificate) and reads the JSON answer. */
const postForm = (url: string, headers: Record<string, string>, form: string, ca: string | undefined) =>
  new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const request = send(url, { method: 'POST', headers, ...(ca === undefined ? {} : { ca }) }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        try {
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (error) {
          reject(error);
        }
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(form);
  });

const clientMetadata = (client: AgentClient, scopes: readonly string[]) => ({
  client_id: client.id,
  client_secret: client.secret,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: scopes.join(' '),
});

/**
 * An issuer of agents' tokens shaped like the stack's Cognito pool issues them: the client
 * credentials grant, a JWT access token (RS256) with `client_id`, `sub` (the client id), `scope`
 * and `token_use: access`, and nothing about groups or customers. (oidc-provider always puts an
 * `aud`, the resource, in a JWT access token; Cognito does not, and the gateway reads none.)
 */
export const startAgentTokenIssuer = async (options: AgentTokenIssuerOptions): Promise<AgentTokenIssuer> => {
  const server = options.tls === undefined ? createServer() : createHttpsServer(options.tls);
  const listening = await listen(server, '127.0.0.1', 0);
  const issuer = `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${listening.port}`;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const allScopes = [options.scope, ...(options.otherScopes ?? [])];
  const provider = new Provider(issuer, {
    clients: options.clients.map((client) => clientMetadata(client, [options.scope])),
    scopes: allScopes,
    jwks: { keys: [{ ...signingKey, use: 'sig', alg: 'RS256', kid: 'agent-signing-key' }] },
    ...(options.jwksPath === undefined ? {} : { routes: { jwks: options.jwksPath } }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'https://gateway.example.com',
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: allScopes.join(' '),
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
      const answer = await postForm(
        `${issuer}/token`,
        {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
        options.tls?.cert,
      );
      const token =
        typeof answer.body === 'object' && answer.body !== null ? Reflect.get(answer.body, 'access_token') : undefined;
      if (answer.status !== 200 || typeof token !== 'string') {
        throw new Error(`The issuer answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      }
      return token;
    },
    // oidc-provider finds a client it was not configured with in its adapter (in memory).
    addClient: (client, scopes = [options.scope]) =>
      provider.Client.adapter.upsert(client.id, clientMetadata(client, scopes), 3600),
    close: () => listening.close(),
  };
};
