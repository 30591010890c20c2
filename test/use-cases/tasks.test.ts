// An agent's calls as tasks, as use-cases: withdrawing a held call (a conditional write, the
// approval run told to end, nothing sent), refusing to withdraw one already decided, and reading or
// listing only the agent's own calls, and waiting for one to end at the cost of two reads at most.
import { setImmediate } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ExecutionWriteFeed } from '../../shared/adapters/memory/execution-write-feed.js';
import { systemClock } from '../../shared/clock.js';
import { createMcpEndpoint, type McpEndpoint } from '../../shared/edge/mcp/endpoint.js';
import type { McpServices } from '../../shared/edge/mcp/server.js';
import { isFinal2025, taskResultWaitMs } from '../../shared/edge/mcp/task-methods.js';
import { coded } from '../../shared/errors.js';
import { unseenWrites } from '../../shared/executions/execution-writes.js';
import { measuredStore } from '../../shared/executions/measured-store.js';
import { RequestGate } from '../../shared/limits/request-gate.js';
import { decide } from '../../shared/use-cases/approver-decisions.js';
import { registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { findOwnCall, listOwnCalls, ownCallOnceFinal, withdrawCall } from '../../shared/use-cases/tasks.js';
import { mcpHeaders } from '../support/http.js';
import { verifies } from '../support/requirements.js';
import { countStoreReads } from '../support/store-reads.js';
import { financeApprover, holdLargeOrder, procurementAgent, useCaseBed } from '../support/use-case-bed.js';

const otherAgent = { id: 'support-agent', groups: ['procurement'], customerId: null };

describe('withdrawing a held call (tasks/cancel)', () => {
  it(
    verifies('mcp.tasks-cancel', 'moves a pending call to rejected / withdrawn, tells the run to close, sends nothing'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      await registerApproval(bed.deps, { ...held, task_token: 'token-1' });
      bed.clock.advance(1_000);

      const result = await withdrawCall(bed.deps, procurementAgent, held.execution_id);

      const now = new Date(bed.clock.now()).toISOString();
      expect(result).toMatchObject({ kind: 'withdrawn', execution: { status: 'rejected', code: 'withdrawn' } });
      expect(await bed.record(held.execution_id)).toMatchObject({
        status: 'rejected',
        code: 'withdrawn',
        message: 'The call was withdrawn before anyone decided it; nothing ran.',
        decided_at: now,
        history: [{ status: 'pending_approval' }, { status: 'rejected', at: now }],
      });
      expect(bed.signals).toEqual([{ token: 'token-1', outcome: 'closed' }]);
      expect(bed.sent).toEqual([]);
      // An approver arriving afterwards finds it closed.
      const late = await decide(bed.deps, financeApprover, {
        execution_id: held.execution_id,
        outcome: 'approve',
        arguments_hash: held.arguments_hash ?? '',
      });
      expect(late).toMatchObject({ kind: 'refused', reason: 'already_decided' });
      expect(bed.sent).toEqual([]);
    },
  );

  it(verifies('mcp.tasks-cancel', 'refuses to withdraw a call already approved, and changes nothing'), async () => {
    const bed = await useCaseBed();
    const held = await holdLargeOrder(bed);
    const approved = await decide(bed.deps, financeApprover, {
      execution_id: held.execution_id,
      outcome: 'approve',
      arguments_hash: held.arguments_hash ?? '',
    });
    expect(approved.kind).toBe('decided');

    const result = await withdrawCall(bed.deps, procurementAgent, held.execution_id);

    expect(result).toMatchObject({ kind: 'too_late', execution: { status: 'approved' } });
    expect((await bed.record(held.execution_id)).status).toBe('approved');
    expect(bed.signals).toEqual([]);
    // Withdrawing twice: the second finds it final.
    const again = await useCaseBed();
    const second = await holdLargeOrder(again);
    expect((await withdrawCall(again.deps, procurementAgent, second.execution_id)).kind).toBe('withdrawn');
    expect(await withdrawCall(again.deps, procurementAgent, second.execution_id)).toMatchObject({
      kind: 'too_late',
      execution: { status: 'rejected', code: 'withdrawn' },
    });
  });
});

describe('own calls only', () => {
  it(
    verifies('mcp.tasks-own-only', "answers another agent's id exactly like an unknown one, and leaves it alone"),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);

      expect(await withdrawCall(bed.deps, otherAgent, held.execution_id)).toEqual({ kind: 'not_found' });
      expect(await withdrawCall(bed.deps, otherAgent, '0190a5a0-0000-7000-8000-000000000000')).toEqual({
        kind: 'not_found',
      });
      expect(await withdrawCall(bed.deps, otherAgent, 'not-a-uuid')).toEqual({ kind: 'not_found' });
      expect(await findOwnCall(bed.deps, otherAgent, held.execution_id)).toBeUndefined();
      expect((await bed.record(held.execution_id)).status).toBe('pending_approval');
      expect(await findOwnCall(bed.deps, procurementAgent, held.execution_id.toUpperCase())).toMatchObject({
        execution_id: held.execution_id,
      });
    },
  );

  it(
    verifies(
      'mcp.tasks-own-only',
      "lists the agent's own calls only, newest first, refusing a cursor it did not give out",
    ),
    async () => {
      const bed = await useCaseBed();
      const mine = [];
      for (let index = 0; index < 3; index += 1) {
        mine.push(await holdLargeOrder(bed, `${1500 + index}`));
        bed.clock.advance(1_000);
      }
      await holdLargeOrder(bed, '2000', otherAgent);

      const first = await listOwnCalls(bed.deps, procurementAgent, undefined);
      if (first.kind !== 'page') throw new Error('expected a page');
      expect(first.page.items.map((item) => item.execution_id)).toEqual(
        mine.map((item) => item.execution_id).reverse(),
      );
      expect(first.page.items.every((item) => item.agent_id === procurementAgent.id)).toBe(true);
      expect(await listOwnCalls(bed.deps, procurementAgent, 'not a cursor')).toEqual({ kind: 'invalid_cursor' });
    },
  );
});

