// The public documents: the protected-resource metadata (RFC 9728), which names an authorization
// server only where one exists and the resource by the configured public URL; and the receipt
// key's JWK Set.
import { generateKeyPairSync } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createResourceMetadataFunction } from '../../../functions/resource-metadata.js';
import { lambdaContext } from '../../../infra/local/http-front.js';
import { KeyReceiptSigner } from '../../../shared/adapters/key-receipt-signer.js';
import { jwksPath, jwkThumbprint } from '../../../shared/receipts/signer.js';
import { verifies } from '../../support/requirements.js';

const logger = new Logger({ serviceName: 'resource-metadata-test', logLevel: 'SILENT' });

const event = {
  version: '2.0',
  routeKey: 'GET /.well-known/oauth-protected-resource/mcp',
  rawPath: '/.well-known/oauth-protected-resource/mcp',
  rawQueryString: '',
  headers: { host: 'evil.example' },
  isBase64Encoded: false,
  requestContext: {
    accountId: '0',
    apiId: 'test',
    domainName: 'api.example.com',
    domainPrefix: 'api',
    http: {
      method: 'GET',
      path: '/.well-known/oauth-protected-resource/mcp',
      protocol: 'HTTP/1.1',
      sourceIp: '127.0.0.1',
      userAgent: 'test',
    },
    requestId: 'r',
    routeKey: 'GET /.well-known/oauth-protected-resource/mcp',
    stage: '$default',
    time: '',
    timeEpoch: 0,
  },
} satisfies APIGatewayProxyEventV2;

const receiptKeys = new KeyReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);

const documentsFunction = (authorizationServers: string[]) =>
  createResourceMetadataFunction({ logger, publicUrl: 'https://api.example.com', authorizationServers, receiptKeys });

const documentFrom = async (authorizationServers: string[]) => {
  const result = await documentsFunction(authorizationServers)(event, lambdaContext('resource-metadata', 5_000));
  return JSON.parse(String(result.body));
};

describe('the protected-resource metadata', () => {
  it(
    verifies(
      'auth.metadata-authorization-servers',
      'names the stack’s issuer where there is one, and no server where there is none',
    ),
    async () => {
      const issuer = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example';
      expect(await documentFrom([issuer])).toMatchObject({
        resource: 'https://api.example.com/mcp',
        authorization_servers: [issuer],
      });
      const local = await documentFrom([]);
      expect(local).not.toHaveProperty('authorization_servers');
      // The configured public URL names the resource, not the Host header.
      expect(local.resource).toBe('https://api.example.com/mcp');
    },
  );

  it(verifies('receipt-key.jwks', 'serves the receipt key set, public and cacheable for five minutes'), async () => {
    const jwks = { ...event, rawPath: jwksPath, routeKey: `GET ${jwksPath}` };
    const result = await documentsFunction([])(jwks, lambdaContext('resource-metadata', 5_000));
    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({
      'cache-control': 'public, max-age=300',
      'content-type': 'application/json',
    });
    const body = JSON.parse(String(result.body));
    expect(body).toEqual(await receiptKeys.publicKeys());
    expect(body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(body.keys[0].kid).toBe(jwkThumbprint(body.keys[0]));
  });
});
