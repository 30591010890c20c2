// Receipts on approved calls, as use-cases on the in-memory store: what a receipt binds (checked by
// an independent JWT library against the keys the signer publishes, as a system would), how each
// kind of system receives it, that a call the policy ran at once carries none, and that a call is
// never sent without its receipt.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Customer } from '../../shared/approvals/approver.js';
import { executionCallToolResult } from '../../shared/edge/tool-call/tool-result.js';
import type { OutboundRequest } from '../../shared/invoke/system-client.js';
import { receiptMetaKey } from '../../shared/receipts/claims.js';
import { callTool, callToolAnswer } from '../../shared/use-cases/call-tool.js';
import { customerAnswer } from '../../shared/use-cases/customer-decisions.js';
import { executeApproved } from '../../shared/use-cases/held-call-steps.js';
import { verifiedReceipt } from '../support/receipts.js';
import { verifies } from '../support/requirements.js';
import {
  approveHeld,
  argumentsOf,
  benchGatewayUrl,
  benchSnapshot,
  customerPolicy,
  financeApprover,
  holdLargeOrder,
  holdRestrictedLookup,
  procurementAgent,
  testReceiptSigner,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

/** The claims of a receipt signed by the bench's key for the bench's gateway. */
const verified = (receipt: unknown) => verifiedReceipt(receipt, testReceiptSigner, benchGatewayUrl);

const base64urlSha256 = (text: string): string =>
  createHash('sha256').update(Buffer.from(text, 'utf8')).digest('base64url');

const onlyRequest = (bed: UseCaseBed, executionId: string): OutboundRequest => {
  const [request, ...more] = bed.sentFor(executionId);
  if (request === undefined || more.length > 0) throw new Error('expected exactly one request');
  return request;
};

describe('a receipt for an approved HTTP call', () => {
  it(
    verifies(
      ['receipts.claims', 'receipts.http-header', 'receipts.signed-before-claim'],
      'binds the execution, agent, tool, arguments and approver, and the exact request sent',
    ),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      bed.clock.advance(60_000);
      await approveHeld(bed, held);
      const decidedAt = new Date(bed.clock.now()).toISOString();
      bed.clock.advance(1_000);
      const lines: [string, ...unknown[]][] = [];
      const log = {
        info: (message: string, ...fields: unknown[]) => void lines.push([message, ...fields]),
        warn: (message: string, ...fields: unknown[]) => void lines.push([message, ...fields]),
      };
      expect(await executeApproved({ ...bed.deps, log }, held)).toMatchObject({ status: 'succeeded' });

      const request = onlyRequest(bed, held.execution_id);
      const receipt = request.headers['approval-receipt'];
      const claims = await verified(receipt);
      expect(claims).toEqual({
        iss: benchGatewayUrl,
        sub: procurementAgent.id,
        jti: held.execution_id,
        iat: Math.floor(bed.clock.now() / 1000),
        exp: Math.floor(bed.clock.now() / 1000) + 300,
        tool: tools.create,
        args_sha256: held.arguments_hash,
        approvals: [{ role: 'staff', by: financeApprover.id, at: decidedAt }],
        http: { method: 'POST', path: '/orders', body_sha256: base64urlSha256(request.body ?? '') },
      });
      // The call's log lines say how it went, not what it carried.
      expect(lines.map(([message]) => message)).toContain('system call finished');
      expect(JSON.stringify(lines)).not.toContain(receipt?.split('.')[2] ?? 'a receipt');
      // The hash is of the bytes sent, which hold the canonical arguments.
      expect(JSON.parse(request.body ?? '')).toMatchObject({ vendor: 'acme', amount: '1500' });
      // Kept with the claim; the record went approved → succeeded with no other write.
      const record = await bed.record(held.execution_id);
      expect(record.receipt).toBe(receipt);
      expect(record.history.map((change) => change.status)).toEqual(['pending_approval', 'approved', 'succeeded']);
      // The agent sees it beside the result object (the shaping every transport's answer uses).
      expect(executionCallToolResult(record)._meta).toEqual({ [receiptMetaKey]: receipt });
      expect(executionCallToolResult(record).structuredContent).not.toHaveProperty('receipt');
    },
  );

  it(
    verifies('receipts.claims', 'names the customer and then staff, each with the time of their decision'),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ policy: customerPolicy }) });
      const dana: Customer = { id: 'customer-1042', name: 'Dana' };
      const held = await holdLargeOrder(bed, '1500', { ...procurementAgent, customerId: dana.id });
      bed.clock.advance(30_000);
      const confirmed = await customerAnswer(bed.deps, dana, {
        execution_id: held.execution_id,
        outcome: 'confirm',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(confirmed).toMatchObject({ kind: 'answered' });
      const confirmedAt = new Date(bed.clock.now()).toISOString();
      bed.clock.advance(30_000);
      await approveHeld(bed, held);
      const approvedAt = new Date(bed.clock.now()).toISOString();
      await executeApproved(bed.deps, held);

      const claims = await verified(onlyRequest(bed, held.execution_id).headers['approval-receipt']);
      expect(claims.approvals).toEqual([
        { role: 'customer', by: dana.id, at: confirmedAt },
        { role: 'staff', by: financeApprover.id, at: approvedAt },
      ]);
    },
  );

  it(
    verifies('receipts.http-header', 'names the path with its query, and no body hash for a call without one'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdRestrictedLookup(bed);
      await approveHeld(bed, held);
      await executeApproved(bed.deps, held);
      const request = onlyRequest(bed, held.execution_id);
      expect(request.body).toBeNull();
      const claims = await verified(request.headers['approval-receipt']);
      expect(claims.http).toEqual({ method: 'GET', path: '/orders?vendor=restricted', body_sha256: null });
    },
  );

  it(verifies('receipts.claims', 'is never given to a call the policy ran at once'), async () => {
    const bed = await useCaseBed();
    const answer = await callTool(
      bed.deps,
      procurementAgent,
      tools.create,
      argumentsOf({ vendor: 'acme', amount: '20' }),
    );
    expect(answer.status).toBe('succeeded');
    const request = onlyRequest(bed, answer.execution_id ?? '');
    expect(request.headers).not.toHaveProperty('approval-receipt');
    const record = await bed.record(answer.execution_id ?? '');
    expect(record.receipt).toBeNull();
    expect(executionCallToolResult(record)).not.toHaveProperty('_meta');
  });

  it(
    verifies('receipts.signed-before-claim', 'a signer that fails leaves the call approved and unsent, to run again'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      await approveHeld(bed, held);
      const failing = {
        ...bed.deps,
        receiptSigner: {
          sign: () => Promise.reject(new Error('KMS is unavailable')),
          publicKeys: () => testReceiptSigner.publicKeys(),
        },
      };
      await expect(executeApproved(failing, held)).rejects.toThrow(/receipt could not be signed/);
      expect(bed.sent).toEqual([]);
      expect(await bed.record(held.execution_id)).toMatchObject({
        status: 'approved',
        claimed_at: null,
        receipt: null,
      });
      expect(bed.warnings).toContain(
        'an approved call was not sent: its receipt could not be signed; it is tried again',
      );
      // The workflow's retry runs it, with its receipt.
      expect(await executeApproved(bed.deps, held)).toMatchObject({ status: 'succeeded' });
      await verified(onlyRequest(bed, held.execution_id).headers['approval-receipt']);
    },
  );
});

describe('a call asked again under its key after it was approved and ran', () => {
  it(
    verifies(
      ['receipts.agent-meta', 'retries.same-key-same-call'],
      'answers the first call with the receipt it was sent with',
    ),
    async () => {
      const bed = await useCaseBed();
      const args = argumentsOf({ vendor: 'acme', amount: '1500' });
      const request = { traceparent: null, idempotencyKey: 'order-2026-12-03-1' };
      const first = await callToolAnswer(bed.deps, procurementAgent, tools.create, args, request);
      expect(first).toMatchObject({ result: { status: 'pending_approval' }, receipt: null });
      const held = await bed.record(first.result.execution_id ?? '');
      await approveHeld(bed, held);
      await executeApproved(bed.deps, held);
      const ran = await bed.record(held.execution_id);
      expect(ran.status).toBe('succeeded');
      const again = await callToolAnswer(bed.deps, procurementAgent, tools.create, args, request);
      expect(again.result).toMatchObject({ status: 'succeeded', execution_id: held.execution_id });
      expect(again.receipt).toBe(ran.receipt);
      await verified(again.receipt);
      expect(bed.sentFor(held.execution_id)).toHaveLength(1);
    },
  );
});