/** A held call, and the bed's store telling the feed of each write, as the local runtime composes them. */
const watchedBed = async () => {
  const bed = await useCaseBed();
  const held = await holdLargeOrder(bed);
  const feed = new ExecutionWriteFeed();
  const store = measuredStore(bed.store, null, (execution) => feed.written(execution));
  // Counted from here: the request's reads only (the writes below read nothing).
  const reads = countStoreReads(bed.store);
  /** Finance's decision, written straight to the store (a write that reads nothing). */
  const decided = (to: 'approved' | 'rejected') => {
    const at = new Date(bed.clock.now()).toISOString();
    const code = to === 'rejected' ? coded('rejected') : {};
    return store.transition(held, {
      from: 'pending_approval',
      to,
      at,
      patch: { ...code, decided_at: at, decided_by: financeApprover.id },
    });
  };
  return { bed, held, feed, store, reads, decided, deps: { ...bed.deps, store, executionWrites: feed } };
};

describe('waiting for a task to end (tasks/result) costs at most two reads', () => {
  /** Whatever is already due has run: the in-memory store answers within the microtasks before this. */
  const settled = () => setImmediate();
  const longWait = (signal = new AbortController().signal) => ({ signal, limitMs: taskResultWaitMs });

  afterEach(() => {
    vi.useRealTimers();
  });

  it(
    verifies('mcp.tasks-result-no-polling', 'wakes at the write that ends the task and answers it, after two reads'),
    async () => {
      const { bed, held, feed, store, reads, decided, deps } = await watchedBed();
      const answer = ownCallOnceFinal(deps, procurementAgent, held.execution_id, isFinal2025, longWait());
      await settled();
      expect(reads.count()).toBe(1);
      expect(feed.waiting).toBe(1);
      // Approved is still working (it runs next): the wait goes on without reading.
      await decided('approved');
      const at = new Date(bed.clock.now()).toISOString();
      await settled();
      expect(reads.count()).toBe(1);
      await store.transition(held, {
        from: 'approved',
        to: 'succeeded',
        at,
        patch: { result_json: '{"id":"PO-1"}', http_status: 201 },
      });
      expect(await answer).toMatchObject({ execution_id: held.execution_id, status: 'succeeded' });
      expect(reads.count()).toBe(2);
      expect(feed.waiting).toBe(0);
    },
  );

  it(
    verifies(
      'mcp.tasks-result-no-polling',
      'answers still working after two reads when nobody decides within the limit',
    ),
    async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { held, feed, reads, deps } = await watchedBed();
      const answer = ownCallOnceFinal(deps, procurementAgent, held.execution_id, isFinal2025, longWait());
      await settled();
      await vi.advanceTimersByTimeAsync(taskResultWaitMs - 1);
      expect(reads.count()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(await answer).toMatchObject({ status: 'pending_approval' });
      expect(reads.count()).toBe(2);
      expect(feed.waiting).toBe(0);
      // The request ending (the client gave up) ends the wait the same way, and leaves nothing behind.
      const request = new AbortController();
      const abandoned = ownCallOnceFinal(
        deps,
        procurementAgent,
        held.execution_id,
        isFinal2025,
        longWait(request.signal),
      );
      await settled();
      request.abort();
      expect(await abandoned).toMatchObject({ status: 'pending_approval' });
      expect(reads.count()).toBe(4);
      expect(feed.waiting).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    },
  );

  it(
    verifies(
      'mcp.tasks-result-no-polling',
      'answers from its one read where no write can be seen (AWS), and a final or unknown task at once',
    ),
    async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { bed, held, feed, reads, deps } = await watchedBed();
      for (const writes of [undefined, unseenWrites]) {
        reads.reset();
        const aws = { ...bed.deps, ...(writes === undefined ? {} : { executionWrites: writes }) };
        // No timer is moved: an answer at all means it did not wait.
        expect(await ownCallOnceFinal(aws, procurementAgent, held.execution_id, isFinal2025, longWait())).toMatchObject(
          { status: 'pending_approval' },
        );
        expect(reads.count()).toBe(1);
      }
      reads.reset();
      expect(await ownCallOnceFinal(deps, otherAgent, held.execution_id, isFinal2025, longWait())).toBeUndefined();
      expect(reads.count()).toBe(1);
      expect((await withdrawCall(deps, procurementAgent, held.execution_id)).kind).toBe('withdrawn');
      reads.reset();
      expect(await ownCallOnceFinal(deps, procurementAgent, held.execution_id, isFinal2025, longWait())).toMatchObject({
        status: 'rejected',
        code: 'withdrawn',
      });
      expect(reads.count()).toBe(1);
      expect(feed.waiting).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    },
  );
});

