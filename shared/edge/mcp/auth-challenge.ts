// What an unauthenticated MCP request is told (RFC 6750 challenge pointing at the RFC 9728
// protected-resource metadata), and that metadata document itself.
import {
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
} from '@modelcontextprotocol/server';
import { gatewayInfo } from '../../version.js';

/** The MCP endpoint's path under the public base URL. */
export const mcpPath = '/mcp';

const mcpResourceUrl = (publicBaseUrl: string): URL => new URL(mcpPath, publicBaseUrl);

const resourceMetadataUrl = (publicBaseUrl: string): string =>
  getOAuthProtectedResourceMetadataUrl(mcpResourceUrl(publicBaseUrl));

/**
 * 401 with `WWW-Authenticate: Bearer … resource_metadata="…"` (RFC 6750 §3). A request without a
 * bearer token gets no error code, as §3.1 asks; a token that is not valid gets `invalid_token`
 * and a description. The body says the same in words.
 */
export const unauthorizedResponse = (publicBaseUrl: string, tokenPresented: boolean): Response => {
  const metadataUrl = resourceMetadataUrl(publicBaseUrl);
  if (tokenPresented) {
    return bearerAuthChallengeResponse(
      new OAuthError(OAuthErrorCode.InvalidToken, 'The bearer token is not valid for this gateway.'),
      { resourceMetadataUrl: metadataUrl },
    );
  }
  // A URL's href holds no quote or backslash, so it goes into the quoted string as it is.
  return Response.json(
    { message: 'A bearer token is required: send Authorization: Bearer <token>.' },
    { status: 401, headers: { 'WWW-Authenticate': `Bearer resource_metadata="${metadataUrl}"` } },
  );
};

export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers?: string[];
  readonly bearer_methods_supported: string[];
  readonly resource_name: string;
}

export const protectedResourceMetadata = (
  publicBaseUrl: string,
  authorizationServers: readonly string[],
): ProtectedResourceMetadata => ({
  resource: mcpResourceUrl(publicBaseUrl).href,
  ...(authorizationServers.length > 0 ? { authorization_servers: [...authorizationServers] } : {}),
  bearer_methods_supported: ['header'],
  resource_name: gatewayInfo.title,
});
