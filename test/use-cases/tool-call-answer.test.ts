// One answer to a tool call whatever carries it: MCP (the SDK's handler and the plain path), a gRPC
// stream and the /tool/call-tool channel, over the in-memory store. One agent's requests draw on
// one allowance of its gate, each path gives its place back (a fault included), a fault is logged
// once; and the gate, the status tool and the use-cases are reached from one file of the edge.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { projectPath } from '../../infra/paths.js';
import { isJsonObject } from '../../shared/catalog/tool.js';
import { answerChannelBytes } from '../../shared/edge/call-tool/serve.js';
import { answerMessage } from '../../shared/edge/grpc/json-rpc.js';
import { ConnectMessage, originOf } from '../../shared/edge/grpc/stream-context.js';
import { createMcpEndpoint, type McpEndpoint } from '../../shared/edge/mcp/endpoint.js';
import { toolCallFaultMessage } from '../../shared/errors.js';
import { limitsNow } from '../../shared/limits/agent-limits.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { receiptMetaKey } from '../../shared/receipts/claims.js';
import { ResultObject, resultObject } from '../../shared/result.js';
import { executeApproved } from '../../shared/use-cases/held-call-steps.js';
import { claimGraceMs } from '../../shared/use-cases/run-once.js';
import { decodeFrame } from '../../shared/wire/call-tool-frame.js';
import { mcpHeaders, modernRequest } from '../support/http.js';
import { verifies } from '../support/requirements.js';
import { countStoreReads } from '../support/store-reads.js';
import {
  approvalMs,
  approveHeld,
  holdLargeOrder,
  procurementAgent,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const agent = procurementAgent;
const endpoints: McpEndpoint[] = [];

afterEach(async () => {
  for (const endpoint of endpoints.splice(0)) await endpoint.close();
});

/** What one call ended as, whatever carried it: its result object (and the receipt beside it), or its JSON-RPC error. */
type Outcome =
  | { readonly result: ResultObject; readonly receipt: unknown }
  | { readonly error: { readonly code: number; readonly message: string } };

/** One way in: a tools/call of `name` with `args`, and `meta` in its params' _meta. */
type Transport = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => Promise<Outcome>;

/** A JSON-RPC answer to a tools/call: its result's structured content, or its error. */
const JsonRpcAnswer = z.union([
  z.object({ error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
  z.object({ result: z.object({ structuredContent: ResultObject, _meta: z.unknown().optional() }) }),
]);

/** The approval receipt in a tool result's _meta; null when there is none. */
const receiptIn = (meta: unknown): unknown => (isJsonObject(meta) ? (meta[receiptMetaKey] ?? null) : null);

const outcomeOfMessage = (message: unknown): Outcome => {
  const answer = JsonRpcAnswer.parse(message);
  return 'error' in answer
    ? { error: answer.error }
    : { result: answer.result.structuredContent, receipt: receiptIn(answer.result._meta) };
};

/** The four ways in, each over the same services and the same gate. */
const transports = (deps: UseCaseBed['deps'], gate: RequestGate): Record<string, Transport> => {
  const mcp = (plainToolCalls: boolean): Transport => {
    const endpoint = createMcpEndpoint(deps, {
      allowedHostnames: null,
      allowedOrigins: [],
      requestGate: gate,
      plainToolCalls,
    });
    endpoints.push(endpoint);
    return async (name, args, meta = {}) => {
      const { body, headers } = modernRequest('tools/call', { name, arguments: args, _meta: meta });
      const response = await endpoint.handle(
        new Request('http://127.0.0.1/mcp', { method: 'POST', headers: mcpHeaders(null, headers), body }),
        agent,
      );
      return outcomeOfMessage(await response.json());
    };
  };
  // The origin of a stream whose Connect said nothing more.
  const origin = originOf(ConnectMessage.parse({}), null);
  return {
    'MCP (plain path)': mcp(true),
    'MCP (SDK)': mcp(false),
    gRPC: async (name, args, meta = {}) =>
      outcomeOfMessage(
        await answerMessage(
          deps,
          { agent, systemKey: null, origin, traceparent: null, gate },
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name, arguments: args, _meta: meta },
          }),
        ),
      ),
    channel: async (name, args, meta = {}) => {
      const bytes = Buffer.from(JSON.stringify({ name, arguments: args, _meta: meta }), 'utf8');
      const frame = decodeFrame((await answerChannelBytes(deps, { gate }, { agent, bytes, traceparent: null })).frame);
      if (frame.kind === 'error') return { error: frame.error };
      return { result: ResultObject.parse(frame.result.structuredContent), receipt: receiptIn(frame.result._meta) };
    },
  };
};

