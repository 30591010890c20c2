// Settling an unknown outcome, through the real use-cases on the in-memory store: a write whose
// answer was lost ends unknown; an operator settles it; the agent's status tool and its task then
// answer the settled outcome in the gateway's words (never the operator's reason), the record keeps
// its history and the settlement, and what cannot be settled is told apart.
import { describe, expect, it } from 'vitest';
import { detailedTask2026 } from '../../shared/edge/mcp/tasks.js';
import { settledMessages } from '../../shared/errors.js';
import { maxSettlementReasonLength } from '../../shared/executions/execution.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { getExecutionStatus } from '../../shared/use-cases/get-execution-status.js';
import { settlementReason, settleUnknown } from '../../shared/use-cases/settle-unknown.js';
import { verifies } from '../support/requirements.js';
import {
  argumentsOf,
  procurementAgent,
  tools,
  type UseCaseBed,
  unknownWrite,
  useCaseBed,
} from '../support/use-case-bed.js';

const reason = 'ERP audit log: PO-4411 created 12:00:03 by the gateway user';

/** A direct write whose system answered 502: sent, outcome not known. */
const unknownId = async (bed: UseCaseBed): Promise<string> => (await unknownWrite(bed)).execution_id;

describe('settling an unknown outcome', () => {
  it(
    verifies(
      ['settle.agent-answer', 'settle.record'],
      "the agent's status tool and its task answer the settled outcome in the gateway's words, not the operator's",
    ),
    async () => {
      const bed = await useCaseBed();
      const id = await unknownId(bed);
      bed.clock.advance(3_600_000);
      const answer = await settleUnknown(bed.deps, { executionId: id, outcome: 'succeeded', reason, by: 'alice' });
      expect(answer.kind).toBe('settled');

      const status = await getExecutionStatus(bed.deps, procurementAgent, { execution_id: id });
      expect(status).toMatchObject({
        status: 'succeeded',
        execution_id: id,
        code: null,
        result: null,
        message: settledMessages.succeeded,
      });
      expect(JSON.stringify(status)).not.toContain('PO-4411');
      const task = detailedTask2026(await bed.record(id));
      expect(task).toMatchObject({ status: 'completed', statusMessage: settledMessages.succeeded });
      expect(task.result?.structuredContent).toMatchObject({ status: 'succeeded', code: null });
      expect(task.result?.isError).toBe(false);

      const record = await bed.record(id);
      const settledAt = new Date(bed.clock.now()).toISOString();
      expect(record.history.map((change) => change.status).slice(-2)).toEqual(['unknown', 'succeeded']);
      expect(record.settlement).toEqual({
        outcome: 'succeeded',
        by: 'alice',
        at: settledAt,
        reason,
        unknown_code: 'http_502',
      });
    },
  );

  it(
    verifies('settle.agent-answer', 'a call settled as failed keeps the code it ended unknown with, and reads failed'),
    async () => {
      const bed = await useCaseBed();
      const id = await unknownId(bed);
      await settleUnknown(bed.deps, { executionId: id, outcome: 'failed', reason, by: 'alice' });
      expect(await getExecutionStatus(bed.deps, procurementAgent, { execution_id: id })).toMatchObject({
        status: 'failed',
        code: 'http_502',
        message: settledMessages.failed,
      });
    },
  );

  it(
    verifies(
      'settle.only-unknown-once',
      'tells apart no such call, a call that did not end unknown, and one settled already',
    ),
    async () => {
      const bed = await useCaseBed();
      // The bed's system answers 201 until told otherwise: a write that succeeded has nothing to settle.
      const done = await callTool(
        bed.deps,
        procurementAgent,
        tools.create,
        argumentsOf({ vendor: 'acme', amount: '6' }),
      );
      const id = await unknownId(bed);
      const settle = (executionId: string, by: string) =>
        settleUnknown(bed.deps, { executionId, outcome: 'failed', reason, by });
      expect(await settle(uuidV7Ids.next(), 'alice')).toEqual({ kind: 'not_found' });
      expect(await settle(done.execution_id ?? '', 'alice')).toMatchObject({
        kind: 'not_unknown',
        execution: { status: 'succeeded', settlement: null },
      });

      expect((await settle(id, 'alice')).kind).toBe('settled');
      expect(await settle(id, 'bob')).toMatchObject({
        kind: 'already_settled',
        execution: { status: 'failed', settlement: { by: 'alice' } },
      });
    },
  );

  it(verifies('settle.reason', 'a reason is required, bounded and free of control characters'), () => {
    expect(settlementReason('  found PO-1 in the ERP  ')).toEqual({ ok: true, value: 'found PO-1 in the ERP' });
    expect(settlementReason('   ')).toMatchObject({ ok: false, error: expect.stringContaining('required') });
    expect(settlementReason('x'.repeat(maxSettlementReasonLength + 1))).toMatchObject({
      ok: false,
      error: `the reason is at most ${maxSettlementReasonLength} characters`,
    });
    expect(settlementReason('x'.repeat(maxSettlementReasonLength)).ok).toBe(true);
    for (const control of ['line\nbreak', 'tab\there', 'escape\u001b[31m', 'nul\u0000']) {
      expect(settlementReason(control)).toMatchObject({
        ok: false,
        error: expect.stringContaining('control characters'),
      });
    }
  });
});
