// OAuth client credentials (RFC 6749 §4.4) for an MCP server: the token endpoint from the
// configuration or found from the server's protected-resource metadata and its authorization
// server's metadata; the client authenticates with HTTP Basic; the token is kept until shortly
// before it expires, and dropped when the server refuses it.
import { discoverOAuthServerInfo, type FetchLike } from '@modelcontextprotocol/client';
import * as z from 'zod';
import type { ResolvedMcpSystem } from '../config/resolved.js';

const TokenAnswer = z.object({
  access_token: z.string().min(1).max(16_384),
  token_type: z.string().optional(),
  expires_in: z.number().positive().optional(),
});

/** Answers that are read whole by the gateway itself (token and metadata documents). */
export const maxDocumentBytes = 64 * 1024;
/** A token is taken again this long before it says it expires. */
const tokenMarginMs = 30_000;
/** A token that does not say when it expires is used for this long. */
const defaultTokenMs = 5 * 60_000;

const isLoopback = (url: URL): boolean => ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);

export class ClientCredentialsTokens {
  private token: { readonly value: string; readonly until: number } | null = null;
  private pending: Promise<string> | null = null;

  constructor(
    private readonly system: ResolvedMcpSystem,
    private readonly credentials: Extract<ResolvedMcpSystem['credentials'], { type: 'oauth_client_credentials' }>,
    private readonly plainFetch: FetchLike,
  ) {}

  get(): Promise<string> {
    if (this.token !== null && Date.now() < this.token.until) return Promise.resolve(this.token.value);
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** The server refused the token: the next call takes a new one. */
  clear(): void {
    this.token = null;
  }

  private async tokenEndpoint(): Promise<URL> {
    if (this.credentials.token_url !== null) return new URL(this.credentials.token_url);
    // Found from the server's protected-resource metadata and its authorization server's metadata.
    const info = await discoverOAuthServerInfo(this.system.url, { fetchFn: this.plainFetch });
    const endpoint = info.authorizationServerMetadata?.token_endpoint;
    if (endpoint === undefined) throw new Error('the authorization server names no token endpoint');
    const url = new URL(endpoint);
    // The client secret goes only over TLS (or to this machine).
    if (url.protocol !== 'https:' && !isLoopback(url)) throw new Error('the token endpoint is not https');
    return url;
  }

  private async fetchToken(): Promise<string> {
    const endpoint = await this.tokenEndpoint();
    const token = await requestClientCredentialsToken(
      endpoint,
      {
        clientId: this.credentials.client_id,
        clientSecret: this.credentials.client_secret,
        scope: this.credentials.scope,
        resource: this.system.url,
      },
      { fetch: this.plainFetch, timeoutMs: this.system.timeout },
    );
    const lifetime = token.expiresIn === undefined ? defaultTokenMs : token.expiresIn * 1000;
    this.token = { value: token.accessToken, until: Date.now() + Math.max(0, lifetime - tokenMarginMs) };
    return token.accessToken;
  }
}

export interface ClientCredentialsRequest {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string | null;
  /** The resource indicator (RFC 8707), for servers that bind tokens to one; null to send none. */
  readonly resource: string | null;
}

/**
 * One client-credentials token (RFC 6749 §4.4), the client authenticated with HTTP Basic. What it
 * throws names the endpoint's status, never the secret or the token.
 */
export const requestClientCredentialsToken = async (
  endpoint: URL,
  request: ClientCredentialsRequest,
  options: { readonly fetch: FetchLike; readonly timeoutMs: number },
): Promise<{ readonly accessToken: string; readonly expiresIn: number | undefined }> => {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (request.resource !== null) form.set('resource', request.resource);
  if (request.scope !== null) form.set('scope', request.scope);
  const basic = Buffer.from(
    `${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.clientSecret)}`,
  ).toString('base64');
  const response = await options.fetch(endpoint, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: form.toString(),
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`the token endpoint answered ${response.status}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error('the token endpoint answered no JSON');
  }
  const parsed = TokenAnswer.safeParse(body);
  if (!parsed.success) throw new Error('the token endpoint answered no access token');
  return { accessToken: parsed.data.access_token, expiresIn: parsed.data.expires_in };
};
