// How long a call is kept, through the use-cases with a clock the test moves: a call records
// settings.retention when it is made, and the write that makes it final (whichever side makes it)
// sets when the table may delete it; a call still waiting or running has no such date.
import { describe, expect, it } from 'vitest';
import type { Execution } from '../../shared/executions/execution.js';
import type { OutboundResult } from '../../shared/invoke/system-client.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { executeApproved, expireApproval } from '../../shared/use-cases/held-call-steps.js';
import { verifies } from '../support/requirements.js';
import {
  approvalMs,
  argumentsOf,
  benchSnapshot,
  financeApprover,
  holdLargeOrder,
  procurementAgent,
  tools,
  type UseCaseBed,
  useCaseBed,
} from '../support/use-case-bed.js';

const day = 86_400;
const answer = (status: number): OutboundResult => ({
  kind: 'response',
  status,
  contentType: 'application/json',
  body: Buffer.from('{"error":"nope"}'),
});

/** The TTL value expected for a final write made now: the bed's clock plus the retention. */
const fromNow = (bed: UseCaseBed, seconds: number): number => Math.floor(bed.clock.now() / 1_000) + seconds;

/** Makes a call and returns its stored record. */
const call = async (bed: UseCaseBed, tool: string, args: Record<string, unknown>): Promise<Execution> => {
  const result = await callTool(bed.deps, procurementAgent, tool, argumentsOf(args));
  if (result.execution_id === null) throw new Error('expected a recorded call');
  return bed.record(result.execution_id);
};

describe('how long a call is kept', () => {
  it(
    verifies(
      'ops.retention',
      'each final status is kept for settings.retention from the write that ended it, counted on the clock',
    ),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ retention: '30d' }) });
      const kept = 30 * day;

      const succeeded = await call(bed, tools.list, { vendor: 'acme' });
      expect(succeeded).toMatchObject({ status: 'succeeded', retention_s: kept, retain_until: fromNow(bed, kept) });

      bed.clock.advance(7_000);
      bed.behaviour = { kind: 'answer', result: answer(404) };
      const failed = await call(bed, tools.list, { vendor: 'acme' });
      expect(failed).toMatchObject({ status: 'failed', retain_until: fromNow(bed, kept) });

      bed.clock.advance(7_000);
      bed.behaviour = { kind: 'answer', result: answer(503) };
      const unknown = await call(bed, tools.create, { vendor: 'acme', amount: '10' });
      expect(unknown).toMatchObject({ status: 'unknown', retain_until: fromNow(bed, kept) });

      bed.clock.advance(7_000);
      const denied = await call(bed, tools.create, { vendor: 'acme', amount: '0' });
      expect(denied).toMatchObject({ status: 'denied', retain_until: fromNow(bed, kept) });

      const rejectedCall = await holdLargeOrder(bed);
      expect(rejectedCall).toMatchObject({ status: 'pending_approval', retention_s: kept, retain_until: null });
      bed.clock.advance(20 * 60_000);
      await decide(bed.deps, financeApprover, {
        execution_id: rejectedCall.execution_id,
        outcome: 'reject',
        arguments_hash: rejectedCall.arguments_hash ?? '',
      });
      expect(await bed.record(rejectedCall.execution_id)).toMatchObject({
        status: 'rejected',
        retain_until: fromNow(bed, kept),
      });

      const expiring = await holdLargeOrder(bed);
      bed.clock.advance(approvalMs + 1_000);
      await expireApproval(bed.deps, expiring);
      expect(await bed.record(expiring.execution_id)).toMatchObject({
        status: 'expired',
        retain_until: fromNow(bed, kept),
      });
    },
  );

  it(
    verifies(
      'ops.retention',
      'a held call has no date while it waits or runs; it gets one when its outcome is written',
    ),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ retention: '2d' }) });
      const held = await holdLargeOrder(bed);
      bed.clock.advance(60_000);
      await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(await bed.record(held.execution_id)).toMatchObject({ status: 'approved', retain_until: null });
      // The configuration changed meanwhile: the call keeps the retention it was made with.
      bed.use(await benchSnapshot({ retention: '90d' }));
      bed.clock.advance(60_000);
      const ran = await executeApproved(bed.deps, held);
      expect(ran).toMatchObject({ status: 'succeeded', retain_until: fromNow(bed, 2 * day) });
      expect(await bed.record(held.execution_id)).toMatchObject({ retain_until: fromNow(bed, 2 * day) });
    },
  );

  it(verifies('ops.retention', 'without settings.retention a final call is kept 400 days'), async () => {
    const bed = await useCaseBed();
    const refused = await call(bed, 'erp.no_such_tool', {});
    expect(refused).toMatchObject({ status: 'denied', code: 'unknown_tool', retain_until: fromNow(bed, 400 * day) });
    // With no configuration at all, the refusal is kept as long.
    bed.use(null);
    const unconfigured = await call(bed, tools.list, { vendor: 'acme' });
    expect(unconfigured).toMatchObject({ status: 'denied', retain_until: fromNow(bed, 400 * day) });
  });
});
