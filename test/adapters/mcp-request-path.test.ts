// The MCP request path in one process, with real adapters: the endpoint as the local runtime
// builds it, the real store (dynalite, with DynamoDB's 400 KB item limit), and a real loopback
// HTTP system that records the raw requests it receives. A Petstore-like API with int64 ids
// checks that integers beyond 2^53 go from the request's text to the system's body digit for digit.
//
// Long: the request path is checked end to end for each kind of parameter and answer.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AesSealer } from '../../shared/adapters/aes-sealer.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import { HttpSystemClient } from '../../shared/adapters/http-system-client.js';
import { ToolServers } from '../../shared/adapters/tool-servers.js';
import { maxInputErrors } from '../../shared/arguments/canonicalize.js';
import type { ControlPlane } from '../../shared/control-plane/control-plane.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import { createMcpEndpoint, type McpEndpoint } from '../../shared/edge/mcp/endpoint.js';
import { type McpServices, toolCallFaultMessage } from '../../shared/edge/mcp/server.js';
import type { Execution } from '../../shared/executions/execution.js';
import type { CreateResult } from '../../shared/executions/store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import type { Log } from '../../shared/log.js';
import { ResultObject } from '../../shared/result.js';
import { anAgent } from '../support/agents.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { verifies } from '../support/requirements.js';
import { snapshotOf } from '../support/snapshots.js';

const petstoreOpenApi = `openapi: 3.0.3
info: { title: Petstore, version: "1.0" }
paths:
  /pet/{petId}:
    get:
      operationId: getPetById
      parameters:
        - { name: petId, in: path, required: true, schema: { type: integer, format: int64 } }
      responses:
        "200": { description: ok, content: { application/json: { schema: { type: object } } } }
  /pet:
    put:
      operationId: updatePet
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [id, name]
              properties:
                id: { type: integer, format: int64 }
                name: { type: string }
                category:
                  type: object
                  properties:
                    id: { type: integer, format: int64 }
                    name: { type: string }
                tags: { type: array, items: { type: integer, format: int64 } }
      responses:
        "200": { description: ok, content: { application/json: { schema: { type: object } } } }
`;

/** Every call runs; no policy reads an argument. */
const permitAll = '@id("pets")\npermit (principal, action, resource);\n';
/** A forbid that reads the pet id: such a call cannot be evaluated exactly once the id is beyond 2^53. */
const readsPetId = `${permitAll}@id("not-pet-zero")\nforbid (principal, action, resource) when { context.arguments has petId && context.arguments.petId == 0 };\n`;

const configText = (baseUrl: string) => `settings:
  enabled: true
systems:
  - key: petstore
    base_url: ${baseUrl}
    openapi: petstore.yaml
agents:
  - id: pet-agent
    token: pet-agent-token
    groups: [pets]
policies:
  - policies.cedar
`;

const agent = anAgent('pet-agent', ['pets']);

interface Received {
  readonly method: string;
  readonly url: string;
  readonly body: string;
}

let system: Server;
let received: Received[] = [];
let testStore: TestStore;
let baseUrl: string;
const warnings: Record<string, unknown>[] = [];
const log: Log = { info: () => {}, warn: (_message, ...attributes) => warnings.push(...attributes) };

const readAll = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
};

