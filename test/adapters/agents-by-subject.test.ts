// Deployed agents end to end at the handler tier: client-credentials tokens shaped like the stack's
// Cognito pool issues them (`client_id`, `scope`, `token_use`, no groups; from a local OpenID
// provider), checked by the agent authorizer as the stack configures it (no audience, the agent
// scope), its context handed to the MCP function as API Gateway hands it on, and the agent's
// groups from the configuration's `agents:` entry listing the token's subject: the demo
// organization's policies decide, its ERP on loopback answers, the executions table is dynalite.
import { Logger } from '@aws-lambda-powertools/logger';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import type { Fetcher } from 'aws-jwt-verify/https';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentAuthorizer } from '../../functions/agent-authorizer.js';
import type { CallerContext } from '../../functions/commons/caller-context.js';
import { createMcpFunction } from '../../functions/mcp.js';
import { lambdaContext } from '../../infra/local/http-front.js';
import { jwtAgentAuthenticator } from '../../shared/adapters/jwt-agent-authenticator.js';
import type { ResolvedAgent } from '../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import { type ChannelBed, startChannelBed } from '../support/channel-aws.js';
import { type AgentClient, type AgentTokenIssuer, startAgentTokenIssuer } from '../support/oidc-provider.js';
import { verifies } from '../support/requirements.js';

const scope = 'approval-gateway/invoke';
const host = 'abc123.execute-api.eu-west-1.amazonaws.com';
/** The app client the configuration lists as procurement-agent. */
const procurementClient: AgentClient = { id: 'procurementclient0000000001', secret: 'procurement-secret' };
/** An app client created after the deploy, which no entry lists yet. */
const laterClient: AgentClient = { id: 'createdlaterclient00000002', secret: 'later-secret' };

/** Plain HTTP on loopback: aws-jwt-verify's own fetcher speaks HTTPS only. */
const loopbackFetcher: Fetcher = {
  fetch: async (uri) => {
    const response = await fetch(uri);
    if (response.status !== 200) throw new Error(`${uri} answered ${response.status}`);
    return response.arrayBuffer();
  },
};

let bed: ChannelBed;
let pool: AgentTokenIssuer;
/** Another issuer, with an app client of the same id as the listed one. */
let stranger: AgentTokenIssuer;
let agents: readonly ResolvedAgent[];
let mcp: ReturnType<typeof createMcpFunction>;
let authorizer: ReturnType<typeof createAgentAuthorizer>;

const listed = (id: string, subject: string, groups: string[]): ResolvedAgent => ({
  id,
  token: null,
  tokenFromEnvironment: false,
  subject,
  groups,
  customer: null,
});

beforeAll(async () => {
  bed = await startChannelBed();
  pool = await startAgentTokenIssuer({ clients: [procurementClient, laterClient], scope });
  stranger = await startAgentTokenIssuer({ clients: [procurementClient], scope });
  agents = [listed('procurement-agent', procurementClient.id, ['procurement'])];
  const demo = await bed.services.controlPlane.current();
  if (demo.snapshot === null) throw new Error('the demo configuration did not load');
  const snapshot: GatewaySnapshot = demo.snapshot;
  // The demo configuration, its agents: entries being whatever the test lists now.
  const services = {
    ...bed.services,
    controlPlane: {
      current: async () => ({
        kind: 'active' as const,
        snapshot: { ...snapshot, config: { ...snapshot.config, agents } },
      }),
    },
  };
  mcp = createMcpFunction({
    services,
    logger: new Logger({ serviceName: 'agents-by-subject-test', logLevel: 'SILENT' }),
    allowedHostnames: null,
    allowedOrigins: [],
    publicUrl: null,
  });
  // As the stack configures it with its Cognito pool (AGENT_JWT_AUDIENCE empty, AGENT_CLAIM client_id).
  authorizer = createAgentAuthorizer({
    authenticate: jwtAgentAuthenticator({
      issuer: pool.issuer,
      audience: null,
      requiredScopes: [scope],
      claimNames: { agent: 'client_id', groups: null, customer: null },
      fetcher: loopbackFetcher,
    }),
    logger: new Logger({ serviceName: 'agents-by-subject-test', logLevel: 'SILENT' }),
  });
}, 60_000);

afterAll(async () => {
  await Promise.all([bed?.close(), pool?.close(), stranger?.close()]);
});

const payloadOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));

/** What the agent authorizer passes on for this Authorization header (its HTTP API answer's context). */
const authorize = async (authorization: string): Promise<CallerContext> => {
  const answer = await authorizer(
    {
      version: '2.0',
      type: 'REQUEST',
      routeArn: 'arn:aws:execute-api:eu-west-1:111111111111:abc123/$default/POST/mcp',
      identitySource: [authorization],
      routeKey: 'ANY /mcp',
      rawPath: '/mcp',
      headers: { authorization, host },
      requestContext: { requestId: 'Vx1cDFbXIAMFpbw=' },
    },
    lambdaContext('agent-authorizer', 10_000),
  );
  if (!('isAuthorized' in answer)) throw new Error('an HTTP API event got a WebSocket answer');
  expect(answer.isAuthorized).toBe(true);
  return answer.context;
};

