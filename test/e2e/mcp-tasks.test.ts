// Held calls as MCP tasks end to end: the local runtime as a real process, the official MCP client
// in both revisions, and finance deciding through the console. The client (SDK 2.4) has no tasks
// runtime, so the task methods go through its generic request() with the shapes of the spec; on
// 2026-07-28 it refuses a `resultType: "task"` answer, so that one answer is read from the wire.
//
// Long: each journey waits for a console decision and the approved call's run.
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ResultObject } from '../../shared/result.js';
import { eventually } from '../support/approval-org.js';
import { type ConsoleSession, signedIn } from '../support/console.js';
import { mcpHeaders, modernRequest, rawRequest } from '../support/http.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

const extensionId = 'io.modelcontextprotocol/tasks';
const bigOrder = { vendor_id: 'V-100', amount: '1500', currency: 'EUR', description: 'Office chairs' };
const smallOrder = { vendor_id: 'V-100', amount: '250', currency: 'EUR' };

const Task2025 = z.object({
  taskId: z.string(),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttl: z.number().nullable(),
  pollInterval: z.number().optional(),
});
const CreateTask2025 = z.object({ task: Task2025 });
const ToolAnswer = z.looseObject({ structuredContent: ResultObject, isError: z.boolean(), _meta: z.unknown() });
const TaskList = z.object({ tasks: z.array(Task2025), nextCursor: z.string().optional() });
const DetailedTask2026 = z.looseObject({
  taskId: z.string(),
  status: z.string(),
  statusMessage: z.string().optional(),
  ttlMs: z.number().nullable(),
  pollIntervalMs: z.number().optional(),
  result: z.looseObject({ structuredContent: ResultObject, isError: z.boolean() }).optional(),
});
const Ack = z.looseObject({});

let runtime: RuntimeProcess;
let finance: ConsoleSession;

beforeAll(async () => {
  runtime = await startRuntimeProcess(['--memory']);
  finance = await signedIn(runtime.baseUrl, 'finance-approver', 'demo-finance-password');
});
afterAll(async () => {
  await runtime?.stop();
});

/** Every JSON body the gateway answered this client, in order (to read what the client refuses). */
interface Wire {
  readonly bodies: unknown[];
}