beforeAll(async () => {
  testStore = await startTestStore();
  system = createServer((request, response) => {
    void readAll(request).then((body) => {
      received.push({ method: request.method ?? '', url: request.url ?? '', body });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => system.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(system.address() as AddressInfo).port}/v3`;
});

afterAll(async () => {
  await new Promise((resolve) => system?.close(resolve));
  await testStore?.close();
});

afterEach(() => {
  received = [];
  warnings.length = 0;
  vi.restoreAllMocks();
});

const snapshotWith = (policies: string): Promise<GatewaySnapshot> =>
  snapshotOf(configText(baseUrl), {
    files: { 'petstore.yaml': petstoreOpenApi, 'policies.cedar': policies },
    file: 'gateway.config.yaml',
  });

const endpointWith = (snapshot: GatewaySnapshot, store = testStore.store): McpEndpoint => {
  const controlPlane: ControlPlane = { current: async () => ({ kind: 'active', snapshot }) };
  const clock = { now: () => Date.now() };
  const services: McpServices = {
    store,
    clock,
    systems: new HttpSystemClient(),
    toolServers: new ToolServers(),
    log,
    ids: uuidV7Ids,
    controlPlane,
    sealer: new AesSealer(Buffer.alloc(32, 7)),
    approvalRuns: { start: async () => 'started', signal: async () => false },
    customerUrl: (id) => `http://127.0.0.1/customer/calls/${id}`,
  };
  return createMcpEndpoint(services, {
    allowedHostnames: null,
    allowedOrigins: [],
    requestGate: new RequestGate(clock),
  });
};

/** A 2025-11-25 tools/call whose arguments are given as raw JSON text. */
const toolCall = (name: string, argumentsText: string): Request =>
  new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${argumentsText}}}`,
  });

const resultOf = async (response: Response): Promise<ResultObject> => {
  const body: unknown = await response.json();
  if (typeof body !== 'object' || body === null || !('result' in body)) throw new Error(JSON.stringify(body));
  const result = body.result;
  if (typeof result !== 'object' || result === null || !('structuredContent' in result)) throw new Error('no result');
  return ResultObject.parse(result.structuredContent);
};

describe('integers beyond 2^53 on the request path (a Petstore with int64 ids)', () => {
  it(
    verifies('args.exact-integers', 'sends an int64 id in the path and in the body digit for digit, and stores it so'),
    async () => {
      const endpoint = endpointWith(await snapshotWith(permitAll));
      try {
        const read = await resultOf(
          await endpoint.handle(toolCall('petstore.get_pet_by_id', '{"petId":9223372036854775807}'), agent),
        );
        expect(read).toMatchObject({ status: 'succeeded', result: { ok: true } });
        expect(received.at(-1)).toMatchObject({ method: 'GET', url: '/v3/pet/9223372036854775807' });

        const write = await resultOf(
          await endpoint.handle(
            toolCall(
              'petstore.update_pet',
              '{"id":9007199254740993,"name":"Rex","category":{"id":-12345678901234567890,"name":"dogs"},"tags":[1,9007199254740995]}',
            ),
            agent,
          ),
        );
        expect(write).toMatchObject({ status: 'succeeded' });
        expect(received.at(-1)?.method).toBe('PUT');
        expect(received.at(-1)?.body).toBe(
          '{"id":9007199254740993,"name":"Rex","category":{"id":-12345678901234567890,"name":"dogs"},"tags":[1,9007199254740995]}',
        );
        const stored = await testStore.store.get(write.execution_id ?? '');
        expect(stored?.arguments_json).toBe(
          '{"category":{"id":-12345678901234567890,"name":"dogs"},"id":9007199254740993,"name":"Rex","tags":[1,9007199254740995]}',
        );
      } finally {
        await endpoint.close();
      }
    },
  );

  it(
    verifies(
      'args.exact-integers',
      'refuses (policy_denied) such an integer where a policy reads it, rather than round it',
    ),
    async () => {
      const endpoint = endpointWith(await snapshotWith(readsPetId));
      try {
        const refused = await resultOf(
          await endpoint.handle(toolCall('petstore.get_pet_by_id', '{"petId":9007199254740993}'), agent),
        );
        expect(refused).toMatchObject({ status: 'denied', code: 'policy_denied' });
        const safe = await resultOf(await endpoint.handle(toolCall('petstore.get_pet_by_id', '{"petId":7}'), agent));
        expect(safe).toMatchObject({ status: 'succeeded' });
        expect(received.map((item) => item.url)).toEqual(['/v3/pet/7']);
      } finally {
        await endpoint.close();
      }
    },
  );

  it(
    verifies(
      'args.exact-integers',
      'checks an int64 field against its schema exactly (a string is still not an integer)',
    ),
    async () => {
      const endpoint = endpointWith(await snapshotWith(permitAll));
      try {
        const refused = await resultOf(
          await endpoint.handle(toolCall('petstore.get_pet_by_id', '{"petId":"9223372036854775807"}'), agent),
        );
        expect(refused).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
        expect(refused.input_errors?.map(({ path, code }) => ({ path, code }))).toEqual([
          { path: '/petId', code: 'wrong_type' },
        ]);
        expect(received).toEqual([]);
      } finally {
        await endpoint.close();
      }
    },
  );
});

describe('work per request', () => {
  it(
    verifies('mcp.read-once', 'reads a tools/call body once: the SDK is handed the message, not the text'),
    async () => {
      const endpoint = endpointWith(await snapshotWith(permitAll));
      try {
        const request = toolCall('petstore.get_pet_by_id', '{"petId":7}');
        const text = await request.clone().text();
        const parse = vi.spyOn(JSON, 'parse');
        const result = await resultOf(await endpoint.handle(request, agent));
        const parsesOfBody = parse.mock.calls.filter(([input]) => input === text).length;
        parse.mockRestore();
        expect(result.status).toBe('succeeded');
        expect(parsesOfBody).toBe(0);
      } finally {
        await endpoint.close();
      }
    },
  );
});

describe('refused input is recorded in bounded form', () => {
  it(
    verifies(
      'args.bounded-record',
      'records a call with thousands of unknown fields: the first errors, a count, a digest',
    ),
    async () => {
      const endpoint = endpointWith(await snapshotWith(permitAll));
      try {
        const fields = Array.from({ length: 9_000 }, (_, index) => `"field_${index}_${'x'.repeat(8)}":0`);
        const result = await resultOf(
          await endpoint.handle(toolCall('petstore.update_pet', `{"id":1,"name":"Rex",${fields.join(',')}}`), agent),
        );
        expect(result).toMatchObject({ status: 'denied', code: 'invalid_arguments' });
        expect(result.input_errors).toHaveLength(maxInputErrors + 1);
        expect(result.input_errors?.at(-1)).toMatchObject({ path: '', code: 'more_errors' });
        // 9 000 unknown fields (over 64 KB as well): refused on the unknown fields alone, before the
        // rest of the arguments is read, the first of them listed and the others counted.
        expect(result.input_errors?.[0]).toMatchObject({ path: '/field_0_xxxxxxxx', code: 'unknown_field' });
        expect(result.input_errors?.at(-1)?.message).toContain(`(${9_000 - maxInputErrors} more)`);
        const stored = await testStore.store.get(result.execution_id ?? '');
        expect(stored).toMatchObject({ status: 'denied', code: 'invalid_arguments', arguments_json: null });
        expect(stored?.input_errors).toEqual(result.input_errors);
        expect(stored?.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(received).toEqual([]);
      } finally {
        await endpoint.close();
      }
    },
  );

  it(
    verifies(
      'mcp.fault-mapped',
      'answers a fault inside tools/call in the gateway’s words: no store text reaches the agent',
    ),
    async () => {
      class FailingStore extends DynamoDbExecutionStore {
        override async create(_execution: Execution): Promise<CreateResult> {
          throw new Error('ValidationException: Item size has exceeded the maximum allowed size (table executions)');
        }
      }
      const endpoint = endpointWith(
        await snapshotWith(permitAll),
        new FailingStore(testStore.dynamodb.documents, 'executions'),
      );
      try {
        const response = await endpoint.handle(toolCall('petstore.update_pet', '{"id":1,"name":"Rex"}'), agent);
        const text = await response.text();
        expect(text).not.toContain('ValidationException');
        expect(text).not.toContain('executions');
        expect(JSON.parse(text)).toMatchObject({ error: { code: -32603, message: toolCallFaultMessage } });
        expect(warnings).toContainEqual(
          expect.objectContaining({ agent_id: 'pet-agent', tool: 'petstore.update_pet' }),
        );
      } finally {
        await endpoint.close();
      }
    },
  );
});
