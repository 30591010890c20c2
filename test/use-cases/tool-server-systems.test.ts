// Calls to tools of call-tool and MCP systems under the run-once protocol: what goes to the port,
// what is recorded before and after, and a held call approved and sent once.
import { describe, expect, it } from 'vitest';
import { readArguments } from '../../shared/arguments/strict-json.js';
import { formatProblem } from '../../shared/config/resolved.js';
import type { GatewaySnapshot } from '../../shared/control-plane/gateway-snapshot.js';
import { loadSnapshot } from '../../shared/control-plane/snapshot.js';
import type { ToolServerAnswer, ToolServerRequest } from '../../shared/invoke/tool-server.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { executeApproved } from '../../shared/use-cases/held-call-steps.js';
import { verifiedReceipt } from '../support/receipts.js';
import { verifies } from '../support/requirements.js';
import {
  benchGatewayUrl,
  financeApprover,
  procurementAgent,
  testReceiptSigner,
  useCaseBed,
} from '../support/use-case-bed.js';

const configText = [
  'systems:',
  '  - key: notes',
  '    kind: call-tool',
  '    url: ws://notes.test',
  '    timeout: 7s',
  '    amount_fields: [amount]',
  '    tools:',
  '      - name: read-note',
  '        description: Reads a note.',
  '        access: read',
  '        input_schema: { type: object, properties: { id: { type: integer } } }',
  '      - name: pay-invoice',
  '        description: Pays an invoice.',
  '        access: write',
  '        input_schema: { type: object, required: [amount], properties: { amount: { type: string } } }',
  '  - key: docs',
  '    kind: mcp',
  '    url: https://docs.test/mcp',
  '    timeout: 3s',
  'policies: [policies.cedar]',
  '',
].join('\n');

const policies = `
@id("notes")
permit (principal in Group::"procurement", action in [Action::"notes.read-note", Action::"docs.search"], resource);

@id("small-payments")
permit (principal in Group::"procurement", action == Action::"notes.pay-invoice", resource)
when { context.arguments.amount.lessThan(decimal("1000.0")) };

@id("large-payments")
@approval("staff")
@approvers("finance")
permit (principal in Group::"procurement", action == Action::"notes.pay-invoice", resource)
when { context.arguments.amount.greaterThanOrEqual(decimal("1000.0")) };
`;

const snapshot = async (): Promise<GatewaySnapshot> => {
  const loaded = await loadSnapshot({
    text: configText,
    file: 'gateway.config.yaml',
    environment: {},
    files: { read: async (path) => (path === 'policies.cedar' ? policies : undefined) },
    discovered: new Map([
      [
        'docs',
        [
          {
            name: 'search',
            description: 'Searches.',
            inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
            access: 'read' as const,
            configPath: [],
            source: 'tools/list of docs',
          },
        ],
      ],
    ]),
  });
  if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
  return loaded.snapshot;
};

/** A bench whose tool servers answer `answer` and record each request, and what the store held as it was sent. */
const toolBed = async (answer: ToolServerAnswer) => {
  const bed = await useCaseBed({ snapshot: await snapshot() });
  const requests: ToolServerRequest[] = [];
  const storedWhenSent: (string | null)[] = [];
  const deps = {
    ...bed.deps,
    toolServers: {
      call: async (request: ToolServerRequest) => {
        requests.push(request);
        const stored = await bed.store.get(request.executionId);
        storedWhenSent.push(stored === undefined ? null : `${stored.status}:${stored.claimed_at !== null}`);
        return answer;
      },
    },
  };
  return { bed, deps, requests, storedWhenSent };
};

const args = (text: string) => {
  const read = readArguments(text, []);
  if (read === null) throw new Error('expected JSON');
  return read;
};

const succeeded: ToolServerAnswer = { kind: 'result', result: { content: [], structuredContent: { ok: true } } };