describe('tasks/result over MCP (2025-11-25), as each runtime composes it', () => {
  const tasksResult = (endpoint: McpEndpoint, taskId: string): Promise<Response> =>
    endpoint.handle(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: mcpHeaders(null, { 'mcp-protocol-version': '2025-11-25' }),
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } }),
      }),
      procurementAgent,
    );
  const endpointOver = (services: McpServices): McpEndpoint =>
    createMcpEndpoint(services, {
      allowedHostnames: null,
      allowedOrigins: [],
      requestGate: new RequestGate(systemClock),
    });

  it(
    verifies('mcp.tasks-result-no-polling', 'answers -32000 after one read in the MCP function as Lambda composes it'),
    async () => {
      const bed = await useCaseBed();
      const held = await holdLargeOrder(bed);
      const reads = countStoreReads(bed.store);
      const endpoint = endpointOver({ ...bed.deps, executionWrites: unseenWrites });
      try {
        // The clock stands still: a wait measured by it would never end.
        const answer: unknown = await (await tasksResult(endpoint, held.execution_id)).json();
        expect(answer).toMatchObject({
          id: 7,
          error: { code: -32000, message: expect.stringMatching(/still working/) },
        });
        expect(reads.count()).toBe(1);
      } finally {
        await endpoint.close();
      }
    },
  );

  it(
    verifies(
      'mcp.tasks-result-no-polling',
      'answers the decision written while it waits in the local runtime, after two reads',
    ),
    async () => {
      const { held, feed, reads, decided, deps } = await watchedBed();
      const endpoint = endpointOver(deps);
      try {
        const answering = tasksResult(endpoint, held.execution_id);
        // Waiting on the request's own progress, not on time: its first read, then its wait.
        while (reads.count() === 0) await setImmediate();
        expect(feed.waiting).toBe(1);
        await decided('rejected');
        const answer: unknown = await (await answering).json();
        expect(answer).toMatchObject({
          id: 7,
          result: { isError: true, structuredContent: { status: 'rejected', execution_id: held.execution_id } },
        });
        expect(reads.count()).toBe(2);
      } finally {
        await endpoint.close();
      }
    },
  );
});