const statusOf = (outcome: Outcome): string =>
  'result' in outcome ? `${outcome.result.status} ${String(outcome.result.code)}` : `error ${outcome.error.code}`;

describe('one answer to a tool call, whatever carries it', () => {
  it(
    verifies(['retries.same-key-same-call', 'retries.key-format'], 'reads the idempotency key on every way in'),
    async () => {
      const bed = await useCaseBed();
      const ways = Object.entries(transports(bed.deps, new RequestGate(bed.clock)));
      const order = { vendor: 'acme', amount: '250' };
      const key = { 'approval-gateway/idempotency-key': 'order-7' };
      const answers = [];
      for (const [, send] of ways) answers.push(await send(tools.create, order, key));
      // Sent once, by the first way in; every other answers that same execution.
      expect(bed.sent).toHaveLength(1);
      const [first] = answers;
      expect(first).toMatchObject({ result: { status: 'succeeded' } });
      for (const answer of answers) expect(answer).toEqual(first);
      for (const [way, send] of ways) {
        const malformed = await send(tools.create, order, { 'approval-gateway/idempotency-key': '' });
        expect(malformed, way).toMatchObject({
          result: {
            status: 'denied',
            code: 'invalid_arguments',
            input_errors: [{ path: '/_meta/approval-gateway~1idempotency-key', code: 'too_short' }],
          },
        });
      }
      expect(bed.sent).toHaveLength(1);
    },
  );

  it(
    verifies(
      'edge.one-agent-allowance',
      "draws one agent's calls over MCP (both paths), gRPC and the channel from one allowance, one token each",
    ),
    async () => {
      const bed = await useCaseBed();
      const gate = new RequestGate(bed.clock);
      const ways = Object.entries(transports(bed.deps, gate));
      // The clock stands still: spend the bucket but one token for each way in.
      const limits = await limitsNow(bed.deps.controlPlane, agent);
      for (let spent = 0; spent < limits.burst - ways.length; spent += 1) {
        const admission = gate.admit(agent.id, limits);
        if (admission.kind === 'admitted') admission.release();
      }
      const first: string[] = [];
      for (const [, send] of ways) first.push(statusOf(await send(tools.list, { vendor: 'acme' })));
      expect(first).toEqual(ways.map(() => 'succeeded null'));
      expect(gate.inFlight(agent.id)).toBe(0);
      // The allowance is spent, by all of them together: each way in is refused now, and runs nothing.
      const second: string[] = [];
      for (const [, send] of ways) second.push(statusOf(await send(tools.list, { vendor: 'acme' })));
      expect(second).toEqual(ways.map(() => 'denied rate_limited'));
      expect(bed.sent).toHaveLength(ways.length);
    },
  );

  it(
    verifies(
      'edge.one-agent-allowance',
      'gives the place back on every path when the call meets a fault, and logs the fault once',
    ),
    async () => {
      const bed = await useCaseBed();
      const secret = 'ConditionalCheckFailed at table gateway-executions password=hunter2';
      const failing = Object.assign(Object.create(bed.store) as typeof bed.store, {
        create: async () => {
          throw new Error(secret);
        },
      });
      const gate = new RequestGate(bed.clock);
      for (const [way, send] of Object.entries(transports({ ...bed.deps, store: failing }, gate))) {
        const warned = bed.warnings.length;
        const outcome = await send(tools.list, { vendor: 'acme' });
        expect(outcome, way).toEqual({ error: { code: -32603, message: toolCallFaultMessage } });
        expect(gate.inFlight(agent.id), way).toBe(0);
        expect(bed.warnings.slice(warned), way).toEqual(['tools/call failed']);
      }
    },
  );

  it(
    verifies('edge.one-agent-allowance', 'answers the status tool alike on every path, under the same gate'),
    async () => {
      const bed = await useCaseBed();
      const gate = new RequestGate(bed.clock);
      const ways = Object.entries(transports(bed.deps, gate));
      const held = await ways[0]?.[1](tools.create, { vendor: 'acme', amount: '1500' });
      if (held === undefined || !('result' in held)) throw new Error('expected a held call');
      const answers: Outcome[] = [];
      for (const [, send] of ways)
        answers.push(await send('get_execution_status', { execution_id: held.result.execution_id }));
      expect(answers[0]).toMatchObject({
        result: { status: 'pending_approval', execution_id: held.result.execution_id },
      });
      expect(answers).toEqual(ways.map(() => answers[0]));
      expect(gate.inFlight(agent.id)).toBe(0);
    },
  );

  it(
    verifies('mcp.status-tool-reads', 'answers the status tool from one store read on every path, overdue calls too'),
    async () => {
      const bed = await useCaseBed();
      const ways = Object.entries(transports(bed.deps, new RequestGate(bed.clock)));
      const held = await holdLargeOrder(bed);
      const reads = countStoreReads(bed.store);
      const status = async (way: string, send: Transport, expected: string) => {
        reads.reset();
        const outcome = await send('get_execution_status', { execution_id: held.execution_id });
        expect(statusOf(outcome), way).toBe(expected);
        expect(reads.count(), way).toBe(1);
      };
      for (const [way, send] of ways) await status(way, send, 'pending_approval null');
      // Past its approval time, the first to ask settles it (a conditional write), still on one read.
      bed.clock.advance(approvalMs + claimGraceMs + 1);
      for (const [way, send] of ways) await status(way, send, 'expired approval_expired');
    },
  );

  it(
    verifies('receipts.agent-meta', "answers an approved call's receipt beside its result object on every path"),
    async () => {
      const bed = await useCaseBed();
      const ways = Object.entries(transports(bed.deps, new RequestGate(bed.clock)));
      const held = await holdLargeOrder(bed);
      await approveHeld(bed, held);
      await executeApproved(bed.deps, held);
      const { receipt } = await bed.record(held.execution_id);
      expect(receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      for (const [way, send] of ways) {
        const outcome = await send('get_execution_status', { execution_id: held.execution_id });
        expect(outcome, way).toMatchObject({ result: { status: 'succeeded' }, receipt });
        // Beside the seven fields, never among them.
        if ('result' in outcome)
          expect(Object.keys(outcome.result).sort(), way).toEqual(
            Object.keys(resultObject({ status: 'succeeded' })).sort(),
          );
      }
    },
  );
});

/** The edge's source files and the composition's (functions, infra), as paths from the project. */
const sourceFiles = (folder: string): string[] =>
  readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [relative(projectPath(), path)] : [];
  });

