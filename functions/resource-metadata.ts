// The gateway's public documents, read before or without a token: the protected-resource metadata
// (RFC 9728, GET /.well-known/oauth-protected-resource[/mcp]) that tells an MCP client which
// authorization servers issue tokens for this gateway, and the receipt key's JWK Set (GET
// /.well-known/jwks.json) a system checks approval receipts against. Both public and cacheable.
import type { Logger } from '@aws-lambda-powertools/logger';
import { defaultKmsClient } from '../shared/adapters/kms-client.js';
import { KmsReceiptSigner } from '../shared/adapters/kms-receipt-signer.js';
import { protectedResourceMetadata } from '../shared/edge/mcp/auth-challenge.js';
import { jwksPath, type ReceiptSigner } from '../shared/receipts/signer.js';
import { processPublicDocumentsEnvironment } from './commons/environment.js';
import { requestOrigin } from './commons/http-event.js';
import { lazyHandler } from './commons/lazy-handler.js';
import { serviceLogger } from './commons/logger.js';
import { type HttpHandler, jsonErrorRenderer, withGatewayMiddleware } from './commons/middleware.js';

export interface ResourceMetadataFunctionDeps {
  readonly logger: Logger;
  readonly publicUrl: string | null;
  readonly authorizationServers: readonly string[];
  /** The receipt key whose public part the JWK Set lists (in AWS, read with kms:GetPublicKey only). */
  readonly receiptKeys: Pick<ReceiptSigner, 'publicKeys'>;
}

/** Public documents: any origin may read them, and caches may keep them five minutes. */
const publicDocument = (document: unknown) => ({
  statusCode: 200,
  headers: {
    'content-type': 'application/json',
    'cache-control': 'public, max-age=300',
    'access-control-allow-origin': '*',
  },
  body: JSON.stringify(document),
});

export const createResourceMetadataFunction = (deps: ResourceMetadataFunctionDeps) => {
  const handle: HttpHandler = async (event) =>
    event.rawPath === jwksPath
      ? publicDocument(await deps.receiptKeys.publicKeys())
      : publicDocument(protectedResourceMetadata(deps.publicUrl ?? requestOrigin(event), deps.authorizationServers));
  return withGatewayMiddleware(handle, { logger: deps.logger, render: jsonErrorRenderer });
};

export const handler = lazyHandler(() => {
  const environment = processPublicDocumentsEnvironment();
  return createResourceMetadataFunction({
    logger: serviceLogger('resource-metadata'),
    publicUrl: environment.PUBLIC_URL ?? null,
    authorizationServers: environment.AUTHORIZATION_SERVERS,
    // The signer's public half: this function is granted kms:GetPublicKey on the key, never kms:Sign.
    receiptKeys: new KmsReceiptSigner(defaultKmsClient, environment.RECEIPT_KEY_ID),
  });
});
