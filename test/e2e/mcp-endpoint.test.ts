// The MCP endpoint end to end: the local runtime as a real process, driven over real HTTP by the
// official MCP client in both protocol revisions, plus raw requests for the edges a client never sends.
//
// Long: both protocol revisions, every refusal at the edge, each its own exchange.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Client, SdkHttpError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import type { Execution } from '../../shared/executions/execution.js';
import { ResultObject } from '../../shared/result.js';
import { anExecution } from '../support/executions.js';
import { mcpHeaders, modernRequest, rawExchange, rawRequest } from '../support/http.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

let runtime: RuntimeProcess;
let store: DynamoDbExecutionStore;
let succeeded: Execution;
let pending: Execution;
let othersExecution: Execution;

const eras = [
  { era: 'legacy', label: '2025-11-25', options: {} },
  { era: 'modern', label: '2026-07-28', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
] as const;

const connect = async (token: string, era: (typeof eras)[number]) => {
  const client = new Client({ name: 'gateway-e2e', version: '1.0.0' }, era.options);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
};

const statusOf = async (client: Client, args: Record<string, unknown>) => {
  const answer = await client.callTool({ name: 'get_execution_status', arguments: args });
  const structured = ResultObject.parse(answer.structuredContent);
  const [first] = Array.isArray(answer.content) ? answer.content : [];
  const text = first !== undefined && first.type === 'text' ? first.text : undefined;
  return { answer, structured, text };
};

beforeAll(async () => {
  runtime = await startRuntimeProcess(['--memory']);
  store = new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );
  succeeded = anExecution({
    status: 'succeeded',
    result_json: JSON.stringify({ purchase_order: 'PO-1001', amount: '1500' }),
  });
  pending = anExecution({ status: 'pending_approval' });
  othersExecution = anExecution({ agent_id: 'support-agent', status: 'pending_approval' });
  for (const execution of [succeeded, pending, othersExecution]) await store.create(execution);
});

afterAll(async () => {
  await runtime?.stop();
});

describe('the two protocol revisions', () => {
  it(verifies('mcp.revision-2025', 'completes the initialize handshake and answers ping'), async () => {
    const client = await connect(demoTokens.procurement, eras[0]);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect(client.getServerVersion()).toMatchObject({ name: 'approval-gateway' });
      expect(client.getInstructions()).toContain('get_execution_status');
      expect(client.getDiscoverResult()).toBeUndefined();
      await expect(client.ping()).resolves.toEqual({});
    } finally {
      await client.close();
    }
  });

  it(verifies('mcp.revision-2026', 'answers server/discover and serves the stateless revision'), async () => {
    const client = await connect(demoTokens.procurement, eras[1]);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const discover = client.getDiscoverResult();
      expect(discover?.supportedVersions).toEqual(['2026-07-28']);
      // Tools, and the tasks extension (held calls as tasks; the 2025-era `tasks` slot is not sent).
      expect(discover?.capabilities).toEqual({
        tools: { listChanged: false },
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      });
      expect(client.getServerVersion()).toMatchObject({ name: 'approval-gateway' });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('get_execution_status');
    } finally {
      await client.close();
    }
  });
});