describe('calls to tool servers', () => {
  it(
    verifies(
      'systems.tool-server-run-once',
      'sends a read once, by its own name, with the exact arguments, and records it once',
    ),
    async () => {
      const { bed, deps, requests, storedWhenSent } = await toolBed(succeeded);
      const answer = await callTool(deps, procurementAgent, 'notes.read-note', args('{"id": 9007199254740993}'));
      expect(answer).toMatchObject({ status: 'succeeded', result: { ok: true } });
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({
        name: 'read-note',
        argumentsJson: '{"id":9007199254740993}',
        executionId: answer.execution_id,
        deadlineMs: 7_000,
        // The default max_response_size.
        maxResponseBytes: 200 * 1024,
      });
      expect(requests[0]?.system.key).toBe('notes');
      // A call the policy ran at once carries no receipt.
      expect(requests[0]?.receipt).toBeUndefined();
      expect(requests[0]?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      // Nothing was stored before a read was sent; its record holds the outcome.
      expect(storedWhenSent).toEqual([null]);
      expect(await bed.record(answer.execution_id ?? '')).toMatchObject({ status: 'succeeded', access: 'read' });
    },
  );

  it(
    verifies(
      'systems.tool-server-run-once',
      'claims a write before sending it, with the system timeout as its deadline',
    ),
    async () => {
      const { bed, deps, storedWhenSent } = await toolBed({ kind: 'connection_failed', sent: true });
      const answer = await callTool(deps, procurementAgent, 'notes.pay-invoice', args('{"amount": "12.50"}'));
      expect(answer).toMatchObject({ status: 'unknown', code: 'connection_failed' });
      expect(storedWhenSent).toEqual(['approved:true']);
      const record = await bed.record(answer.execution_id ?? '');
      expect(Date.parse(record.deadline_at ?? '') - Date.parse(record.claimed_at ?? '')).toBe(7_000);
      expect(record.history.map((entry) => entry.status)).toEqual(['approved', 'unknown']);
    },
  );

  it(
    verifies(
      'code.failures-logged',
      "logs why a system's connection failed, and keeps it from the agent and the record",
    ),
    async () => {
      const cause = 'connect ECONNREFUSED 127.0.0.1:9';
      const { bed, deps } = await toolBed({ kind: 'connection_failed', sent: false, cause });
      const lines: [string, Record<string, unknown>[]][] = [];
      const log = {
        info: (message: string, ...fields: Record<string, unknown>[]) => void lines.push([message, fields]),
      };
      const answer = await callTool(
        { ...deps, log: { ...deps.log, ...log } },
        procurementAgent,
        'docs.search',
        args('{"q": "refunds"}'),
      );
      expect(answer).toMatchObject({ status: 'failed', code: 'connection_failed' });
      expect(
        lines.filter(([message]) => message === 'system call finished').map(([, fields]) => fields[0]?.cause),
      ).toEqual([cause]);
      expect(JSON.stringify(answer)).not.toContain('ECONNREFUSED');
      expect(JSON.stringify(await bed.record(answer.execution_id ?? ''))).not.toContain('ECONNREFUSED');
    },
  );

  it(
    verifies('systems.tool-server-run-once', "runs an MCP system's discovered tool through the same port"),
    async () => {
      const { deps, requests } = await toolBed({ kind: 'error', code: -32602 });
      const answer = await callTool(deps, procurementAgent, 'docs.search', args('{"q": "refunds"}'));
      expect(answer).toMatchObject({ status: 'failed', code: 'mcp_-32602', message: 'The system refused the call.' });
      expect(requests.map((request) => [request.system.kind, request.name, request.deadlineMs])).toEqual([
        ['mcp', 'search', 3_000],
      ]);
    },
  );

  it(
    verifies(
      ['systems.tool-server-run-once', 'receipts.tool-server-meta'],
      'sends a held write only once it is approved, and only once, with its receipt',
    ),
    async () => {
      const { bed, deps, requests } = await toolBed(succeeded);
      const held = await callTool(deps, procurementAgent, 'notes.pay-invoice', args('{"amount": "1500"}'));
      expect(held.status).toBe('pending_approval');
      expect(requests).toEqual([]);
      const record = await bed.record(held.execution_id ?? '');
      const decision = await decide(deps, financeApprover, {
        execution_id: record.execution_id,
        arguments_hash: record.arguments_hash ?? '',
        outcome: 'approve',
      });
      expect(decision.kind).toBe('decided');
      const key = { execution_id: record.execution_id, agent_id: record.agent_id };
      expect(await executeApproved(deps, key)).toMatchObject({ status: 'succeeded' });
      expect(await executeApproved(deps, key)).toMatchObject({ status: 'succeeded' });
      expect(requests).toHaveLength(1);
      expect(requests[0]?.argumentsJson).toBe('{"amount":"1500"}');
      // The receipt the claim kept goes with the call (the clients put it in the tools/call's _meta).
      const claims = await verifiedReceipt(requests[0]?.receipt, testReceiptSigner, benchGatewayUrl);
      expect(claims).toMatchObject({ jti: record.execution_id, tool: 'notes.pay-invoice' });
      expect(claims).not.toHaveProperty('http');
      expect(requests[0]?.receipt).toBe((await bed.record(record.execution_id)).receipt);
    },
  );
});
