// A call-tool system end to end: `npm start`'s entry point as a real process, configured with a
// system whose proxy is a fault-controlled /tool/call-tool server on loopback, called by the
// official MCP client. Every outcome the proxy can cause, as the agent reads it and as the store
// keeps it; the held write approved in the console and sent once; the proxy's prose nowhere.
//
// Long: one journey per outcome through a real process, each checked against the proxy's record.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { documentClient, localAwsClientConfig } from '../../infra/local/dynamodb.js';
import { localTableNames } from '../../infra/local/runtime.js';
import { DynamoDbExecutionStore } from '../../shared/adapters/dynamodb/execution-store.js';
import type { Execution } from '../../shared/executions/execution.js';
import { ResultObject } from '../../shared/result.js';
import { eventually } from '../support/approval-org.js';
import {
  type CallToolProxy,
  type ProxyBehaviour,
  startCallToolProxy,
  upstreamProse,
} from '../support/call-tool-proxy.js';
import { signedIn } from '../support/console.js';
import { mcpHeaders, modernRequest, rawRequest } from '../support/http.js';
import { quietLog } from '../support/logs.js';
import { connectAgent } from '../support/mcp-client.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess, temporaryFolder } from '../support/runtime-process.js';

const proxyCredential = 'proxy-credential-9d2e71';
const finance = { id: 'finance-approver', password: 'call-tool-finance-password' };

const configText = (proxyUrl: string) => `settings:
  enabled: true
  approval_time: 1h
  allowed_staleness: 15m
systems:
  - key: tools
    kind: call-tool
    url: ${proxyUrl}
    credentials:
      type: bearer
      token: ${proxyCredential}
    timeout: 2s
    max_response_size: 64KB
    tools:
      - name: lookup-account
        description: Reads an account.
        input_schema:
          type: object
          required: [owner]
          properties:
            owner: { type: string }
        output_schema:
          type: object
          properties:
            owner: { type: string }
            pin: { type: string, format: password }
        access: read
      - name: record-note
        description: Records a note.
        input_schema:
          type: object
          required: [note]
          properties:
            note: { type: string }
            ref: { type: integer }
        access: write
      - name: transfer
        description: Moves money; finance approves.
        input_schema:
          type: object
          required: [amount]
          properties:
            amount: { type: string, format: decimal }
        access: write
agents:
  - id: procurement-agent
    token: ${demoTokens.procurement}
    groups: [procurement]
approvers:
  - id: ${finance.id}
    name: Farah (Finance)
    password: ${finance.password}
    groups: [finance]
policies:
  - tools.cedar
`;

const policies = `@id("tool-reads-and-notes")
permit (principal in Group::"procurement", action in [Action::"tools.lookup-account", Action::"tools.record-note"], resource);

@id("transfers")
@approval("staff")
@approvers("finance")
permit (principal in Group::"procurement", action == Action::"tools.transfer", resource);
`;

let folder: Awaited<ReturnType<typeof temporaryFolder>>;
let proxy: CallToolProxy;
let runtime: RuntimeProcess;
let client: Client;
let store: DynamoDbExecutionStore;
/** Everything the agent read, for the check that no prose reached it. */
const agentRead: string[] = [];

beforeAll(async () => {
  folder = await temporaryFolder('gateway-call-tool-');
  proxy = await startCallToolProxy();
  await writeFile(join(folder.path, 'tools.cedar'), policies);
  const configFile = join(folder.path, 'gateway.config.yaml');
  await writeFile(configFile, configText(proxy.url));
  runtime = await startRuntimeProcess(
    ['--data-dir', join(folder.path, 'data'), '--no-demo-erp', '--no-demo-tools', '--config', configFile],
    { POWERTOOLS_LOG_LEVEL: 'INFO' },
  );
  client = await connectAgent(runtime.mcpUrl, demoTokens.procurement);
  store = new DynamoDbExecutionStore(
    documentClient(new DynamoDBClient(localAwsClientConfig(runtime.dynamodbEndpoint, runtime.awsCredentials))),
    localTableNames.executions,
    quietLog,
  );
}, 120_000);
afterAll(async () => {
  await client?.close();
  await runtime?.stop();
  await proxy?.close();
  await folder?.remove();
});
beforeEach(() => proxy.reset());

const call = async (name: string, args: Record<string, unknown>) => {
  const answer = await client.callTool({ name, arguments: args });
  agentRead.push(JSON.stringify(answer));
  return { answer, result: ResultObject.parse(answer.structuredContent) };
};

const statusOf = (executionId: string) => call('get_execution_status', { execution_id: executionId });

const recordOf = async (executionId: string): Promise<Execution> => {
  const record = await store.get(executionId);
  if (record === null || record === undefined) throw new Error(`No record of ${executionId}`);
  return record;
};