describe.each(eras)('over MCP $label', (era) => {
  it(verifies('list.status-tool-always', 'lists get_execution_status with its input and output schemas'), async () => {
    const client = await connect(demoTokens.procurement, era);
    try {
      const { tools } = await client.listTools();
      const status = tools.find((tool) => tool.name === 'get_execution_status');
      expect(status?.inputSchema).toMatchObject({
        type: 'object',
        required: ['execution_id'],
        properties: { execution_id: { type: 'string' } },
      });
      expect(status?.outputSchema?.required).toEqual([
        'status',
        'execution_id',
        'result',
        'code',
        'message',
        'approval_url',
        'input_errors',
      ]);
      expect(status?.annotations?.readOnlyHint).toBe(true);
    } finally {
      await client.close();
    }
  });

  it(
    verifies(['status.own-execution', 'result.fields-always-present'], 'answers the agent’s own execution'),
    async () => {
      const client = await connect(demoTokens.procurement, era);
      try {
        const done = await statusOf(client, { execution_id: succeeded.execution_id });
        expect(done.structured).toEqual({
          status: 'succeeded',
          execution_id: succeeded.execution_id,
          result: { purchase_order: 'PO-1001', amount: '1500' },
          code: null,
          message: null,
          approval_url: null,
          input_errors: null,
        });
        expect(done.text === undefined ? undefined : JSON.parse(done.text)).toEqual(done.structured);
        expect(Object.keys(done.answer.structuredContent ?? {})).toHaveLength(7);

        const waiting = await statusOf(client, { execution_id: pending.execution_id.toUpperCase() });
        expect(waiting.structured.status).toBe('pending_approval');
        expect(waiting.structured.execution_id).toBe(pending.execution_id);
      } finally {
        await client.close();
      }
    },
  );

  it(verifies('result.is-error', 'sets isError exactly for the error statuses'), async () => {
    const client = await connect(demoTokens.procurement, era);
    try {
      expect((await statusOf(client, { execution_id: succeeded.execution_id })).answer.isError).toBe(false);
      expect((await statusOf(client, { execution_id: pending.execution_id })).answer.isError).toBe(false);
      expect((await statusOf(client, { execution_id: othersExecution.execution_id })).answer.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it(
    verifies('status.not-found-indistinguishable', 'answers another agent’s id exactly like a missing one'),
    async () => {
      const client = await connect(demoTokens.procurement, era);
      try {
        const others = await statusOf(client, { execution_id: othersExecution.execution_id });
        const missing = await statusOf(client, { execution_id: '0199d2a4-5c1e-7b3a-9f10-2c8e4b7a1d55' });
        expect(others.structured).toMatchObject({ status: 'unknown', code: 'not_found', execution_id: null });
        expect(others.answer).toEqual(missing.answer);
        expect(others.text).toBe(missing.text);
      } finally {
        await client.close();
      }
      // The owner still sees it.
      const owner = await connect(demoTokens.support, era);
      try {
        expect((await statusOf(owner, { execution_id: othersExecution.execution_id })).structured.status).toBe(
          'pending_approval',
        );
      } finally {
        await owner.close();
      }
    },
  );

  it(verifies('status.invalid-id', 'answers unknown / invalid_arguments for an id that is not a UUID'), async () => {
    const client = await connect(demoTokens.procurement, era);
    try {
      const answer = await statusOf(client, { execution_id: 'PO-1001' });
      expect(answer.structured).toMatchObject({
        status: 'unknown',
        code: 'invalid_arguments',
        execution_id: null,
        input_errors: [{ path: '/execution_id', code: 'invalid_format' }],
      });
      expect(answer.answer.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('authentication', () => {
  it(
    verifies(
      ['auth.bearer-required', 'auth.challenge-words'],
      'answers 401 with a challenge naming the resource metadata, which is served',
    ),
    async () => {
      const response = await rawRequest(runtime.mcpUrl, { headers: mcpHeaders(null), body: '{}' });
      expect(response.status).toBe(401);
      const challenge = String(response.headers['www-authenticate']);
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
      expect(metadataUrl).toBe(`${runtime.baseUrl}/.well-known/oauth-protected-resource/mcp`);
      // No token was presented: the challenge carries no error code (RFC 6750 §3.1); the body says what is missing.
      expect(challenge).toBe(`Bearer resource_metadata="${metadataUrl}"`);
      expect(response.json()).toEqual({ message: expect.stringContaining('A bearer token is required') });
      const metadata = await fetch(metadataUrl ?? '');
      expect(metadata.status).toBe(200);
      expect(await metadata.json()).toMatchObject({ resource: runtime.mcpUrl, bearer_methods_supported: ['header'] });
    },
  );

  it(verifies('auth.challenge-words', 'asks for a bearer token when another scheme is sent'), async () => {
    const response = await rawRequest(runtime.mcpUrl, {
      headers: mcpHeaders(null, { authorization: 'Basic cHJvY3VyZW1lbnQ6c2VjcmV0' }),
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(String(response.headers['www-authenticate'])).not.toContain('error=');
  });

  it(
    verifies(
      'auth.metadata-authorization-servers',
      'names no authorization server locally, where tokens come from the configuration',
    ),
    async () => {
      const metadata = await fetch(`${runtime.baseUrl}/.well-known/oauth-protected-resource/mcp`);
      const document = await metadata.json();
      expect(document).not.toHaveProperty('authorization_servers');
      expect(document).toEqual({
        resource: runtime.mcpUrl,
        bearer_methods_supported: ['header'],
        resource_name: expect.any(String),
      });
    },
  );

  it(
    verifies(
      ['auth.bearer-required', 'auth.challenge-words'],
      'refuses a wrong token in words, and the official client reports it',
    ),
    async () => {
      const response = await rawRequest(runtime.mcpUrl, { headers: mcpHeaders('not-a-token'), body: '{}' });
      expect(response.status).toBe(401);
      expect(String(response.headers['www-authenticate'])).toBe(
        `Bearer error="invalid_token", error_description="The bearer token is not valid for this gateway.", resource_metadata="${runtime.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(response.json()).toEqual({
        error: 'invalid_token',
        error_description: 'The bearer token is not valid for this gateway.',
      });
      await expect(connect('not-a-token', eras[1])).rejects.toBeInstanceOf(SdkHttpError);
      await expect(connect('not-a-token', eras[0])).rejects.toThrow(/invalid_token/);
    },
  );
});

describe('HTTP edges', () => {
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });

  it(verifies('mcp.json-responses', 'answers single JSON bodies without a session in both revisions'), async () => {
    const legacy = await rawRequest(runtime.mcpUrl, {
      headers: mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '2025-11-25' }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const modern = modernRequest('tools/list');
    const modernResponse = await rawRequest(runtime.mcpUrl, {
      headers: mcpHeaders(demoTokens.procurement, modern.headers),
      body: modern.body,
    });
    for (const response of [legacy, modernResponse]) {
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['mcp-session-id']).toBeUndefined();
      expect(response.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tools: expect.any(Array) } });
    }
  });

  it(
    verifies('mcp.cache-hints', 'marks 2026-07-28 tools/list and server/discover answers as privately cacheable'),
    async () => {
      for (const method of ['tools/list', 'server/discover']) {
        const request = modernRequest(method);
        const response = await rawRequest(runtime.mcpUrl, {
          headers: mcpHeaders(demoTokens.procurement, request.headers),
          body: request.body,
        });
        expect(response.json()).toMatchObject({
          result: { cacheScope: 'private', ttlMs: method === 'tools/list' ? 30_000 : 300_000, resultType: 'complete' },
        });
      }
    },
  );

  it(
    verifies('mcp.required-headers', 'refuses a 2026-07-28 request whose Mcp-Method header disagrees with its body'),
    async () => {
      const request = modernRequest('tools/list');
      const response = await rawRequest(runtime.mcpUrl, {
        headers: mcpHeaders(demoTokens.procurement, { ...request.headers, 'mcp-method': 'tools/call' }),
        body: request.body,
      });
      expect(response.status).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: -32020 } });
    },
  );

  it(verifies('mcp.dns-rebinding', 'refuses a foreign Host or Origin with 403'), async () => {
    const foreignHost = await rawRequest(runtime.mcpUrl, {
      headers: { ...mcpHeaders(demoTokens.procurement), host: 'attacker.example.com' },
      body: ping,
    });
    expect(foreignHost.status).toBe(403);
    const foreignOrigin = await rawRequest(runtime.mcpUrl, {
      headers: { ...mcpHeaders(demoTokens.procurement), origin: 'https://attacker.example.com' },
      body: ping,
    });
    expect(foreignOrigin.status).toBe(403);
    const localOrigin = await rawRequest(runtime.mcpUrl, {
      headers: {
        ...mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '2025-11-25' }),
        origin: 'http://localhost:3000',
      },
      body: ping,
    });
    expect(localOrigin.status).toBe(200);
  });

  it(verifies('mcp.method-not-allowed', 'answers GET and DELETE with 405'), async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await rawRequest(runtime.mcpUrl, { method, headers: mcpHeaders(demoTokens.procurement) });
      expect(response.status).toBe(405);
    }
  });

  it(verifies('mcp.body-cap', 'refuses a body of 256 KB + 1 with 413 and accepts one at the cap'), async () => {
    const envelope = (padding: string) =>
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping', params: { _meta: { padding } } });
    const overhead = Buffer.byteLength(envelope(''));
    const atCap = envelope('x'.repeat(256 * 1024 - overhead));
    const overCap = envelope('x'.repeat(256 * 1024 - overhead + 1));
    expect(Buffer.byteLength(atCap)).toBe(256 * 1024);
    const headers = mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '2025-11-25' });
    const accepted = await rawRequest(runtime.mcpUrl, { headers, body: atCap });
    expect(accepted.status).toBe(200);
    const refused = await rawRequest(runtime.mcpUrl, { headers, body: overCap });
    expect(refused.status).toBe(413);
    expect(refused.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });

  it(verifies('mcp.body-cap', 'stops reading an oversized body sent without a length'), async () => {
    const { request } = await import('node:http');
    const target = new URL(runtime.mcpUrl);
    let sent = 0;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { ...mcpHeaders(demoTokens.procurement), 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (error) => (sent < 1024 ? resolve(-1) : reject(error)));
      // Keep sending until the gateway answers: 64 MB if it never stopped reading.
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (sent < 1024 && req.write(chunk)) sent++;
        if (sent < 1024) req.once('drain', pump);
        else req.end();
      };
      pump();
    });
    // The gateway answers 413 (or drops the connection) long before 64 MB have gone through.
    expect([413, -1]).toContain(status);
    expect(sent).toBeLessThan(1024);
  });

  it(
    verifies(
      'mcp.malformed-input',
      'answers malformed JSON, bad shapes, unknown methods and bad versions, and stays up',
    ),
    async () => {
      const legacyHeaders = mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '2025-11-25' });
      const parseError = await rawRequest(runtime.mcpUrl, { headers: legacyHeaders, body: '{"jsonrpc":"2.0",' });
      expect(parseError.status).toBe(400);
      expect(parseError.json()).toMatchObject({ error: { code: -32700 } });

      const badShape = await rawRequest(runtime.mcpUrl, { headers: legacyHeaders, body: '{"foo":1}' });
      expect(badShape.status).toBe(400);
      expect(badShape.json()).toMatchObject({ error: { code: -32600 } });

      const unknownLegacy = await rawRequest(runtime.mcpUrl, {
        headers: legacyHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/frobnicate' }),
      });
      expect(unknownLegacy.json()).toMatchObject({ id: 3, error: { code: -32601 } });

      const modernUnknown = modernRequest('tools/frobnicate', {}, 4);
      const unknownModern = await rawRequest(runtime.mcpUrl, {
        headers: mcpHeaders(demoTokens.procurement, modernUnknown.headers),
        body: modernUnknown.body,
      });
      expect(unknownModern.json()).toMatchObject({ id: 4, error: { code: -32601 } });

      const badVersion = await rawRequest(runtime.mcpUrl, {
        headers: mcpHeaders(demoTokens.procurement, { 'mcp-protocol-version': '1999-01-01' }),
        body: ping,
      });
      expect(badVersion.status).toBe(400);
      const badModern = modernRequest('tools/list').body.replaceAll('2026-07-28', '2099-01-01');
      const unsupported = await rawRequest(runtime.mcpUrl, {
        headers: mcpHeaders(demoTokens.procurement, {
          'mcp-protocol-version': '2099-01-01',
          'mcp-method': 'tools/list',
        }),
        body: badModern,
      });
      expect(unsupported.status).toBe(400);
      expect(unsupported.json()).toMatchObject({ error: { code: -32022, data: { requested: '2099-01-01' } } });

      const stillUp = await rawRequest(runtime.mcpUrl, { headers: legacyHeaders, body: ping });
      expect(stillUp.json()).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    },
  );
});

describe('the local runtime', () => {
  it(verifies('local.banner', 'prints the MCP URL, the demo tokens and a client configuration'), () => {
    const output = runtime.output();
    expect(output).toContain(`MCP endpoint     ${runtime.mcpUrl}`);
    expect(output).toContain(demoTokens.procurement);
    expect(output).toContain(demoTokens.support);
    const snippet = output.slice(output.indexOf('{'), output.indexOf('  Agents (bearer tokens):'));
    expect(JSON.parse(snippet)).toEqual({
      mcpServers: {
        'approval-gateway': {
          type: 'http',
          url: runtime.mcpUrl,
          headers: { Authorization: `Bearer ${demoTokens.procurement}` },
        },
      },
    });
  });
});

describe('the Host header', () => {
  const port = () => Number(new URL(runtime.baseUrl).port);
  const hostile = () => `evil.example:${port()}`;

  it(
    verifies('http.host-header-checked', 'answers a malformed Host with 400 on every route, not a gateway error'),
    async () => {
      for (const path of ['/mcp', '/.well-known/oauth-protected-resource/mcp', '/console/sign-in']) {
        const answer = await rawExchange(port(), `GET ${path} HTTP/1.1\r\nHost: exa mple`);
        expect(answer.status).toBe(400);
      }
      expect(runtime.output()).not.toContain('unhandled error in the local front');
    },
  );

  it(
    verifies(
      'http.host-header-checked',
      'names the gateway’s own address in the challenge and the metadata document, whatever the Host',
    ),
    async () => {
      const challenged = await rawRequest(runtime.mcpUrl, {
        headers: { ...mcpHeaders(null), host: hostile() },
        body: '{}',
      });
      expect(challenged.status).toBe(401);
      expect(String(challenged.headers['www-authenticate'])).toBe(
        `Bearer resource_metadata="${runtime.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
      );
      const metadata = await rawRequest(`${runtime.baseUrl}/.well-known/oauth-protected-resource/mcp`, {
        method: 'GET',
        headers: { host: hostile() },
      });
      expect(metadata.status).toBe(200);
      expect(metadata.json()).toMatchObject({ resource: runtime.mcpUrl });
      expect(metadata.body).not.toContain('evil.example');
    },
  );

  it(
    verifies(
      'http.host-header-checked',
      'the console checks a form’s Origin against its own address, not the Host header',
    ),
    async () => {
      const form = await rawRequest(`${runtime.baseUrl}/console/sign-in`, { method: 'GET' });
      const cookies = ([] as string[])
        .concat(form.headers['set-cookie'] ?? [])
        .map((cookie) => cookie.split(';')[0])
        .join('; ');
      const csrf = /name="csrf" value="([^"]*)"/.exec(form.body)?.[1] ?? '';
      const signIn = (host: string, origin: string) =>
        rawRequest(`${runtime.baseUrl}/console/sign-in`, {
          headers: { host, origin, cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            csrf,
            next: '/console',
            approver: 'finance-approver',
            password: 'demo-finance-password',
          }).toString(),
        });
      // A page served under another name (DNS rebinding) posting to "its own" origin is refused.
      const rebound = await signIn(hostile(), `http://${hostile()}`);
      expect(rebound.status).not.toBe(303);
      expect(rebound.headers['set-cookie'] ?? []).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/session/)]),
      );
      const own = await signIn(new URL(runtime.baseUrl).host, runtime.baseUrl);
      expect(own.status).toBe(303);
    },
  );
});
