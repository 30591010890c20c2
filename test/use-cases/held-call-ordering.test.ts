// A held call's record and its approval run start together (the reply waits on the network once):
// each order they can finish in, and each failure, leaves the call decidable or harmlessly gone.
import { describe, expect, it } from 'vitest';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { unrecordedGraceMs } from '../../shared/ids.js';
import type { CallToolDeps } from '../../shared/use-cases/call-tool.js';
import { callTool } from '../../shared/use-cases/call-tool.js';
import { RecordNotYetWritten, registerApproval } from '../../shared/use-cases/held-call-steps.js';
import { recoverOpenExecutions, registerGraceMs } from '../../shared/use-cases/recovery.js';
import { verifies } from '../support/requirements.js';
import { argumentsOf, benchSnapshot, procurementAgent, tools, useCaseBed } from '../support/use-case-bed.js';

const largeOrder = (amount = '1500') => argumentsOf({ vendor: 'acme', amount });

/** The store with its `create` replaced; every other operation is the store's own. */
const withCreate = (store: ExecutionStore, create: ExecutionStore['create']): ExecutionStore =>
  new Proxy(store, {
    get: (target, property) => {
      if (property === 'create') return create;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

/** Resolves when `seen` does, or fails after a second naming what never came. */
const within = (seen: Promise<void>, what: string): Promise<void> =>
  Promise.race([
    seen,
    new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`${what} never came`)), 1000).unref()),
  ]);

const latch = () => {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
};