const connect = async (
  era: '2025-11-25' | '2026-07-28',
  options: { token?: string; tasks?: boolean } = {},
): Promise<{ client: Client; wire: Wire }> => {
  const wire: Wire = { bodies: [] };
  const client = new Client(
    { name: 'gateway-tasks-e2e', version: '1.0.0' },
    {
      ...(era === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(options.tasks === true ? { capabilities: { extensions: { [extensionId]: {} } } } : {}),
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${options.token ?? demoTokens.procurement}` } },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.headers.get('content-type')?.includes('application/json')) {
          wire.bodies.push(await response.clone().json());
        }
        return response;
      },
    }),
  );
  return { client, wire };
};

const approve = async (executionId: string) => {
  const form = await finance.decisionForm(executionId);
  expect((await finance.decide(executionId, form, 'approve')).status).toBe(303);
};

const rpcError = async (promise: Promise<unknown>): Promise<ProtocolError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ProtocolError)) throw new Error(`expected a JSON-RPC error, got ${String(error)}`);
  return error;
};

describe('2025-11-25: task-augmented tools/call', () => {
  let client: Client;
  beforeAll(async () => {
    ({ client } = await connect('2025-11-25'));
  });
  afterAll(async () => {
    await client?.close();
  });

  const callAsTask = (args: Record<string, unknown>) =>
    client.request(
      { method: 'tools/call', params: { name: 'erp.purchase_orders.create', arguments: args, task: { ttl: 60_000 } } },
      CreateTask2025,
    );
  const getTask = (taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, Task2025);

  it(
    verifies(
      ['mcp.tasks-held-call', 'mcp.tasks-get-mapping', 'mcp.tasks-result-no-polling'],
      'declares tasks, answers a held call with a task, and follows it to completion after a console approval',
    ),
    async () => {
      expect(client.getServerCapabilities()?.tasks).toEqual({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const listed = await client.listTools();
      expect(listed.tools.find((tool) => tool.name === 'erp.purchase_orders.create')?.execution).toEqual({
        taskSupport: 'optional',
      });

      const { task } = await callAsTask(bigOrder);
      expect(task).toMatchObject({ status: 'working', ttl: null, pollInterval: 5_000 });
      expect(task.statusMessage).toMatch(/Waiting for approval/);
      const status = ResultObject.parse(
        (await client.callTool({ name: 'get_execution_status', arguments: { execution_id: task.taskId } }))
          .structuredContent,
      );
      // The task id is the execution id.
      expect(status).toMatchObject({ execution_id: task.taskId, status: 'pending_approval' });
      expect(await getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'working' });
      const { tasks } = await client.request({ method: 'tasks/list', params: {} }, TaskList);
      expect(tasks.map((listedTask) => listedTask.taskId)).toContain(task.taskId);

      // A tasks/result asked while nobody has decided waits in the local runtime on the call's own
      // writes (it would answer -32000 at once if the runtime did not tell it of them).
      const waited = client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, ToolAnswer);
      await approve(task.taskId);
      expect((await waited).structuredContent).toMatchObject({ status: 'succeeded', execution_id: task.taskId });
      const done = await eventually(
        () => getTask(task.taskId),
        (current) => current.status === 'completed',
      );
      expect(done.status).toBe('completed');
      expect(Date.parse(done.lastUpdatedAt)).toBeGreaterThan(Date.parse(done.createdAt));
      const payload = await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, ToolAnswer);
      expect(payload.structuredContent).toMatchObject({ status: 'succeeded', execution_id: task.taskId });
      // Naming its task, and with the approval receipt the call was sent with.
      expect(payload._meta).toEqual({
        'io.modelcontextprotocol/related-task': { taskId: task.taskId },
        'approval-gateway/receipt': expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      });
    },
  );

  it(verifies('mcp.tasks-held-call', 'answers a call that runs at once with a task already completed'), async () => {
    const { task } = await callAsTask(smallOrder);
    expect(task.status).toBe('completed');
    const payload = await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, ToolAnswer);
    expect(payload.structuredContent.status).toBe('succeeded');
    // Asked without a task, the same call answers its plain result.
    const plain = await client.callTool({ name: 'erp.purchase_orders.create', arguments: smallOrder });
    expect(ResultObject.parse(plain.structuredContent).status).toBe('succeeded');
  });

  it(
    verifies('mcp.tasks-cancel', 'withdraws a held call before the decision; a second cancel is refused with -32602'),
    async () => {
      const { task } = await callAsTask(bigOrder);
      const cancelled = await client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, Task2025);
      expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
      expect(cancelled.statusMessage).toMatch(/withdrawn/);
      expect((await getTask(task.taskId)).status).toBe('cancelled');
      const payload = await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, ToolAnswer);
      expect(payload.structuredContent).toMatchObject({ status: 'rejected', code: 'withdrawn' });
      expect(payload.isError).toBe(true);

      const again = await rpcError(
        client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, Task2025),
      );
      expect(again.code).toBe(-32602);
      // The console shows it closed: finance can no longer decide it.
      await expect(finance.decisionForm(task.taskId)).rejects.toThrow(/no decision form/);
    },
  );

  it(verifies('mcp.tasks-own-only', "answers another agent's task id exactly like an unknown one"), async () => {
    const { task } = await callAsTask(bigOrder);
    const { client: support } = await connect('2025-11-25', { token: demoTokens.support });
    try {
      const other = await rpcError(support.request({ method: 'tasks/get', params: { taskId: task.taskId } }, Task2025));
      const unknown = await rpcError(
        support.request({ method: 'tasks/get', params: { taskId: '0190a5a0-0000-7000-8000-000000000000' } }, Task2025),
      );
      expect({ code: other.code, message: other.message }).toEqual({ code: unknown.code, message: unknown.message });
      expect(other.code).toBe(-32602);
      const cancel = await rpcError(
        support.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, Task2025),
      );
      expect(cancel.code).toBe(-32602);
      const { tasks } = await support.request({ method: 'tasks/list', params: {} }, TaskList);
      expect(tasks.map((listed) => listed.taskId)).not.toContain(task.taskId);
      const forged = await rpcError(
        support.request({ method: 'tasks/list', params: { cursor: 'bm90LWEtY3Vyc29y' } }, TaskList),
      );
      expect(forged.code).toBe(-32602);
      expect((await getTask(task.taskId)).status).toBe('working');
    } finally {
      await support.close();
    }
  });
});

describe('2026-07-28: the tasks extension', () => {
  let client: Client;
  let wire: Wire;
  beforeAll(async () => {
    ({ client, wire } = await connect('2026-07-28', { tasks: true }));
  });
  afterAll(async () => {
    await client?.close();
  });

  /** The client refuses `resultType: "task"` (no tasks runtime in SDK 2.4): the answer is read from the wire. */
  const callAsTask = async (args: Record<string, unknown>) => {
    await expect(client.callTool({ name: 'erp.purchase_orders.create', arguments: args })).rejects.toThrow(
      /Unsupported result type 'task'/,
    );
    const body = z.object({ result: z.looseObject({ resultType: z.literal('task') }) }).parse(wire.bodies.at(-1));
    return body.result;
  };
  const getTask = (taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, DetailedTask2026);

  it(
    verifies(
      ['mcp.tasks-held-call', 'mcp.tasks-get-mapping'],
      'declares the extension, answers a held call with a flat task, and inlines the result once approved',
    ),
    async () => {
      expect(client.getServerCapabilities()?.extensions).toEqual({ [extensionId]: {} });
      expect(client.getServerCapabilities()).not.toHaveProperty('tasks');

      const created = await callAsTask(bigOrder);
      expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null, pollIntervalMs: 5_000 });
      for (const absent of ['task', 'ttl', 'pollInterval', 'result', 'error', 'inputRequests', 'requestState']) {
        expect(created).not.toHaveProperty(absent);
      }
      const taskId = z.string().parse(created.taskId);
      expect(await getTask(taskId)).toMatchObject({ taskId, status: 'working' });
      expect((await getTask(taskId)).result).toBeUndefined();

      await approve(taskId);
      const done = await eventually(
        () => getTask(taskId),
        (current) => current.status === 'completed',
      );
      expect(done.status).toBe('completed');
      expect(done.result).toMatchObject({
        isError: false,
        structuredContent: { status: 'succeeded', execution_id: taskId },
      });
      // The extension removed tasks/result and tasks/list (the client will not even send them).
      for (const method of ['tasks/result', 'tasks/list']) {
        const request = modernRequest(method, method === 'tasks/list' ? {} : { taskId });
        const answer = await rawRequest(runtime.mcpUrl, {
          headers: mcpHeaders(demoTokens.procurement, request.headers),
          body: request.body,
        });
        expect(answer.json(), method).toMatchObject({ error: { code: -32601 } });
      }
    },
  );

  it(verifies('mcp.tasks-held-call', 'answers a call that runs at once with its plain result'), async () => {
    const answer = await client.callTool({ name: 'erp.purchase_orders.create', arguments: smallOrder });
    expect(ResultObject.parse(answer.structuredContent).status).toBe('succeeded');
  });

  it(
    verifies('mcp.tasks-cancel', 'withdraws a held call with an empty acknowledgement; the task becomes cancelled'),
    async () => {
      const created = await callAsTask(bigOrder);
      const taskId = z.string().parse(created.taskId);
      const ack = await client.request({ method: 'tasks/cancel', params: { taskId } }, Ack);
      // An empty acknowledgement: nothing of the task (the SDK stamps its serverInfo in _meta).
      expect(Object.keys(ack)).toEqual(['_meta']);
      const cancelled = await getTask(taskId);
      expect(cancelled).toMatchObject({ status: 'cancelled' });
      expect(cancelled.statusMessage).toMatch(/withdrawn/);
      // Cancelling a final task is acknowledged again (idempotent); an unknown id is -32602.
      expect(Object.keys(await client.request({ method: 'tasks/cancel', params: { taskId } }, Ack))).toEqual(['_meta']);
      const unknown = await rpcError(
        client.request({ method: 'tasks/cancel', params: { taskId: '0190a5a0-0000-7000-8000-000000000000' } }, Ack),
      );
      expect(unknown.code).toBe(-32602);
    },
  );

  it(
    verifies(
      ['mcp.tasks-held-call', 'mcp.tasks-own-only'],
      'gives a client without the extension the plain result and no task methods',
    ),
    async () => {
      const { client: plain } = await connect('2026-07-28');
      try {
        const answer = await plain.callTool({ name: 'erp.purchase_orders.create', arguments: bigOrder });
        const result = ResultObject.parse(answer.structuredContent);
        expect(result.status).toBe('pending_approval');
        const refused = await rpcError(
          plain.request({ method: 'tasks/get', params: { taskId: result.execution_id ?? '' } }, DetailedTask2026),
        );
        expect(refused.code).toBe(-32021);
        // Another agent's task id, with the extension: the unknown-id answer.
        const { client: support } = await connect('2026-07-28', { token: demoTokens.support, tasks: true });
        try {
          const other = await rpcError(
            support.request({ method: 'tasks/get', params: { taskId: result.execution_id ?? '' } }, DetailedTask2026),
          );
          expect(other.code).toBe(-32602);
        } finally {
          await support.close();
        }
      } finally {
        await plain.close();
      }
    },
  );
});
