// The MCP client adapter against real MCP servers on loopback: the reference server
// (server-everything over Streamable HTTP) and a small SDK server whose faults the test sets.
//
// Long: each fault of an untrusted server is its own case, and the reference server's tools are
// checked one by one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServerClient } from '../../shared/adapters/mcp-server-client.js';
import { mcpToolSpecs } from '../../shared/catalog/mcp-tools.js';
import { buildToolServerTools } from '../../shared/catalog/tool-server-tools.js';
import type { ResolvedMcpSystem } from '../../shared/config/resolved.js';
import { classifyToolAnswer, type ToolServerRequest } from '../../shared/invoke/tool-server.js';
import { exactJsonText } from '../../shared/wire/exact-json.js';
import {
  type EverythingServer,
  type FaultServer,
  startEverythingServer,
  startFaultServer,
} from '../support/mcp-servers.js';
import { verifies } from '../support/requirements.js';
import { anMcpSystem as anMcpSystemOf } from '../support/systems.js';

const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const anMcpSystem = (url: string, overrides: Partial<ResolvedMcpSystem> = {}): ResolvedMcpSystem =>
  anMcpSystemOf({ key: 'tools', url, ...overrides });

let counter = 0;
const aCall = (
  system: ResolvedMcpSystem,
  name: string,
  argumentsJson = '{}',
  extra: Partial<ToolServerRequest> = {},
) => {
  counter += 1;
  return {
    system,
    name,
    argumentsJson,
    executionId: `0190a000-0000-7000-8000-${String(counter).padStart(12, '0')}`,
    traceparent,
    deadlineMs: 10_000,
    maxResponseBytes: 1_048_576,
    ...extra,
  } satisfies ToolServerRequest;
};

/** The outcome the gateway records for an answer, for a tool of the given access. */
const outcomeOf = (
  system: ResolvedMcpSystem,
  name: string,
  access: 'read' | 'write',
  answer: Parameters<typeof classifyToolAnswer>[0],
) => {
  const built = buildToolServerTools(
    system,
    0,
    [{ name, inputSchema: { type: 'object' }, access, configPath: [], source: name }],
    { unusable: 'warning' },
  );
  const tool = built.tools[0];
  if (tool === undefined) throw new Error('expected the tool to build');
  return classifyToolAnswer(answer, tool, { names: new Set() });
};

describe('the reference MCP server (server-everything over Streamable HTTP)', () => {
  let everything: EverythingServer;
  const client = new McpServerClient();
  beforeAll(async () => {
    everything = await startEverythingServer();
  });
  afterAll(async () => {
    await client.close();
    await everything.close();
  });

  it(
    verifies('systems.mcp-discovery', 'discovers every tool it offers, reads and writes as their hints say'),
    async () => {
      const system = anMcpSystem(everything.url, { key: 'reference' });
      const listing = await client.listTools(system);
      const names = listing.tools.map((tool) => (tool as { name: string }).name);
      expect(names).toEqual(
        expect.arrayContaining([
          'echo',
          'get-annotated-message',
          'get-env',
          'get-structured-content',
          'get-sum',
          'get-tiny-image',
          'gzip-file-as-resource',
          'toggle-simulated-logging',
          'toggle-subscriber-updates',
          'trigger-long-running-operation',
        ]),
      );
      const { specs, leftOut } = mcpToolSpecs('reference', listing.tools);
      expect(leftOut).toEqual([]);
      expect(specs.map((spec) => spec.name)).toEqual(names);
      const built = buildToolServerTools(system, 0, specs, { unusable: 'warning' });
      expect(built.warnings).toEqual([]);
      const byName = new Map(built.tools.map((tool) => [tool.name, tool]));
      expect(byName.get('reference.echo')).toMatchObject({
        access: 'read',
        target: { kind: 'tool-server', name: 'echo' },
      });
      expect(byName.get('reference.get-sum')?.inputSchema).toMatchObject({
        type: 'object',
        required: ['a', 'b'],
        additionalProperties: false,
      });
      expect(byName.get('reference.toggle-simulated-logging')).toMatchObject({
        access: 'write',
        title: 'Toggle Simulated Logging',
      });
      expect(byName.get('reference.get-structured-content')?.responseSchema).not.toBeNull();
    },
  );

  it(verifies('systems.mcp-call-outcomes', 'runs a tool and returns its result'), async () => {
    const system = anMcpSystem(everything.url, { key: 'reference' });
    const answer = await client.call(aCall(system, 'get-sum', '{"a":2,"b":40}'));
    expect(answer).toMatchObject({ kind: 'result' });
    expect(outcomeOf(system, 'get-sum', 'read', answer)).toMatchObject({
      status: 'succeeded',
      result: [{ type: 'text', text: expect.stringContaining('42') }],
    });
  });
});

