// tools/list in pages, as a real client follows them: the official MCP client, in both revisions,
// against the gateway's MCP endpoint (its requests handed to the endpoint in-process, no network),
// and a gRPC stream's tools/list, over a catalog of 250 tools.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { formatProblem } from '../../shared/config/resolved.js';
import { loadSnapshot } from '../../shared/control-plane/snapshot.js';
import { answerMessage, type StreamContext } from '../../shared/edge/grpc/json-rpc.js';
import { createMcpEndpoint, type McpEndpoint } from '../../shared/edge/mcp/endpoint.js';
import { toolsPageSize } from '../../shared/edge/mcp/tool-pages.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { verifies } from '../support/requirements.js';
import { procurementAgent, type UseCaseBed, useCaseBed } from '../support/use-case-bed.js';

const operationCount = 250;
const ids = Array.from({ length: operationCount }, (_, index) => `item_${String(index).padStart(3, '0')}.get`);

const config = [
  'systems:',
  '  - key: bulk',
  '    base_url: http://bulk.test',
  '    operations:',
  ...ids.flatMap((id, index) => [
    `      - id: ${id}`,
    '        method: GET',
    `        path: /items/${index}`,
    `        description: Reads item ${index}.`,
  ]),
  'policies:',
  '  - policies.cedar',
  '',
].join('\n');

const policy = '@id("reads")\npermit (principal in Group::"procurement", action in Action::"read", resource);\n';

/** An HTTP answer holding a tools/list page. */
const ListAnswer = z.object({ result: z.object({ tools: z.array(z.unknown()) }) });

/** A gRPC stream's answer to tools/list: a page, or an error. */
const GrpcAnswer = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.number(),
  result: z.object({ tools: z.array(z.object({ name: z.string() })), nextCursor: z.string().optional() }).optional(),
  error: z.object({ code: z.number(), message: z.string() }).optional(),
});

let bed: UseCaseBed;
let endpoint: McpEndpoint;

beforeAll(async () => {
  const loaded = await loadSnapshot({
    text: config,
    file: 'gateway.config.yaml',
    environment: {},
    files: { read: async (path) => (path === 'policies.cedar' ? policy : undefined) },
  });
  if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
  bed = await useCaseBed({ snapshot: loaded.snapshot });
  endpoint = createMcpEndpoint(bed.deps, {
    allowedHostnames: null,
    allowedOrigins: [],
    requestGate: new RequestGate(bed.clock),
  });
});

afterAll(async () => {
  await endpoint?.close();
});

const eras = [
  { label: '2025-11-25', options: {} },
  { label: '2026-07-28', options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } },
] as const;

/** The official client, its requests answered by the endpoint as the procurement agent's; `pages` counts its tools/list answers. */
const connect = async (era: (typeof eras)[number]) => {
  const seen = { pages: [] as number[] };
  const client = new Client({ name: 'paging-test', version: '1.0.0' }, era.options);
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
      fetch: async (input, init) => {
        const response = await endpoint.handle(new Request(input, init), procurementAgent);
        const listed = ListAnswer.safeParse(
          await response
            .clone()
            .json()
            .catch(() => null),
        );
        if (listed.success) seen.pages.push(listed.data.result.tools.length);
        return response;
      },
    }),
  );
  return { client, seen };
};

const expectedNames = ['get_execution_status', ...ids.map((id) => `bulk.${id}`)];

describe('tools/list in pages', () => {
  it.each(eras)(
    verifies('mcp.tools-list-pages', 'the official client ($label) follows nextCursor to every tool, once each'),
    async (era) => {
      const { client, seen } = await connect(era);
      try {
        // Without a cursor the official client walks every page itself, following nextCursor.
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(expectedNames);
        expect(seen.pages).toEqual([toolsPageSize, toolsPageSize, 51]);
        await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toThrow(
          /Invalid cursor: use a nextCursor from tools\/list/,
        );
      } finally {
        await client.close();
      }
    },
  );

  it(verifies('mcp.tools-list-pages', 'a gRPC stream pages its tools/list the same way'), async () => {
    // A stream for the whole gateway (no server_id), as the reference's Connect opens one.
    const stream: StreamContext = {
      agent: procurementAgent,
      systemKey: null,
      origin: {
        transport: 'grpc',
        server_id: '',
        request_id: null,
        request_uuid: null,
        trace_id: null,
        span_id: null,
        tenant: null,
        server_cloudos_version: null,
      },
      traceparent: null,
      gate: null,
    };
    const listed = async (id: number, params: Record<string, unknown>) =>
      GrpcAnswer.parse(
        await answerMessage(bed.deps, stream, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params })),
      );
    const names: string[] = [];
    let params: Record<string, unknown> = {};
    for (let id = 1; id < 10; id += 1) {
      const { result } = await listed(id, params);
      names.push(...(result?.tools.map((tool) => tool.name) ?? []));
      if (result?.nextCursor === undefined) break;
      params = { cursor: result.nextCursor };
    }
    expect(names).toEqual(expectedNames);
    expect(await listed(99, { cursor: 7 })).toEqual({
      jsonrpc: '2.0',
      id: 99,
      error: { code: -32602, message: 'Invalid cursor: use a nextCursor from tools/list.' },
    });
  });
});