/** Calls with the proxy behaving so, and waits until the proxy saw its connection end. */
const callWith = async (behaviour: ProxyBehaviour, name: string, args: Record<string, unknown>) => {
  proxy.behave(behaviour);
  const outcome = await call(name, args);
  await proxy.ended(proxy.connections.length);
  return outcome;
};

const lookup = { owner: 'Ana' };
const note = { note: 'Call back on Monday' };

describe('a call-tool system through MCP', () => {
  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-request', 'systems.call-tool-answers'],
      "lists the system's tools, runs a read at once and redacts the secrets of its result",
    ),
    async () => {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(['get_execution_status', 'tools.lookup-account', 'tools.record-note', 'tools.transfer']);
      const structured = { owner: 'Ana', pin: '4471-secret-pin', api_key: 'sk-live-call-tool-77' };
      const { answer, result } = await callWith(
        {
          kind: 'result',
          result: { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured },
        },
        'tools.lookup-account',
        lookup,
      );
      expect(answer.isError).toBe(false);
      expect(result).toMatchObject({
        status: 'succeeded',
        code: null,
        result: { owner: 'Ana', pin: '[REDACTED]', api_key: '[REDACTED]' },
      });
      expect(JSON.stringify(answer)).not.toContain('4471-secret-pin');
      expect(JSON.stringify(answer)).not.toContain('sk-live-call-tool-77');
      // What the proxy received: the system's credential, the execution id, the params once.
      expect(proxy.connections).toHaveLength(1);
      const [connection] = proxy.connections;
      expect(connection?.headers.authorization).toBe(`Bearer ${proxyCredential}`);
      expect(JSON.stringify(connection?.headers)).not.toContain(demoTokens.procurement);
      expect(connection?.headers['x-request-id']).toBe(result.execution_id);
      expect(connection?.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      expect(connection?.messages).toEqual(['{"name":"lookup-account","arguments":{"owner":"Ana"}}']);
      const record = await recordOf(result.execution_id ?? '');
      expect(record).toMatchObject({ status: 'succeeded', code: null });
      expect(JSON.stringify(record)).not.toContain('sk-live-call-tool-77');
    },
  );

  it(
    verifies('systems.call-tool-request', 'sends an integer beyond 2^53 from the agent to the proxy digit for digit'),
    async () => {
      proxy.behave({ kind: 'result', result: { content: [{ type: 'text', text: 'noted' }] } });
      const request = modernRequest('tools/call', { name: 'tools.record-note', arguments: { note: 'n', ref: 'BIG' } });
      const answer = await rawRequest(runtime.mcpUrl, {
        headers: mcpHeaders(demoTokens.procurement, request.headers),
        body: request.body.replace('"BIG"', '12345678901234567890123'),
      });
      agentRead.push(answer.body);
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('"status":"succeeded"');
      await proxy.ended(1);
      expect(proxy.connections[0]?.messages).toEqual([
        '{"name":"record-note","arguments":{"note":"n","ref":12345678901234567890123}}',
      ]);
    },
  );

  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-answers'],
      "a tool's isError is failed with its machine code, else tool_error; its prose is dropped",
    ),
    async () => {
      const coded = await callWith(
        { kind: 'result', result: { isError: true, content: [{ type: 'text', text: 'quota_exceeded' }] } },
        'tools.record-note',
        note,
      );
      expect(coded.result).toMatchObject({ status: 'failed', code: 'quota_exceeded', result: null });
      expect(coded.answer.isError).toBe(true);
      const prose = await callWith(
        { kind: 'result', result: { isError: true, content: [{ type: 'text', text: upstreamProse }] } },
        'tools.record-note',
        note,
      );
      expect(prose.result).toMatchObject({ status: 'failed', code: 'tool_error', result: null });
      expect((await recordOf(prose.result.execution_id ?? '')).status).toBe('failed');
    },
  );

  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-answers'],
      'frame 1 is failed with mcp_-32602 or mcp_-32601, for a write too: the server refused, nothing ran',
    ),
    async () => {
      for (const code of [-32602, -32601]) {
        const { result, answer } = await callWith(
          { kind: 'error', error: { code, message: upstreamProse, data: { trace: upstreamProse } } },
          'tools.record-note',
          note,
        );
        expect(result).toMatchObject({ status: 'failed', code: `mcp_${code}`, result: null });
        expect(answer.isError).toBe(true);
        expect((await recordOf(result.execution_id ?? '')).code).toBe(`mcp_${code}`);
      }
    },
  );

  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-faults'],
      'a dropped connection is unknown for a write (never sent again) and failed for a read',
    ),
    async () => {
      const write = await callWith({ kind: 'drop' }, 'tools.record-note', note);
      expect(write.result).toMatchObject({ status: 'unknown', code: 'connection_failed' });
      const executionId = write.result.execution_id ?? '';
      // Asking again settles nothing new and sends nothing.
      expect((await statusOf(executionId)).result).toMatchObject({ status: 'unknown', code: 'connection_failed' });
      expect(proxy.connections).toHaveLength(1);
      expect(proxy.connections[0]?.messages).toHaveLength(1);
      const record = await recordOf(executionId);
      expect(record.history.map((change) => change.status)).toEqual(['approved', 'unknown']);
      const read = await callWith({ kind: 'drop' }, 'tools.lookup-account', lookup);
      expect(read.result).toMatchObject({ status: 'failed', code: 'connection_failed' });
      expect(proxy.connections).toHaveLength(2);
    },
  );

  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-faults'],
      'an unknown tag is unreadable_response: unknown for a write, failed for a read',
    ),
    async () => {
      const bytes = Uint8Array.from([7, ...Buffer.from(JSON.stringify({ content: [], note: upstreamProse }))]);
      const write = await callWith({ kind: 'bytes', bytes }, 'tools.record-note', note);
      expect(write.result).toMatchObject({ status: 'unknown', code: 'unreadable_response' });
      const read = await callWith({ kind: 'bytes', bytes }, 'tools.lookup-account', lookup);
      expect(read.result).toMatchObject({ status: 'failed', code: 'unreadable_response' });
    },
  );

  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-faults'],
      'an answer after the deadline is timeout (unknown for a write), and the late answer changes nothing',
    ),
    async () => {
      const late = {
        kind: 'late',
        answer: { kind: 'result', result: { content: [{ type: 'text', text: 'late' }] } },
      } as const;
      const write = await callWith(late, 'tools.record-note', note);
      expect(write.result).toMatchObject({ status: 'unknown', code: 'timeout' });
      proxy.release();
      const read = await callWith(late, 'tools.lookup-account', lookup);
      expect(read.result).toMatchObject({ status: 'failed', code: 'timeout' });
      proxy.release();
      const executionId = write.result.execution_id ?? '';
      expect((await statusOf(executionId)).result).toMatchObject({ status: 'unknown', code: 'timeout' });
      expect((await recordOf(executionId)).status).toBe('unknown');
    },
  );

  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-faults'],
      'a refused upgrade is failed / connection_failed even for a write: nothing was sent',
    ),
    async () => {
      const { result } = await callWith({ kind: 'refuse', status: 401 }, 'tools.record-note', note);
      expect(result).toMatchObject({ status: 'failed', code: 'connection_failed' });
      expect(proxy.connections[0]?.messages).toEqual([]);
    },
  );

  it(
    verifies(
      ['systems.call-tool-end-to-end', 'systems.call-tool-request'],
      'holds a transfer for finance, sends nothing until approved, then sends it exactly once',
    ),
    async () => {
      proxy.behave({
        kind: 'result',
        result: { content: [{ type: 'text', text: 'moved' }], structuredContent: { moved: '1500' } },
      });
      const held = await call('tools.transfer', { amount: '1500.00' });
      expect(held.result).toMatchObject({ status: 'pending_approval', code: null });
      const executionId = held.result.execution_id ?? '';
      expect(proxy.connections).toHaveLength(0);
      const approver = await signedIn(runtime.baseUrl, finance.id, finance.password);
      const form = await approver.decisionForm(executionId);
      expect(form.page.body).toContain('tools.transfer');
      expect((await approver.decide(executionId, form, 'approve')).status).toBe(303);
      const settled = await eventually(
        () => statusOf(executionId),
        ({ result }) => result.status !== 'pending_approval' && result.status !== 'approved',
      );
      expect(settled.result).toMatchObject({ status: 'succeeded', result: { moved: '1500' } });
      await proxy.ended(1);
      expect(proxy.connections).toHaveLength(1);
      const record = await recordOf(executionId);
      // The approved call carries its receipt, as kept on its record.
      expect(proxy.connections[0]?.messages.map((message) => JSON.parse(message))).toEqual([
        { name: 'transfer', arguments: { amount: '1500' }, _meta: { 'approval-gateway/receipt': record.receipt } },
      ]);
      expect(record.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(proxy.connections[0]?.headers['x-request-id']).toBe(executionId);
      expect(record.history.map((change) => change.status)).toEqual(['pending_approval', 'approved', 'succeeded']);
      expect(record.decided_by).toBe(finance.id);
    },
  );

  it(
    verifies('systems.call-tool-end-to-end', "the proxy's prose reached neither the agent, the records nor the log"),
    async () => {
      expect(agentRead.length).toBeGreaterThan(10);
      for (const text of agentRead) {
        expect(text).not.toContain('hunter2');
        expect(text).not.toContain('Traceback');
      }
      expect(runtime.output()).not.toContain('hunter2');
      expect(runtime.output()).not.toContain(proxyCredential);
      const records = await Promise.all(
        agentRead
          .map((text) => /"execution_id":"([0-9a-f-]{36})"/.exec(text)?.[1])
          .filter((id): id is string => id !== undefined)
          .map((id) => store.get(id)),
      );
      expect(records.length).toBeGreaterThan(5);
      expect(JSON.stringify(records)).not.toContain('hunter2');
    },
  );
});