describe('a server whose faults the test sets', () => {
  let server: FaultServer;
  const client = new McpServerClient();
  beforeAll(async () => {
    server = await startFaultServer();
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it(
    verifies('systems.mcp-connection', 'sends traceparent, x-request-id and the exact arguments, in each revision'),
    async () => {
      for (const protocol of ['2025-11-25', '2026-07-28', 'auto'] as const) {
        const system = anMcpSystem(server.url, { protocol });
        const call = aCall(system, 'lookup', '{"query":"x","id":123456789012345678901}');
        expect(await client.call(call)).toMatchObject({ kind: 'result' });
        const seen = server.requests.find((request) => request.headers['x-request-id'] === call.executionId);
        expect(seen?.headers.traceparent).toBe(traceparent);
        expect(seen?.headers['mcp-protocol-version']).toBe(protocol === '2025-11-25' ? '2025-11-25' : '2026-07-28');
        expect(seen?.body).toContain('"arguments":{"query":"x","id":123456789012345678901}');
      }
    },
  );

  it(verifies('receipts.tool-server-meta', "sends an approved call's receipt in the tools/call's _meta"), async () => {
    const system = anMcpSystem(server.url, { protocol: '2026-07-28' });
    const call = aCall(system, 'lookup', '{"query":"x"}', { receipt: 'header.claims.signature' });
    expect(await client.call(call)).toMatchObject({ kind: 'result' });
    const seen = server.requests.find((request) => request.headers['x-request-id'] === call.executionId);
    // Beside the revision's own envelope, which it does not replace.
    expect(JSON.parse(seen?.body ?? '{}').params._meta).toMatchObject({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'approval-gateway/receipt': 'header.claims.signature',
    });
    // A call no one approved carries none.
    const direct = aCall(system, 'lookup', '{"query":"x"}');
    await client.call(direct);
    const plain = server.requests.find((request) => request.headers['x-request-id'] === direct.executionId);
    expect(JSON.parse(plain?.body ?? '{}').params._meta ?? {}).not.toHaveProperty('approval-gateway/receipt');
  });

  it(verifies('systems.mcp-connection', 'reuses one connection across calls'), async () => {
    const system = anMcpSystem(server.url, {
      protocol: '2025-11-25',
      credentials: { type: 'bearer', token: 'reuse' },
    });
    const before = server.requests.filter((request) => request.body.includes('"initialize"')).length;
    await client.call(aCall(system, 'lookup'));
    await client.call(aCall(system, 'lookup'));
    await client.call(aCall(system, 'lookup'));
    const after = server.requests.filter((request) => request.body.includes('"initialize"')).length;
    expect(after - before).toBe(1);
  });

  it(verifies('systems.mcp-credentials', "presents the system's credentials to its URL"), async () => {
    const bearer = anMcpSystem(server.url, { credentials: { type: 'bearer', token: 'system-token' } });
    const call = aCall(bearer, 'lookup');
    await client.call(call);
    expect(
      server.requests.find((request) => request.headers['x-request-id'] === call.executionId)?.headers.authorization,
    ).toBe('Bearer system-token');
    const apiKey = anMcpSystem(server.url, { credentials: { type: 'api_key', header: 'x-api-key', value: 'k-1' } });
    const keyed = aCall(apiKey, 'lookup');
    await client.call(keyed);
    const seen = server.requests.find((request) => request.headers['x-request-id'] === keyed.executionId);
    expect(seen?.headers['x-api-key']).toBe('k-1');
    expect(seen?.headers.authorization).toBeUndefined();
  });

  it(
    verifies(
      'systems.mcp-credentials',
      'takes an OAuth client-credentials token once, from the metadata, and keeps it',
    ),
    async () => {
      const system = anMcpSystem(server.url, {
        key: 'oauth',
        credentials: {
          type: 'oauth_client_credentials',
          token_url: null,
          client_id: 'gateway',
          client_secret: 's3cret',
          scope: 'tools',
        },
      });
      const first = aCall(system, 'lookup');
      const second = aCall(system, 'lookup');
      expect(await client.call(first)).toMatchObject({ kind: 'result' });
      expect(await client.call(second)).toMatchObject({ kind: 'result' });
      expect(server.tokenRequests).toHaveLength(1);
      expect(server.tokenRequests[0]).toMatchObject({
        authorization: `Basic ${Buffer.from('gateway:s3cret').toString('base64')}`,
        form: { grant_type: 'client_credentials', scope: 'tools', resource: server.url },
      });
      for (const call of [first, second]) {
        const seen = server.requests.find((request) => request.headers['x-request-id'] === call.executionId);
        expect(seen?.headers.authorization).toBe('Bearer issued-token-1');
      }
    },
  );

  it(
    verifies('answers.exact-integers', "keeps a server's integers beyond 2^53 digit for digit, in each revision"),
    async () => {
      // The server writes the digits as given (JSON.rawJSON), as a server in any language may.
      const raw = (digits: string): unknown => Reflect.apply(Reflect.get(JSON, 'rawJSON'), JSON, [digits]);
      server.behaviours.set('lookup', {
        kind: 'result',
        result: {
          content: [],
          structuredContent: { id: raw('9007199254740993'), small: 7, lines: [raw('-123456789012345678901')] },
        },
      });
      for (const protocol of ['2025-11-25', '2026-07-28'] as const) {
        const system = anMcpSystem(server.url, { protocol });
        const answer = await client.call(aCall(system, 'lookup'));
        expect(answer.kind).toBe('result');
        const outcome = outcomeOf(system, 'lookup', 'read', answer);
        expect(exactJsonText(outcome.result)).toBe(
          '{"id":9007199254740993,"small":7,"lines":[-123456789012345678901]}',
        );
      }
      server.behaviours.delete('lookup');
    },
  );

  it(verifies('systems.mcp-call-outcomes', 'a tool that reports isError fails with its code only'), async () => {
    const system = anMcpSystem(server.url);
    server.behaviours.set('lookup', {
      kind: 'result',
      result: { isError: true, content: [{ type: 'text', text: 'out_of_stock' }] },
    });
    expect(outcomeOf(system, 'lookup', 'read', await client.call(aCall(system, 'lookup')))).toMatchObject({
      status: 'failed',
      code: 'out_of_stock',
      result: null,
    });
    server.behaviours.set('lookup', {
      kind: 'result',
      result: { isError: true, content: [{ type: 'text', text: 'Database password is hunter2, try again' }] },
    });
    const prose = outcomeOf(system, 'lookup', 'read', await client.call(aCall(system, 'lookup')));
    expect(prose).toMatchObject({ status: 'failed', code: 'tool_error', result: null });
    expect(JSON.stringify(prose)).not.toContain('hunter2');
    server.behaviours.delete('lookup');
  });

  it(
    verifies('systems.mcp-call-outcomes', "returns a result's structured content with its secrets redacted"),
    async () => {
      const system = anMcpSystem(server.url);
      server.behaviours.set('lookup', {
        kind: 'result',
        result: {
          content: [{ type: 'text', text: 'ok' }],
          structuredContent: { order: 'PO-1', api_key: 'sk-live-123', nested: { client_secret: 'cs-9' } },
        },
      });
      const outcome = outcomeOf(system, 'lookup', 'read', await client.call(aCall(system, 'lookup')));
      expect(outcome).toMatchObject({
        status: 'succeeded',
        result: { order: 'PO-1', api_key: '[REDACTED]', nested: { client_secret: '[REDACTED]' } },
      });
      server.behaviours.delete('lookup');
    },
  );

  it(
    verifies(
      'systems.mcp-call-outcomes',
      'finds the secrets of JSON written as text content, and keeps other text as it is',
    ),
    async () => {
      const system = anMcpSystem(server.url);
      const record = { order: 'PO-1', api_key: 'sk-live-123', nested: [{ client_secret: 'cs-9' }] };
      server.behaviours.set('lookup', {
        kind: 'result',
        result: {
          content: [
            { type: 'text', text: JSON.stringify(record, null, 2) },
            { type: 'text', text: '{ not json, api_key: sk-live-123' },
            { type: 'text', text: '{"order": "PO-2"}' },
            { type: 'text', text: `${'['.repeat(100)}"sk-live-123"${']'.repeat(100)}` },
          ],
        },
      });
      const outcome = outcomeOf(system, 'lookup', 'read', await client.call(aCall(system, 'lookup')));
      expect(outcome).toMatchObject({
        status: 'succeeded',
        result: [
          {
            type: 'text',
            text: JSON.stringify({ order: 'PO-1', api_key: '[REDACTED]', nested: [{ client_secret: '[REDACTED]' }] }),
          },
          // Not JSON: the gateway cannot tell a secret in prose, and passes it on as it came.
          { type: 'text', text: '{ not json, api_key: sk-live-123' },
          { type: 'text', text: '{"order": "PO-2"}' },
          // JSON nested deeper than the gateway reads is not passed on.
          { type: 'text', text: '[REDACTED]' },
        ],
      });
      expect(JSON.stringify(outcome.result)).not.toContain('cs-9');
      server.behaviours.delete('lookup');
    },
  );

  it(
    verifies('systems.mcp-call-outcomes', 'an answer nested deeper than the gateway reads is unreadable, not a crash'),
    async () => {
      let deep: Record<string, unknown> = { api_key: 'sk-live-1' };
      for (let level = 0; level < 4000; level += 1) deep = { next: deep };
      const system = anMcpSystem(server.url);
      server.behaviours.set('deep', { kind: 'result', result: { content: [], structuredContent: deep } });
      const answer = await client.call(aCall(system, 'deep'));
      expect(answer).toMatchObject({ kind: 'result' });
      expect(outcomeOf(system, 'deep', 'write', answer)).toEqual({
        status: 'unknown',
        code: 'unreadable_response',
        result: null,
        httpStatus: null,
      });
      expect(outcomeOf(system, 'deep', 'read', answer)).toMatchObject({
        status: 'failed',
        code: 'unreadable_response',
      });
    },
  );

  it(verifies('systems.mcp-call-outcomes', 'a JSON-RPC error fails as mcp_<code>, its text dropped'), async () => {
    const system = anMcpSystem(server.url);
    server.behaviours.set('update', { kind: 'rpc-error', code: -32602, message: 'secret=abc bad params' });
    const answer = await client.call(aCall(system, 'update'));
    expect(answer).toEqual({ kind: 'error', code: -32602 });
    expect(outcomeOf(system, 'update', 'write', answer)).toMatchObject({ status: 'failed', code: 'mcp_-32602' });
    server.behaviours.delete('update');
  });

  it(verifies('systems.mcp-call-outcomes', 'a server that hangs: a write is unknown, a read failed'), async () => {
    const system = anMcpSystem(server.url, { credentials: { type: 'bearer', token: 'hang' } });
    server.behaviours.set('slow', { kind: 'hang' });
    const answer = await client.call(aCall(system, 'slow', '{}', { deadlineMs: 300 }));
    expect(answer).toEqual({ kind: 'timeout', sent: true });
    expect(outcomeOf(system, 'slow', 'write', answer)).toMatchObject({ status: 'unknown', code: 'timeout' });
    expect(outcomeOf(system, 'slow', 'read', answer)).toMatchObject({ status: 'failed', code: 'timeout' });
    // The next call opens a new connection and goes through.
    expect(await client.call(aCall(system, 'update'))).toMatchObject({ kind: 'result' });
  });

  it(verifies('systems.mcp-call-outcomes', 'an answer beyond max_response_size is too large'), async () => {
    const system = anMcpSystem(server.url, { key: 'large', max_response_size: 64 * 1024 });
    server.behaviours.set('lookup', {
      kind: 'result',
      result: { content: [{ type: 'text', text: 'x'.repeat(512 * 1024) }] },
    });
    const answer = await client.call(aCall(system, 'lookup', '{}', { maxResponseBytes: 64 * 1024 }));
    expect(answer).toEqual({ kind: 'too_large' });
    expect(outcomeOf(system, 'lookup', 'write', answer)).toMatchObject({
      status: 'unknown',
      code: 'response_too_large',
    });
    server.behaviours.delete('lookup');
  });

  it(verifies('systems.mcp-concurrency', 'holds calls beyond max_concurrency until a slot frees'), async () => {
    const system = anMcpSystem(server.url, { max_concurrency: 2, credentials: { type: 'bearer', token: 'bounded' } });
    server.behaviours.set('gated', { kind: 'gate', result: { content: [{ type: 'text', text: 'ok' }] } });
    const calls = Array.from({ length: 5 }, () => client.call(aCall(system, 'gated')));
    await server.untilInFlight('gated', 2);
    // A round trip on another connection: the held calls, had they been sent, would be there by now.
    await client.listTools(anMcpSystem(server.url, { credentials: { type: 'bearer', token: 'other' } }));
    expect(server.inFlight('gated').now).toBe(2);
    server.openGate();
    const answers = await Promise.all(calls);
    expect(answers.every((answer) => answer.kind === 'result')).toBe(true);
    expect(server.inFlight('gated').most).toBe(2);
  });

  it(verifies('systems.mcp-concurrency', 'a call waiting for a slot past its deadline times out unsent'), async () => {
    const system = anMcpSystem(server.url, { max_concurrency: 1, credentials: { type: 'bearer', token: 'single' } });
    server.behaviours.set('stuck', { kind: 'hang' });
    const blocking = client.call(aCall(system, 'stuck', '{}', { deadlineMs: 2_000 }));
    await server.untilInFlight('stuck', 1);
    const waiting = await client.call(aCall(system, 'stuck', '{}', { deadlineMs: 100 }));
    expect(waiting).toEqual({ kind: 'timeout', sent: false });
    expect(server.inFlight('stuck').most).toBe(1);
    expect(await blocking).toEqual({ kind: 'timeout', sent: true });
  });
});

describe('a server that is down', () => {
  it(
    verifies(
      ['systems.mcp-call-outcomes', 'systems.mcp-connection'],
      'fails unsent while down, and works once it is back',
    ),
    async () => {
      const server = await startFaultServer();
      const client = new McpServerClient();
      try {
        const system = anMcpSystem(server.url);
        await server.stop();
        // Down from the start: nothing could be sent.
        const down = await client.call(aCall(system, 'update'));
        expect(down).toMatchObject({ kind: 'connection_failed', sent: false, cause: expect.any(String) });
        expect(outcomeOf(system, 'update', 'write', down)).toMatchObject({
          status: 'failed',
          code: 'connection_failed',
        });
        await expect(client.listTools(system)).rejects.toThrow('the server could not be reached');
        await server.restart();
        expect(await client.call(aCall(system, 'update'))).toMatchObject({ kind: 'result' });
        // Gone while a connection was open: the call fails, and the first one after it is back connects anew.
        await server.stop();
        expect(await client.call(aCall(system, 'update'))).toMatchObject({ kind: 'connection_failed' });
        await server.restart();
        expect(await client.call(aCall(system, 'update'))).toMatchObject({ kind: 'result' });
      } finally {
        await client.close();
        await server.close();
      }
    },
  );
});

describe('listing an untrusted server', () => {
  it(verifies('systems.mcp-discovery', 'pages through every cursor, within bounds'), async () => {
    const server = await startFaultServer();
    const client = new McpServerClient();
    try {
      server.tools = Array.from({ length: 250 }, (_, index) => ({
        name: `tool-${index}`,
        inputSchema: { type: 'object' },
      }));
      server.pageSize = 100;
      const system = anMcpSystem(server.url);
      const listing = await client.listTools(system);
      expect(listing.tools).toHaveLength(250);
      expect(listing.truncated).toBeNull();
      const bounded = await client.listTools(system, { maxPages: 2 });
      expect(bounded.tools).toHaveLength(200);
      expect(bounded.truncated).toBe('the list has more than 2 pages');
      const few = await client.listTools(system, { maxTools: 120 });
      expect(few.tools).toHaveLength(120);
      await expect(client.listTools(system, { maxBytes: 4 * 1024 })).rejects.toThrow(
        'the tool list is larger than the size cap',
      );
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("a server's own messages", () => {
  it(
    verifies('systems.mcp-server-messages', 'opens no stream for what a server sends on its own, which has no cap'),
    async () => {
      const server = await startFaultServer();
      const client = new McpServerClient();
      try {
        // A stream that never ends its event would be read, and held, without end.
        server.endlessStream = true;
        const system = anMcpSystem(server.url, { protocol: '2025-11-25' });
        expect(await client.call(aCall(system, 'update', '{"value":"a"}'))).toMatchObject({ kind: 'result' });
        expect((await client.listTools(system)).tools).toHaveLength(2);
        expect(await client.call(aCall(system, 'update', '{"value":"b"}'))).toMatchObject({ kind: 'result' });
        expect(server.streamsOpened).toBe(0);
      } finally {
        await client.close();
        await server.close();
      }
    },
  );
});

describe('one call timing out', () => {
  it(verifies('systems.mcp-connection', 'leaves the other calls in progress on the connection to finish'), async () => {
    const server = await startFaultServer();
    const client = new McpServerClient();
    try {
      const system = anMcpSystem(server.url);
      server.behaviours.set('gated', { kind: 'gate', result: { content: [{ type: 'text', text: 'done' }] } });
      server.behaviours.set('slow', { kind: 'hang' });
      const other = client.call(aCall(system, 'gated'));
      await server.untilInFlight('gated', 1);
      expect(await client.call(aCall(system, 'slow', '{}', { deadlineMs: 300 }))).toEqual({
        kind: 'timeout',
        sent: true,
      });
      server.openGate();
      // A write in progress on the same connection is not made unknown by another call's timeout.
      expect(await other).toMatchObject({ kind: 'result', result: { content: [{ type: 'text', text: 'done' }] } });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