/** A tools/call on /mcp as API Gateway delivers it once the authorizer has answered. */
const callTool = async (
  authorization: string,
  name: string,
  args: Record<string, unknown>,
  /** What the authorizer's cached answer holds, when not the answer it gives now. */
  cached?: CallerContext,
) => {
  const context = cached ?? (await authorize(authorization));
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: { [PROTOCOL_VERSION_META_KEY]: '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: 'ANY /mcp',
    rawPath: '/mcp',
    rawQueryString: '',
    headers: {
      host,
      authorization,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
      'x-forwarded-proto': 'https',
    },
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '111111111111',
      apiId: 'abc123',
      domainName: host,
      domainPrefix: 'abc123',
      http: { method: 'POST', path: '/mcp', protocol: 'HTTP/1.1', sourceIp: '192.0.2.10', userAgent: 'agent/1.0' },
      requestId: 'Vx1cDFbXIAMFpbw=',
      routeKey: 'ANY /mcp',
      stage: '$default',
      time: '02/Dec/2026:06:00:00 +0000',
      timeEpoch: Date.now(),
      // API Gateway hands a Lambda authorizer's context on under `lambda`.
      ...{ authorizer: { lambda: context } },
    },
  };
  const result = await mcp(event, lambdaContext('mcp', 30_000));
  return { context, result, outcome: () => JSON.parse(String(result.body)).result.structuredContent };
};

const smallOrder = { vendor_id: 'V-100', amount: '250', currency: 'EUR' };

describe('deployed agents named by their token subject', () => {
  it(
    verifies(
      ['agents.identity-from-config', 'agents.any-app-client'],
      "runs a Cognito-shaped client-credentials token as the agent its subject's entry lists, with that entry's groups",
    ),
    async () => {
      const token = await pool.token(procurementClient, scope);
      // Shaped like Cognito's: the client, the scope, an access token, and nothing about groups.
      expect(payloadOf(token)).toMatchObject({ client_id: procurementClient.id, scope, token_use: 'access' });
      expect(payloadOf(token)).not.toHaveProperty('groups');
      const call = await callTool(`Bearer ${token}`, 'erp.purchase_orders.create', smallOrder);
      expect(call.result.statusCode).toBe(200);
      // Procurement's small orders run at once: a group policy allowed it.
      const outcome = call.outcome();
      expect(outcome).toMatchObject({ status: 'succeeded' });
      expect(await bed.services.store.get(outcome.execution_id)).toMatchObject({ agent_id: 'procurement-agent' });
    },
  );

  it(
    verifies(
      ['agents.any-app-client', 'agents.identity-from-config'],
      'lets in an app client created after the deploy, with no groups until an entry lists it, then with its groups',
    ),
    async () => {
      const token = await pool.token(laterClient, scope);
      const unlisted = await callTool(`Bearer ${token}`, 'erp.purchase_orders.create', smallOrder);
      expect(unlisted.context).toMatchObject({ subject: laterClient.id, groups: '[]' });
      // Let in, as an agent with no groups: the group policy refuses it.
      expect(unlisted.result.statusCode).toBe(200);
      expect(unlisted.outcome()).toMatchObject({ status: 'denied' });
      // The configuration lists it (config:push, no deploy): the same token now runs with its groups.
      agents = [...agents, listed('purchasing-bot', laterClient.id, ['procurement'])];
      try {
        const outcome = (await callTool(`Bearer ${token}`, 'erp.purchase_orders.create', smallOrder)).outcome();
        expect(outcome).toMatchObject({ status: 'succeeded' });
        expect(await bed.services.store.get(outcome.execution_id)).toMatchObject({ agent_id: 'purchasing-bot' });
      } finally {
        agents = agents.filter((agent) => agent.id !== 'purchasing-bot');
      }
    },
  );

  it(
    verifies(
      ['agents.identity-from-config', 'agents.unauthorized-challenge'],
      "answers 401 to another issuer's token naming a listed client id: it never reaches that client's entry",
    ),
    async () => {
      const forged = await stranger.token(procurementClient, scope);
      expect(payloadOf(forged)).toMatchObject({ client_id: procurementClient.id, sub: procurementClient.id, scope });
      const call = await callTool(`Bearer ${forged}`, 'erp.purchase_orders.create', smallOrder);
      expect(call.context).toEqual({});
      expect(call.result.statusCode).toBe(401);
      expect(call.result.headers?.['www-authenticate']).toMatch(/^Bearer .*resource_metadata="https:\/\/abc123\./);
    },
  );

  it(
    verifies(
      'agents.unauthorized-challenge',
      "answers 401 to a caller whose token expired while the authorizer's answer stayed cached",
    ),
    async () => {
      const token = await pool.token(procurementClient, scope);
      const context = await authorize(`Bearer ${token}`);
      const expired = { ...context, expiresAt: String(Math.floor(Date.now() / 1000) - 1) };
      const call = await callTool(`Bearer ${token}`, 'erp.purchase_orders.create', smallOrder, expired);
      expect(call.result.statusCode).toBe(401);
      expect(call.result.headers?.['www-authenticate']).toMatch(/^Bearer /);
    },
  );
});
