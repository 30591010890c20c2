// What an approver sees of one held call besides its arguments: the requesting agent's recent calls
// of the same tool, read through the store's per-agent listing, only by those who may see the call.
import { describe, expect, it } from 'vitest';
import { recentCallsShown, viewHeldCall } from '../../shared/use-cases/approver-decisions.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { verifies } from '../support/requirements.js';
import {
  argumentsOf,
  financeApprover,
  holdLargeOrder,
  operationsApprover,
  procurementAgent,
  tools,
  useCaseBed,
} from '../support/use-case-bed.js';

describe("a held call's page data", () => {
  it(
    verifies(
      'console.recent-calls',
      "lists the agent's other calls of the same tool, newest first, at most ten, and no one else's",
    ),
    async () => {
      const bed = await useCaseBed();
      const earlier = [];
      for (let index = 0; index < 12; index += 1) {
        bed.clock.advance(1_000);
        // Small orders run at once; each is one of the agent's calls of this tool.
        earlier.push(
          await callTool(bed.deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme', amount: '10' })),
        );
      }
      bed.clock.advance(1_000);
      // Another tool, and another agent's call of this tool: neither is listed.
      await callTool(bed.deps, procurementAgent, tools.list, argumentsOf({ vendor: 'acme' }));
      await callTool(
        bed.deps,
        { ...procurementAgent, id: 'other-agent' },
        tools.create,
        argumentsOf({ vendor: 'acme', amount: '10' }),
      );
      bed.clock.advance(1_000);
      const held = await holdLargeOrder(bed);

      const shown = await viewHeldCall(bed.deps, financeApprover, held.execution_id);

      if (shown.kind !== 'shown') throw new Error(`expected the call to be shown, got ${shown.reason}`);
      expect(shown.recent).toHaveLength(recentCallsShown);
      expect(shown.recent.map((call) => call.execution_id)).toEqual(
        earlier
          .map((answer) => answer.execution_id)
          .reverse()
          .slice(0, recentCallsShown),
      );
      expect(shown.recent[0]).toEqual({
        execution_id: earlier.at(-1)?.execution_id,
        created_at: expect.any(String),
        status: 'succeeded',
        code: null,
      });
      // Only what the page shows is handed over: never another call's arguments.
      expect(Object.keys(shown.recent[0] ?? {}).sort()).toEqual(['code', 'created_at', 'execution_id', 'status']);
    },
  );

  it(
    verifies('console.recent-calls', 'gives nothing of the agent to an approver the policy did not name'),
    async () => {
      const bed = await useCaseBed();
      await callTool(bed.deps, procurementAgent, tools.create, argumentsOf({ vendor: 'acme', amount: '10' }));
      const held = await holdLargeOrder(bed);
      expect(await viewHeldCall(bed.deps, operationsApprover, held.execution_id)).toEqual({
        kind: 'refused',
        reason: 'not_an_approver',
      });
    },
  );
});
