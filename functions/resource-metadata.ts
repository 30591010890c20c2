// GET /.well-known/oauth-protected-resource[/mcp]: the RFC 9728 document that tells an MCP
// client which authorization servers issue tokens for this gateway. Public, cacheable.
import type { Logger } from '@aws-lambda-powertools/logger';
import { protectedResourceMetadata } from '../shared/edge/mcp/auth-challenge.js';
import { processCommonEnvironment } from './commons/environment.js';
import { requestOrigin } from './commons/http-event.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { serviceLogger } from './commons/logger.js';
import { type HttpHandler, jsonErrorRenderer, withGatewayMiddleware } from './commons/middleware.js';

export interface ResourceMetadataFunctionDeps {
  readonly logger: Logger;
  readonly publicUrl: string | null;
  readonly authorizationServers: readonly string[];
}

export const createResourceMetadataFunction = (deps: ResourceMetadataFunctionDeps) => {
  const handle: HttpHandler = async (event) => ({
    statusCode: 200,
    headers: {
      'content-type': 'application/json',
      'cache-control': 'public, max-age=300',
      'access-control-allow-origin': '*',
    },
    body: JSON.stringify(protectedResourceMetadata(deps.publicUrl ?? requestOrigin(event), deps.authorizationServers)),
  });
  return withGatewayMiddleware(handle, { logger: deps.logger, render: jsonErrorRenderer });
};

export const handler = lazyHandler(() => {
  const environment = processCommonEnvironment();
  return createResourceMetadataFunction({
    logger: serviceLogger('resource-metadata'),
    publicUrl: environment.PUBLIC_URL ?? null,
    authorizationServers: environment.AUTHORIZATION_SERVERS,
  });
});
