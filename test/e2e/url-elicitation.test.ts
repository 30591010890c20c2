// The customer's step handed over by URL elicitation, end to end: the local runtime as a process,
// the demo ERP counting what reaches it, the official MCP client in both revisions (2026-07-28
// fulfils input_required through its elicitation handler and retries by itself; 2025-11-25
// surfaces the -32042 error and the caller retries), the customer confirming over HTTP through
// the customer pages, and raw HTTP for the requestState the client would never alter.
// One long file: its flows share one runtime process and one ERP, which counts every call.
import {
  Client,
  type ElicitRequest,
  StreamableHTTPClientTransport,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { type DemoErp, startDemoErp } from '../../examples/erp/server.js';
import { ResultObject } from '../../shared/result.js';
import { ConsoleSession } from '../support/console.js';
import { mcpHeaders, rawRequest } from '../support/http.js';
import { verifies } from '../support/requirements.js';
import { demoTokens, type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process.js';

const refundTool = 'erp.refunds.create';
const dana = { id: 'customer-1042', password: 'demo-customer-password' };
const waitingForCustomer =
  'Waiting for the customer: ask them to open approval_url and confirm. Then check with the status tool.';

let runtime: RuntimeProcess;
let erp: DemoErp;

beforeAll(async () => {
  erp = await startDemoErp();
  runtime = await startRuntimeProcess(['--memory', '--no-demo-erp'], { DEMO_ERP_URL: erp.url });
}, 180_000);
afterAll(async () => {
  await runtime?.stop();
  await erp?.close();
});

/** A refund for customer-1042 small enough to need only the customer (a distinct reason per test). */
const refund = (reason: string, amount = '42.50') => ({
  order_reference: 'SO-2024-0042',
  amount,
  currency: 'EUR',
  reason,
});

const formField = (body: string, name: string): string => {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];
  if (value === undefined) throw new Error(`no ${name} field in:\n${body}`);
  return value;
};

/** The customer opens approval_url, signs in and confirms, over plain HTTP as the page's forms do. */
const customerConfirms = async (approvalUrl: string): Promise<void> => {
  const path = new URL(approvalUrl).pathname;
  const customer = new ConsoleSession(runtime.baseUrl);
  const signIn = await customer.get(`/customer/sign-in?next=${encodeURIComponent(path)}`);
  const signedIn = await customer.post('/customer/sign-in', {
    csrf: formField(signIn.body, 'csrf'),
    next: path,
    customer: dana.id,
    password: dana.password,
  });
  expect(signedIn.status).toBe(303);
  const page = await customer.get(path);
  expect(page.status).toBe(200);
  const answer = await customer.post(`${path}/answer`, {
    csrf: formField(page.body, 'csrf'),
    arguments_hash: formField(page.body, 'arguments_hash'),
    outcome: 'confirm',
  });
  expect(answer.status).toBe(303);
};

const executionIdOf = (approvalUrl: string): string => approvalUrl.split('/').at(-1) ?? '';

const connect = async (
  era: '2025-11-25' | '2026-07-28',
  urlElicitation: boolean,
  onElicit?: (request: ElicitRequest) => Promise<{ action: 'accept' | 'decline' | 'cancel' }>,
): Promise<Client> => {
  const client = new Client(
    { name: 'gateway-url-elicitation-e2e', version: '1.0.0' },
    {
      ...(era === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(urlElicitation ? { capabilities: { elicitation: { url: {} } } } : {}),
    },
  );
  if (onElicit !== undefined) client.setRequestHandler('elicitation/create', onElicit);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(runtime.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${demoTokens.support}` } },
    }),
  );
  return client;
};

const statusOf = async (client: Client, executionId: string) =>
  ResultObject.parse(
    (await client.callTool({ name: 'get_execution_status', arguments: { execution_id: executionId } }))
      .structuredContent,
  );

/** Polls the status tool until the call is final (a minute at most). */
const finalStatus = async (client: Client, executionId: string) => {
  const deadline = Date.now() + 60_000;
  let last = await statusOf(client, executionId);
  while (['pending_approval', 'approved'].includes(last.status) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await statusOf(client, executionId);
  }
  return last;
};

describe('2026-07-28: input_required with a URL-mode elicitation', () => {
  it(verifies(
    ['mcp.url-elicitation', 'mcp.url-elicitation-confirmed'],
    'the official client receives the URL, the retry before the confirmation is handed over again, and after it the call completes as one execution',
  ), async () => {
    const elicited: ElicitRequest['params'][] = [];
    const client = await connect('2026-07-28', true, async (request) => {
      elicited.push(request.params);
      // First round: the user says "done" without confirming; the gateway must not believe it.
      if (elicited.length >= 2 && 'url' in request.params) await customerConfirms(request.params.url);
      return { action: 'accept' };
    });
    try {
      const before = erp.calls().length;
      const answer = await client.callTool({ name: refundTool, arguments: refund('url elicitation 2026') });
      expect(elicited).toHaveLength(2);
      const first = elicited[0];
      expect(first).toEqual({ mode: 'url', message: expect.any(String), url: expect.any(String) });
      const approvalUrl = first !== undefined && 'url' in first ? first.url : '';
      const executionId = executionIdOf(approvalUrl);
      expect(approvalUrl).toBe(`${runtime.baseUrl}/customer/calls/${executionId}`);
      expect(elicited[1]).toEqual(first);

      // The retry answered the call recorded by the first request: the same execution id.
      const result = ResultObject.parse(answer.structuredContent);
      expect(result.execution_id).toBe(executionId);
      expect(['approved', 'succeeded']).toContain(result.status);
      expect((await finalStatus(client, executionId)).status).toBe('succeeded');
      expect(erp.callsFor(executionId)).toBe(1);
      expect(erp.calls().length - before).toBe(1);
    } finally {
      await client.close();
    }
  }, 120_000);

  it(
    verifies(
      'mcp.url-elicitation-capability',
      'a client without URL elicitation gets the plain pending_approval result',
    ),
    async () => {
      const client = await connect('2026-07-28', false);
      try {
        const result = ResultObject.parse(
          (await client.callTool({ name: refundTool, arguments: refund('no capability 2026') })).structuredContent,
        );
        expect(result).toMatchObject({ status: 'pending_approval', message: waitingForCustomer });
        expect(result.approval_url).toBe(`${runtime.baseUrl}/customer/calls/${result.execution_id}`);
        expect(await statusOf(client, result.execution_id ?? '')).toEqual(result);
      } finally {
        await client.close();
      }
    },
  );
});

describe('2026-07-28: the requestState on the wire', () => {
  const InputRequired = z.object({
    resultType: z.literal('input_required'),
    inputRequests: z.object({
      customer_confirmation: z.object({
        method: z.literal('elicitation/create'),
        params: z.object({ mode: z.literal('url'), message: z.string(), url: z.string() }).strict(),
      }),
    }),
    requestState: z.string(),
  });
  const RpcError = z.object({ error: z.object({ code: z.number(), message: z.string() }) });
  const ToolResult = z.looseObject({ structuredContent: ResultObject });

  let id = 0;
  /** One raw tools/call declaring URL elicitation, optionally carrying a retry's fields. */
  const send = async (
    args: Record<string, unknown>,
    retry: Record<string, unknown> = {},
    token: string = demoTokens.support,
  ) => {
    id += 1;
    const response = await rawRequest(runtime.mcpUrl, {
      headers: mcpHeaders(token, {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': refundTool,
      }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: refundTool,
          arguments: args,
          ...retry,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
          },
        },
      }),
    });
    return z.looseObject({}).parse(response.json());
  };
  const accepted = { customer_confirmation: { action: 'accept' } };

  it(verifies(
    ['mcp.request-state-sealed', 'mcp.url-elicitation-confirmed'],
    'a tampered state, a state for another request or another agent are refused (-32602); after the confirmation the state answers the one execution',
  ), async () => {
    const args = refund('raw state');
    const first = InputRequired.parse((await send(args)).result);
    const approvalUrl = first.inputRequests.customer_confirmation.params.url;
    const executionId = executionIdOf(approvalUrl);
    expect(first.requestState).not.toContain(executionId);

    // Altered by one character: it does not open.
    const state = first.requestState;
    const tampered = `${state.slice(0, 20)}${state[20] === 'A' ? 'B' : 'A'}${state.slice(21)}`;
    for (const refused of [
      await send(args, { requestState: tampered, inputResponses: accepted }),
      // The same state on another request (other arguments): not the call it was minted for.
      await send(refund('raw state', '43.00'), { requestState: state, inputResponses: accepted }),
      // Another agent presenting it: sealed for the support agent only.
      await send(args, { requestState: state, inputResponses: accepted }, demoTokens.procurement),
    ]) {
      expect(RpcError.parse(refused).error).toEqual({ code: -32602, message: 'Invalid or expired requestState' });
    }

    // Not confirmed yet: handed over again, with a fresh state.
    const again = InputRequired.parse((await send(args, { requestState: state, inputResponses: accepted })).result);
    expect(again.inputRequests).toEqual(first.inputRequests);
    expect(again.requestState).not.toBe(state);

    // The user dismissed the link: the plain result, still waiting for the customer.
    const dismissed = ToolResult.parse(
      (await send(args, { requestState: state, inputResponses: { customer_confirmation: { action: 'cancel' } } }))
        .result,
    );
    expect(dismissed.structuredContent).toMatchObject({ status: 'pending_approval', execution_id: executionId });

    await customerConfirms(approvalUrl);
    const done = ToolResult.parse((await send(args, { requestState: state, inputResponses: accepted })).result);
    expect(done.structuredContent.execution_id).toBe(executionId);
    expect(['approved', 'succeeded']).toContain(done.structuredContent.status);
    const deadline = Date.now() + 60_000;
    while (erp.callsFor(executionId) === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Presented again after completion: the same call's answer, never a second run.
    const replayed = ToolResult.parse((await send(args, { requestState: again.requestState })).result);
    expect(replayed.structuredContent.execution_id).toBe(executionId);
    expect(erp.callsFor(executionId)).toBe(1);
  }, 120_000);
});

describe('2025-11-25: the URL-elicitation-required error', () => {
  it(verifies(
    ['mcp.url-elicitation', 'mcp.url-elicitation-confirmed'],
    'the official client gets -32042 with the URL; retries before the confirmation get it again for the same call; after it the retry answers that call',
  ), async () => {
    const client = await connect('2025-11-25', true);
    try {
      const before = erp.calls().length;
      const args = refund('url elicitation 2025');
      const call = () => client.callTool({ name: refundTool, arguments: args });
      const refusedWith = async (): Promise<UrlElicitationRequiredError> => {
        const error = await call().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        if (!(error instanceof UrlElicitationRequiredError)) throw new Error(`expected -32042, got ${String(error)}`);
        return error;
      };
      const first = await refusedWith();
      expect(first.code).toBe(-32042);
      const [elicitation] = first.elicitations;
      const executionId = elicitation?.elicitationId ?? '';
      expect(elicitation).toEqual({
        mode: 'url',
        message: expect.any(String),
        url: `${runtime.baseUrl}/customer/calls/${executionId}`,
        elicitationId: executionId,
      });
      // The call is recorded and held: the status tool knows it.
      expect(await statusOf(client, executionId)).toMatchObject({
        status: 'pending_approval',
        approval_url: elicitation?.url,
      });

      // Retried before the customer answered: the same call, handed over again.
      expect((await refusedWith()).elicitations[0]?.elicitationId).toBe(executionId);

      await customerConfirms(elicitation?.url ?? '');
      const result = ResultObject.parse((await call()).structuredContent);
      expect(result.execution_id).toBe(executionId);
      expect((await finalStatus(client, executionId)).status).toBe('succeeded');
      expect(erp.callsFor(executionId)).toBe(1);
      expect(erp.calls().length - before).toBe(1);
    } finally {
      await client.close();
    }
  }, 120_000);

  it(
    verifies('mcp.url-elicitation-capability', 'a 2025-11-25 client without URL elicitation gets the plain result'),
    async () => {
      const client = await connect('2025-11-25', false);
      try {
        const result = ResultObject.parse(
          (await client.callTool({ name: refundTool, arguments: refund('no capability 2025') })).structuredContent,
        );
        expect(result).toMatchObject({ status: 'pending_approval', message: waitingForCustomer });
        expect(await statusOf(client, result.execution_id ?? '')).toEqual(result);
      } finally {
        await client.close();
      }
    },
  );

  it(
    verifies(
      'mcp.url-elicitation-capability',
      'only an initialize declaring URL elicitation gets a session id; one the gateway did not give is answered 404',
    ),
    async () => {
      const initialize = (capabilities: Record<string, unknown>) =>
        rawRequest(runtime.mcpUrl, {
          headers: mcpHeaders(demoTokens.support),
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
          }),
        });
      const listWith = (sessionId: string, token: string = demoTokens.support) =>
        rawRequest(runtime.mcpUrl, {
          headers: mcpHeaders(token, { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': sessionId }),
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
        });
      const plain = await initialize({ elicitation: {} });
      expect(plain.status).toBe(200);
      expect(plain.headers['mcp-session-id']).toBeUndefined();
      const declared = await initialize({ elicitation: { url: {} } });
      expect(declared.status).toBe(200);
      const sessionId = String(declared.headers['mcp-session-id'] ?? '');
      expect(sessionId).toMatch(/^[A-Za-z0-9_-]+$/);
      expect((await listWith(sessionId)).status).toBe(200);
      // Altered, made up, or another agent's: not a session of this agent.
      const altered = `${sessionId.slice(0, 30)}${sessionId[30] === 'A' ? 'B' : 'A'}${sessionId.slice(31)}`;
      expect((await listWith(altered)).status).toBe(404);
      expect((await listWith('made-up')).status).toBe(404);
      expect((await listWith(sessionId, demoTokens.procurement)).status).toBe(404);
    },
  );
});