/** The files of the edge and the composition where `pattern` occurs. */
const filesWith = (pattern: RegExp): string[] =>
  ['shared/edge', 'functions', 'infra']
    .flatMap((folder) => sourceFiles(projectPath(folder)))
    .filter((path) => pattern.test(readFileSync(projectPath(path), 'utf8')))
    .sort();

describe('the one home of a tool call at the edge', () => {
  it(
    verifies(
      'edge.one-tool-call-answer',
      'takes the agent gate, runs the status tool and callTool, and logs a fault in one file only',
    ),
    () => {
      const home = ['shared/edge/tool-call/answer.ts'];
      expect(filesWith(/\.admit\(/)).toEqual(home);
      // The use-cases a tool call runs (an MCP client's own callTool method aside).
      expect(filesWith(/(?<![.\w])callTool(Answer)?\(/)).toEqual(home);
      expect(filesWith(/(?<![.\w])(getExecutionStatus|executionStatusAnswer)\(/)).toEqual(home);
      expect(filesWith(/'tools\/call failed'/)).toEqual(home);
      expect(filesWith(/toolCallFaultMessageOf/)).toEqual(home);
    },
  );

  it(
    verifies(
      'edge.one-tool-call-answer',
      'keeps the status tool, the result shaping and bearer parsing beside it, not in mcp/',
    ),
    () => {
      const beside = sourceFiles(projectPath('shared/edge/tool-call'));
      for (const file of ['status-tool.ts', 'tool-result.ts', 'bearer.ts']) {
        expect(beside).toContain(`shared/edge/tool-call/${file}`);
      }
      // gRPC and the channel take nothing of a tool call from mcp/.
      expect(filesWith(/from '\.\.\/mcp\/(status-tool|tool-result)\.js'/)).toEqual([]);
      expect(filesWith(/auth\/bearer\.js/)).toEqual([]);
    },
  );
});
