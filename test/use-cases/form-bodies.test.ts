// A held write to a system that takes form bodies (as Stripe's and Twilio's writes do): the
// approver is shown the canonical arguments and decides on their hash, as for a JSON body, and the
// call sent after approval carries exactly the form encoding of those arguments.
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../shared/config/resolved.js';
import { loadSnapshot } from '../../shared/control-plane/snapshot.js';
import { decide, viewHeldCall } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { executeApproved } from '../../shared/use-cases/held-call-steps.js';
import { verifies } from '../support/requirements.js';
import { argumentsOf, financeApprover, procurementAgent, useCaseBed } from '../support/use-case-bed.js';

const document = {
  openapi: '3.0.0',
  info: { title: 'Payments', version: '1' },
  paths: {
    '/v1/refunds': {
      post: {
        operationId: 'PostRefunds',
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                required: ['charge', 'amount'],
                properties: {
                  charge: { type: 'string' },
                  amount: { type: 'integer' },
                  metadata: { type: 'object', additionalProperties: { type: 'string' } },
                  expand: { type: 'array', items: { type: 'string' } },
                },
              },
              encoding: {
                metadata: { style: 'deepObject', explode: true },
                expand: { style: 'deepObject', explode: true },
              },
            },
          },
        },
        responses: { '200': { description: 'OK' } },
      },
    },
  },
};

const config = [
  'systems:',
  '  - key: pay',
  '    base_url: http://pay.test',
  '    openapi: payments.json',
  'policies:',
  '  - policies.cedar',
  '',
].join('\n');

const policy = [
  '@id("refunds-approved")',
  '@approval("staff")',
  '@approvers("finance")',
  'permit (principal in Group::"procurement", action == Action::"pay.post_refunds", resource);',
  '',
].join('\n');

const paymentsSnapshot = async () => {
  const files: Record<string, string> = { 'payments.json': JSON.stringify(document), 'policies.cedar': policy };
  const loaded = await loadSnapshot({
    text: config,
    file: 'gateway.config.yaml',
    environment: {},
    files: { read: async (path) => files[path] },
  });
  if (!loaded.ok) throw new Error(loaded.problems.map(formatProblem).join('\n'));
  return loaded.snapshot;
};

describe('a held call whose system takes a form body', () => {
  it(
    verifies(
      ['catalog.form-bodies', 'invoke.form-body'],
      'shows and hashes the canonical arguments, and sends exactly their form encoding once approved',
    ),
    async () => {
      const bed = await useCaseBed({ snapshot: await paymentsSnapshot() });
      const answer = await callTool(
        bed.deps,
        procurementAgent,
        'pay.post_refunds',
        argumentsOf({
          metadata: { reason: 'late delivery', order: 'PO-1001' },
          charge: ' ch_1 ',
          amount: 1500,
          expand: ['charge'],
        }),
      );
      expect(answer.status).toBe('pending_approval');
      const held = await bed.record(answer.execution_id ?? '');

      const view = await viewHeldCall(bed.deps, financeApprover, held.execution_id);
      if (view.kind !== 'shown') throw new Error(`expected the approver to see the call: ${JSON.stringify(view)}`);
      const shown = JSON.parse(view.execution.arguments_json ?? 'null');
      expect(shown).toEqual({
        amount: 1500,
        charge: 'ch_1',
        expand: ['charge'],
        metadata: { order: 'PO-1001', reason: 'late delivery' },
      });
      expect(bed.sent).toEqual([]);

      const decided = await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(decided.kind).toBe('decided');
      await executeApproved(bed.deps, held);

      const [sent] = bed.sentFor(held.execution_id);
      expect(sent?.url).toBe('http://pay.test/v1/refunds');
      expect(sent?.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(sent?.body).toBe(
        'charge=ch_1&amount=1500&metadata%5Border%5D=PO-1001&metadata%5Breason%5D=late+delivery&expand%5B0%5D=charge',
      );
      // What the system reads back is what the approver was shown, value for value.
      expect(Object.fromEntries(new URLSearchParams(sent?.body ?? ''))).toEqual({
        charge: shown.charge,
        amount: String(shown.amount),
        'metadata[order]': shown.metadata.order,
        'metadata[reason]': shown.metadata.reason,
        'expand[0]': shown.expand[0],
      });
      expect((await bed.record(held.execution_id)).status).toBe('succeeded');
    },
  );
});