describe('a held call’s record and approval run, started together', () => {
  it(
    verifies('perf.held-reply-concurrent', 'neither waits for the other: each is asked for while the other is open'),
    async () => {
      const bed = await useCaseBed();
      const createAsked = latch();
      const startAsked = latch();
      const deps: CallToolDeps = {
        ...bed.deps,
        // Each finishes only once the other was asked for: one after the other never ends.
        store: withCreate(bed.store, async (execution) => {
          createAsked.open();
          if (execution.status === 'pending_approval') await within(startAsked.opened, 'the approval run start');
          return bed.store.create(execution);
        }),
        approvalRuns: {
          ...bed.deps.approvalRuns,
          start: async (input) => {
            startAsked.open();
            await within(createAsked.opened, 'the record write');
            return bed.deps.approvalRuns.start(input);
          },
        },
      };
      const result = await callTool(deps, procurementAgent, tools.create, largeOrder());
      expect(result.status).toBe('pending_approval');
      expect((await bed.record(result.execution_id ?? '')).status).toBe('pending_approval');
      expect(bed.started.map((start) => start.execution_id)).toEqual([result.execution_id]);
    },
  );

  it(
    verifies(
      'perf.held-reply-concurrent',
      'a run whose first step comes before the record retries it, then registers and notifies once the record lands',
    ),
    async () => {
      const bed = await useCaseBed();
      const early: unknown[] = [];
      const firstStepRan = latch();
      const deps: CallToolDeps = {
        ...bed.deps,
        // The record's write lands only after the run's first step has looked for it.
        store: withCreate(bed.store, async (execution) => {
          if (execution.status === 'pending_approval') await within(firstStepRan.opened, 'the first step');
          return bed.store.create(execution);
        }),
        approvalRuns: {
          ...bed.deps.approvalRuns,
          start: async (input) => {
            const started = await bed.deps.approvalRuns.start(input);
            await registerApproval(bed.deps, { ...input, task_token: 't-early' }).catch((error) => early.push(error));
            firstStepRan.open();
            return started;
          },
        },
      };
      const result = await callTool(deps, procurementAgent, tools.create, largeOrder());
      expect(early).toHaveLength(1);
      expect(early[0]).toBeInstanceOf(RecordNotYetWritten);
      // Not closed: nothing was signalled and the call still waits.
      expect(bed.signals).toEqual([]);
      const key = { execution_id: result.execution_id ?? '', agent_id: procurementAgent.id };
      // The state machine's retry, a second later.
      bed.clock.advance(1000);
      expect(await registerApproval(bed.deps, { ...key, task_token: 't-early' })).toEqual({
        status: 'pending_approval',
      });
      expect(bed.notices.map((notice) => notice.execution_id)).toEqual([key.execution_id]);
      expect(await bed.record(key.execution_id)).toMatchObject({ status: 'pending_approval', task_token: 't-early' });
    },
  );

  it(
    verifies(
      'perf.held-reply-concurrent',
      'a record that is not written: the fault is answered, the started run waits for the record, then ends untouched',
    ),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ pendingCalls: 1 }) });
      const deps: CallToolDeps = {
        ...bed.deps,
        store: withCreate(bed.store, async (execution) =>
          execution.status === 'pending_approval'
            ? Promise.reject(new Error('the store refused'))
            : bed.store.create(execution),
        ),
      };
      await expect(callTool(deps, procurementAgent, tools.create, largeOrder())).rejects.toThrow('the store refused');
      const [run] = bed.started;
      if (run === undefined) throw new Error('expected the approval run to have started');
      expect(await bed.store.get(run.execution_id)).toBeUndefined();

      // While the record may still land, the run's first step is retried, not ended.
      await expect(registerApproval(bed.deps, { ...run, task_token: 't-1' })).rejects.toBeInstanceOf(
        RecordNotYetWritten,
      );
      expect(bed.signals).toEqual([]);
      bed.clock.advance(unrecordedGraceMs);
      expect(await registerApproval(bed.deps, { ...run, task_token: 't-1' })).toEqual({ status: 'missing' });
      expect(bed.signals).toEqual([{ token: 't-1', outcome: 'closed' }]);
      expect(await bed.store.get(run.execution_id)).toBeUndefined();
      expect(bed.notices).toEqual([]);
    },
  );

  it(
    verifies(
      'limits.pending-self-repair',
      'the place of a held call whose record was not written is kept while the record may land, then given back',
    ),
    async () => {
      const bed = await useCaseBed({ snapshot: await benchSnapshot({ pendingCalls: 1 }) });
      let refusing = true;
      const deps: CallToolDeps = {
        ...bed.deps,
        store: withCreate(bed.store, async (execution) =>
          refusing && execution.status === 'pending_approval'
            ? Promise.reject(new Error('the store refused'))
            : bed.store.create(execution),
        ),
      };
      await expect(callTool(deps, procurementAgent, tools.create, largeOrder())).rejects.toThrow('the store refused');
      refusing = false;
      // The write may still land (a lost answer): its place stays taken for now.
      expect(await callTool(deps, procurementAgent, tools.create, largeOrder('1600'))).toMatchObject({
        status: 'denied',
        code: 'too_many_pending',
      });
      bed.clock.advance(unrecordedGraceMs);
      expect((await callTool(deps, procurementAgent, tools.create, largeOrder('1700'))).status).toBe(
        'pending_approval',
      );
    },
  );

  it(verifies('approvals.reconciler', 'a record whose approval run did not start is started by recovery'), async () => {
    const bed = await useCaseBed();
    const deps: CallToolDeps = {
      ...bed.deps,
      approvalRuns: { ...bed.deps.approvalRuns, start: () => Promise.reject(new Error('throttled')) },
    };
    const result = await callTool(deps, procurementAgent, tools.create, largeOrder());
    expect(result.status).toBe('pending_approval');
    expect(bed.started).toEqual([]);
    expect(bed.warnings).toEqual(['the approval run did not start; recovery will start it']);

    // Recovery leaves a young call to its own run, then starts the one that never registered.
    expect((await recoverOpenExecutions(bed.deps, 'reconcile')).resumed).toBe(0);
    bed.clock.advance(registerGraceMs + 1);
    expect((await recoverOpenExecutions(bed.deps, 'reconcile')).resumed).toBe(1);
    expect(bed.started.map((start) => start.execution_id)).toEqual([result.execution_id]);
  });
});
