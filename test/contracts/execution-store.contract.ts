// The execution store port's contract, one suite every adapter runs (DynamoDB against dynalite,
// the in-memory store): how each persists the domain's write plans (shared/executions/write-plan.ts,
// whose rules test/unit/executions/write-plan.test.ts covers): ownership by key, conditional
// transitions and their lost races, guarded decisions, one claim, annotations, the open calls by
// index and by scan, listings by agent, when a final call may be deleted, and the agents' places
// for held calls, a failed release included. Ids in titles are cited by the files that run the suite.
// It is long on purpose: one suite holds every operation of the port, so no adapter can pass a subset.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IllegalTransitionError as DomainIllegalTransitionError,
  type Execution,
  type StaffApproval,
} from '../../shared/executions/execution.js';
import {
  type ExecutionPage,
  type ExecutionStore,
  IllegalTransitionError,
  type TransitionResult,
} from '../../shared/executions/store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import type { ExecutionStatus } from '../../shared/result.js';
import { anExecution } from '../support/executions.js';
import { verifies } from '../support/requirements.js';

export interface OpenedStore {
  readonly store: ExecutionStore;
  /** What the store logged at WARN, in order. */
  readonly warnings: readonly { readonly message: string; readonly attributes: readonly unknown[] }[];
  /** Makes giving back this agent's places fail, by a fault of the store's own kind. */
  breakPlaces(agentId: string): Promise<void>;
  close(): Promise<void>;
}

const base = Date.parse('2026-11-29T12:00:00.000Z');
/** An instant `offsetMs` after the suite's fixed start. */
const at = (offsetMs: number): string => new Date(base + offsetMs).toISOString();

/** A fresh UUIDv7 whose last hex digit (the open-calls partition) is `digit`. */
const idEndingIn = (digit: string): string => `${uuidV7Ids.next().slice(0, -1)}${digit}`;

const applied = (result: TransitionResult): Execution => {
  if (result.kind !== 'applied')
    throw new Error(`expected the write to apply; it conflicted: ${JSON.stringify(result)}`);
  return result.execution;
};

/** Every page of a listing, following its cursors, each page checked against the limit. */
const allPages = async (
  list: (cursor: string | undefined) => Promise<ExecutionPage>,
  limit: number,
): Promise<{ items: Execution[]; pages: number }> => {
  const items: Execution[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await list(cursor);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    cursor = page.next;
    pages += 1;
    if (pages > 1_000) throw new Error('the cursors never end');
  } while (cursor !== undefined);
  return { items, pages };
};

const idsOf = (items: readonly Execution[]): string[] => items.map((item) => item.execution_id);

export const executionStoreContract = (name: string, open: () => Promise<OpenedStore>): void => {
  describe(`${name} meets the execution store contract`, () => {
    let opened: OpenedStore;
    let store: ExecutionStore;
    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    /** A test that needs a store holding nothing but what it writes (listings of the whole store). */
    const withFreshStore = async (test: (fresh: ExecutionStore) => Promise<void>): Promise<void> => {
      const fresh = await open();
      try {
        await test(fresh.store);
      } finally {
        await fresh.close();
      }
    };

    describe('records', () => {
      it(
        verifies('store.ownership-by-key', 'reads an execution with its owner and not with another agent'),
        async () => {
          const execution = anExecution({ agent_id: 'owner-agent' });
          expect(await store.create(execution)).toEqual({ kind: 'created' });
          expect(await store.getOwned({ execution_id: execution.execution_id, agent_id: 'owner-agent' })).toEqual(
            execution,
          );
          expect(
            await store.getOwned({ execution_id: execution.execution_id, agent_id: 'other-agent' }),
          ).toBeUndefined();
        },
      );

      it(verifies('store.ownership-by-key', 'refuses to overwrite an existing execution'), async () => {
        const execution = anExecution();
        await store.create(execution);
        const rewrite = { ...execution, tool: 'erp.vendors.delete', status: 'succeeded' as const };
        expect(await store.create(rewrite)).toEqual({ kind: 'exists' });
        expect(await store.get(execution.execution_id)).toEqual(execution);
      });

      it(verifies('store.by-id-and-by-agent', 'reads by id alone'), async () => {
        const execution = anExecution({ agent_id: 'by-id-agent' });
        await store.create(execution);
        expect(await store.get(execution.execution_id)).toEqual(execution);
        expect(await store.get(uuidV7Ids.next())).toBeUndefined();
      });

      it(verifies('store.by-id-and-by-agent', 'refuses to guess when one id is recorded for two agents'), async () => {
        const execution = anExecution({ agent_id: 'first-agent' });
        await store.create(execution);
        expect(await store.create({ ...execution, agent_id: 'second-agent' })).toEqual({ kind: 'created' });
        await expect(store.get(execution.execution_id)).rejects.toThrow(/more than one agent/);
      });

      it('refuses to record what is not a valid execution', async () => {
        const invalid = anExecution({ created_at: 'yesterday' });
        await expect(store.create(invalid)).rejects.toThrow();
        expect(await store.get(invalid.execution_id)).toBeUndefined();
      });

      it('keeps its own copy: changing a record given or returned changes nothing stored', async () => {
        const execution = anExecution({
          decision: { effect: 'allow', reason: null, determining: [], step: null, config_version: 'v1' },
        });
        const expected = structuredClone(execution);
        await store.create(execution);
        execution.history.push({ status: 'approved', at: at(1) });
        execution.decision?.determining.push({ name: 'sneaky', file: 'p.cedar', line: 1 });
        const read = await store.get(execution.execution_id);
        expect(read).toEqual(expected);
        read?.history.push({ status: 'rejected', at: at(2) });
        if (read !== undefined) read.status = 'succeeded';
        const moved = applied(
          await store.transition(execution, { from: 'pending_approval', to: 'expired', at: at(3) }),
        );
        moved.history.length = 0;
        expect((await store.getOwned(execution))?.history).toEqual([
          { status: 'pending_approval', at: execution.created_at },
          { status: 'expired', at: at(3) },
        ]);
      });
    });

    describe('transitions', () => {
      it(
        verifies('store.conditional-transitions', 'applies a transition from the expected status and records it'),
        async () => {
          const execution = anExecution({ status: 'pending_approval', message: 'waiting' });
          await store.create(execution);
          const moved = applied(
            await store.transition(execution, {
              from: 'pending_approval',
              to: 'approved',
              at: at(1_000),
              patch: { decided_by: 'farah', code: undefined },
            }),
          );
          expect(moved).toEqual({
            ...execution,
            status: 'approved',
            decided_by: 'farah',
            updated_at: at(1_000),
            history: [
              { status: 'pending_approval', at: execution.created_at },
              { status: 'approved', at: at(1_000) },
            ],
          });
          expect(await store.getOwned(execution)).toEqual(moved);

          const done = applied(
            await store.transition(execution, {
              from: 'approved',
              to: 'succeeded',
              at: at(2_000),
              patch: { result_json: '{"id":"PO-1"}', message: null, http_status: 201, latency_ms: 12 },
            }),
          );
          expect(done).toMatchObject({
            status: 'succeeded',
            result_json: '{"id":"PO-1"}',
            message: null,
            http_status: 201,
            latency_ms: 12,
            decided_by: 'farah',
          });
          expect(done.history.map((change) => change.status)).toEqual(['pending_approval', 'approved', 'succeeded']);
        },
      );

      it(
        verifies('store.conditional-transitions', 'reports a lost race as a conflict with the current record'),
        async () => {
          const execution = anExecution({ status: 'pending_approval' });
          await store.create(execution);
          const outcomes = await Promise.all([
            store.transition(execution, { from: 'pending_approval', to: 'approved', at: at(1) }),
            store.transition(execution, { from: 'pending_approval', to: 'rejected', at: at(1) }),
            store.transition(execution, { from: 'pending_approval', to: 'expired', at: at(1) }),
          ]);
          const winners = outcomes.filter((outcome) => outcome.kind === 'applied');
          const losers = outcomes.filter((outcome) => outcome.kind === 'conflict');
          expect(winners).toHaveLength(1);
          expect(losers).toHaveLength(2);
          const [winner] = winners;
          if (winner?.kind !== 'applied') throw new Error('expected a winner');
          for (const loser of losers) {
            expect(loser.kind === 'conflict' && loser.current).toEqual(winner.execution);
          }
          expect(await store.getOwned(execution)).toEqual(winner.execution);
        },
      );

      it(
        verifies(
          'store.conditional-transitions',
          'answers conflict, with what is held, when the status is not the expected one',
        ),
        async () => {
          const execution = anExecution({ status: 'approved' });
          await store.create(execution);
          const outcome = await store.transition(execution, { from: 'pending_approval', to: 'expired', at: at(1) });
          expect(outcome).toEqual({ kind: 'conflict', current: execution });
          expect(await store.getOwned(execution)).toEqual(execution);
        },
      );

      it(
        verifies(
          'store.conditional-transitions',
          'answers conflict for an execution that does not exist, or of another agent',
        ),
        async () => {
          const missing = anExecution();
          expect(await store.transition(missing, { from: 'pending_approval', to: 'expired', at: at(1) })).toEqual({
            kind: 'conflict',
            current: undefined,
          });
          expect(await store.get(missing.execution_id)).toBeUndefined();
          const owned = anExecution({ agent_id: 'real-owner' });
          await store.create(owned);
          const other = { execution_id: owned.execution_id, agent_id: 'impostor' };
          expect(await store.transition(other, { from: 'pending_approval', to: 'approved', at: at(1) })).toEqual({
            kind: 'conflict',
            current: undefined,
          });
          expect(await store.get(owned.execution_id)).toEqual(owned);
        },
      );

      it(
        verifies(
          ['store.conditional-transitions', 'store.lifecycle-plan'],
          'refuses a move the lifecycle refuses, saying why, without writing',
        ),
        async () => {
          const execution = anExecution({ status: 'pending_approval' });
          await store.create(execution);
          // Which pairs are refused is the plan's rule (write-plan.test.ts); here, that nothing is written.
          const refused: readonly (readonly [ExecutionStatus, ExecutionStatus])[] = [
            ['pending_approval', 'succeeded'],
            ['pending_approval', 'pending_approval'],
            ['succeeded', 'failed'],
          ];
          for (const [from, to] of refused) {
            const move = store.transition(execution, { from, to, at: at(1) });
            await expect(move).rejects.toBeInstanceOf(IllegalTransitionError);
            await expect(move).rejects.toThrow(`An execution cannot move from ${from} to ${to}.`);
          }
          expect(await store.getOwned(execution)).toEqual(execution);
          // One class, wherever it is imported from.
          expect(IllegalTransitionError).toBe(DomainIllegalTransitionError);
        },
      );
    });

    describe('guarded writes', () => {
      it(
        verifies('store.guarded-writes', 'a decision holds only with the held arguments hash and before the expiry'),
        async () => {
          const execution = anExecution({ arguments_hash: 'a'.repeat(64), expires_at: at(60_000) });
          await store.create(execution);
          const decide = (hash: string, now: string) =>
            store.transition(execution, {
              from: 'pending_approval',
              to: 'approved',
              at: now,
              guard: { argumentsHash: hash, notExpiredAt: now },
            });
          expect(await decide('b'.repeat(64), at(0))).toEqual({ kind: 'conflict', current: execution });
          // At the very instant of expiry the time has run out.
          expect((await decide('a'.repeat(64), at(60_000))).kind).toBe('conflict');
          expect((await decide('a'.repeat(64), at(61_000))).kind).toBe('conflict');
          expect(await store.getOwned(execution)).toEqual(execution);
          expect(applied(await decide('a'.repeat(64), at(59_999))).status).toBe('approved');
        },
      );

      it(
        verifies(
          'quorum.approval-write',
          'an approval short of the quorum holds only on the approvals read, pending, same hash, in time',
        ),
        async () => {
          const execution = anExecution({ arguments_hash: 'a'.repeat(64), expires_at: at(60_000) });
          await store.create(execution);
          const approval = (by: string, offsetMs: number): StaffApproval => ({
            by,
            at: at(offsetMs),
            group: 'finance',
            signed_in_at: at(-1_000),
            acr: 'phr',
          });
          const add = (approvals: StaffApproval[], offsetMs = 1_000, hash = 'a'.repeat(64)) =>
            store.addApproval(execution, { at: at(offsetMs), approvals, argumentsHash: hash });
          const first = applied(await add([approval('farah', 1_000)]));
          expect(first).toMatchObject({ status: 'pending_approval', approvals: [approval('farah', 1_000)] });
          expect(first.history).toEqual(execution.history);
          // Written on the record as it was before the first: a lost race, nothing changed.
          expect(await add([approval('fiona', 2_000)])).toEqual({ kind: 'conflict', current: first });
          expect((await add([approval('farah', 1_000), approval('fiona', 2_000)], 2_000, 'b'.repeat(64))).kind).toBe(
            'conflict',
          );
          expect((await add([approval('farah', 1_000), approval('fiona', 60_000)], 60_000)).kind).toBe('conflict');
          expect(await store.get(execution.execution_id)).toEqual(first);
          // The approval that completes the quorum holds on the same count, and only once.
          const completing = (given: number) =>
            store.transition(execution, {
              from: 'pending_approval',
              to: 'approved',
              at: at(3_000),
              guard: { argumentsHash: 'a'.repeat(64), notExpiredAt: at(3_000), approvalsGiven: given },
              patch: { approvals: [approval('farah', 1_000), approval('oskar', 3_000)] },
            });
          expect((await completing(0)).kind).toBe('conflict');
          const approved = applied(await completing(1));
          expect(approved.approvals.map((given) => given.by)).toEqual(['farah', 'oskar']);
          expect((await add([...approved.approvals, approval('fiona', 4_000)], 4_000)).kind).toBe('conflict');
        },
      );

      it(verifies('store.guarded-writes', 'a guard fails on a record with no hash or no expiry to check'), async () => {
        const unhashed = anExecution({ arguments_hash: null, expires_at: at(60_000) });
        const timeless = anExecution({ arguments_hash: 'a'.repeat(64), expires_at: null });
        await store.create(unhashed);
        await store.create(timeless);
        const guarded = (guard: { argumentsHash?: string; notExpiredAt?: string }) => ({
          from: 'pending_approval' as const,
          to: 'approved' as const,
          at: at(0),
          guard,
        });
        expect((await store.transition(unhashed, guarded({ argumentsHash: 'a'.repeat(64) }))).kind).toBe('conflict');
        expect((await store.transition(timeless, guarded({ notExpiredAt: at(0) }))).kind).toBe('conflict');
        // Without that guard, the same writes hold.
        expect((await store.transition(unhashed, guarded({ notExpiredAt: at(0) }))).kind).toBe('applied');
        expect((await store.transition(timeless, guarded({ argumentsHash: 'a'.repeat(64) }))).kind).toBe('applied');
      });

      it(verifies('store.guarded-writes', "a customer's answer holds only while they have not confirmed"), async () => {
        const execution = anExecution({ expires_at: at(60_000) });
        await store.create(execution);
        const decline = () =>
          store.transition(execution, {
            from: 'pending_approval',
            to: 'rejected',
            at: at(1),
            guard: { customerUnanswered: true },
          });
        const confirmed = await store.annotate(
          execution,
          'pending_approval',
          { customer_confirmed_at: at(0) },
          'customer_confirmed_at',
        );
        expect(applied(confirmed).customer_confirmed_at).toBe(at(0));
        // Confirmed once: a second answer, of either kind, does not hold.
        expect((await decline()).kind).toBe('conflict');
        expect(
          (
            await store.annotate(
              execution,
              'pending_approval',
              { customer_confirmed_at: at(2) },
              'customer_confirmed_at',
            )
          ).kind,
        ).toBe('conflict');
        const fresh = anExecution({ expires_at: at(60_000) });
        await store.create(fresh);
        expect(
          applied(
            await store.transition(fresh, {
              from: 'pending_approval',
              to: 'rejected',
              at: at(1),
              guard: { customerUnanswered: true },
            }),
          ).status,
        ).toBe('rejected');
      });

      it(verifies('store.guarded-writes', 'a claim holds once, and only on an approved call'), async () => {
        const pending = anExecution();
        await store.create(pending);
        expect(await store.claim(pending, { at: at(0), deadline: at(10_000) })).toEqual({
          kind: 'conflict',
          current: pending,
        });
        expect(await store.claim(anExecution(), { at: at(0), deadline: at(10_000) })).toEqual({
          kind: 'conflict',
          current: undefined,
        });
        const approved = anExecution({ status: 'approved' });
        await store.create(approved);
        const claims = await Promise.all(
          Array.from({ length: 10 }, (_, index) => store.claim(approved, { at: at(index), deadline: at(10_000) })),
        );
        const won = claims.filter((claim) => claim.kind === 'applied');
        expect(won).toHaveLength(1);
        const [winner] = won;
        if (winner?.kind !== 'applied') throw new Error('expected one claim');
        const claimedAt = winner.execution.claimed_at;
        expect(winner.execution).toEqual({
          ...approved,
          claimed_at: claimedAt,
          deadline_at: at(10_000),
          updated_at: claimedAt,
        });
        // A claim is no status change: the history stays as it was.
        expect(winner.execution.history).toEqual(approved.history);
        for (const claim of claims) {
          if (claim.kind === 'conflict') expect(claim.current).toEqual(winner.execution);
        }
        expect(await store.getOwned(approved)).toEqual(winner.execution);
        // Once settled, a call cannot be claimed either.
        await store.transition(approved, { from: 'approved', to: 'unknown', at: at(20_000) });
        expect((await store.claim(approved, { at: at(30_000), deadline: at(40_000) })).kind).toBe('conflict');
      });

      it(verifies('receipts.signed-before-claim', "a claim keeps the call's receipt in its own write"), async () => {
        const approved = anExecution({ status: 'approved' });
        await store.create(approved);
        const claimed = await store.claim(approved, { at: at(0), deadline: at(10_000), receipt: 'h.c.s' });
        expect(claimed).toMatchObject({ kind: 'applied', execution: { receipt: 'h.c.s', claimed_at: at(0) } });
        expect((await store.getOwned(approved))?.receipt).toBe('h.c.s');
      });

      it(
        verifies('store.guarded-writes', 'an annotation holds only in the expected status, and once when asked'),
        async () => {
          const execution = anExecution();
          await store.create(execution);
          const token = applied(await store.annotate(execution, 'pending_approval', { task_token: 't-1' }));
          // Fields change, the status, its history and the time of the last change do not.
          expect(token).toEqual({ ...execution, task_token: 't-1' });
          expect(await store.annotate(execution, 'approved', { task_token: 't-2' })).toEqual({
            kind: 'conflict',
            current: token,
          });
          const first = await store.annotate(execution, 'pending_approval', { notified_at: at(1) }, 'notified_at');
          const second = await store.annotate(execution, 'pending_approval', { notified_at: at(5) }, 'notified_at');
          expect([first.kind, second.kind]).toEqual(['applied', 'conflict']);
          expect(await store.getOwned(execution)).toEqual({ ...execution, task_token: 't-1', notified_at: at(1) });
          // Only the field named must be unset: another field set does not stop it.
          const other = anExecution({ notified_at: null, task_token: 'set' });
          await store.create(other);
          expect(
            applied(await store.annotate(other, 'pending_approval', { notified_at: at(7) }, 'notified_at')).notified_at,
          ).toBe(at(7));
          expect(await store.annotate(anExecution(), 'pending_approval', { task_token: 'x' })).toEqual({
            kind: 'conflict',
            current: undefined,
          });
        },
      );
    });

    describe('listings', () => {
      it(
        verifies(
          'store.by-id-and-by-agent',
          'lists an agent’s executions newest first, page by page, and no one else’s',
        ),
        async () => {
          const agent = `listing-agent-${uuidV7Ids.next()}`;
          const created = [0, 1, 2, 3, 4].map((minute) =>
            anExecution({ agent_id: agent, created_at: at(minute * 60_000) }),
          );
          // Written out of order: the listing orders by creation time, not by writing.
          for (const execution of [...created].reverse()) await store.create(execution);
          await store.create(anExecution({ agent_id: `${agent}-else` }));

          const first = await store.listByAgent(agent, { limit: 3 });
          expect(idsOf(first.items)).toEqual(idsOf(created.slice(2).reverse()));
          expect(first.next).toBeTypeOf('string');
          const second = await store.listByAgent(agent, { limit: 3, ...(first.next ? { cursor: first.next } : {}) });
          expect(idsOf(second.items)).toEqual(idsOf(created.slice(0, 2).reverse()));
          expect(second.next).toBeUndefined();
          expect(idsOf((await store.listByAgent(agent)).items)).toEqual(idsOf([...created].reverse()));
          expect((await store.listByAgent(`never-seen-${agent}`)).items).toEqual([]);
        },
      );

      it(
        verifies(
          'store.open-calls',
          'lists every open call once over small pages, and a call leaves the list when it ends',
        ),
        async () => {
          await withFreshStore(async (fresh) => {
            const open = Array.from({ length: 40 }, (_, index) =>
              anExecution({ status: index % 2 === 0 ? 'pending_approval' : 'approved', expires_at: at(index * 1000) }),
            );
            for (const execution of open) await fresh.create(execution);
            const ended = (['succeeded', 'failed', 'unknown', 'denied', 'rejected', 'expired'] as const).map((status) =>
              anExecution({ status }),
            );
            for (const execution of ended) await fresh.create(execution);

            const listed = await allPages((cursor) => fresh.listOpen({ limit: 7, ...(cursor ? { cursor } : {}) }), 7);
            expect(listed.pages).toBeGreaterThanOrEqual(6);
            expect(idsOf(listed.items).sort()).toEqual(idsOf(open).sort());
            // What is listed is the record itself.
            const sample = open[3];
            expect(listed.items.find((item) => item.execution_id === sample?.execution_id)).toEqual(sample);

            const [leaving, claimed] = open;
            if (leaving === undefined || claimed === undefined) throw new Error('expected calls');
            await fresh.transition(leaving, { from: 'pending_approval', to: 'expired', at: at(0) });
            // Moving between open statuses keeps a call listed.
            const decided = open[2];
            if (decided === undefined) throw new Error('expected calls');
            await fresh.transition(decided, { from: 'pending_approval', to: 'approved', at: at(0) });
            const after = await allPages(
              (cursor) => fresh.listOpen({ limit: 100, ...(cursor ? { cursor } : {}) }),
              100,
            );
            expect(idsOf(after.items)).not.toContain(leaving.execution_id);
            expect(idsOf(after.items)).toContain(decided.execution_id);
            expect(after.items).toHaveLength(39);
          });
        },
      );

      it(
        verifies(
          'store.open-calls',
          'lists by next deadline: soonest first within a partition, only those due when asked',
        ),
        async () => {
          await withFreshStore(async (fresh) => {
            // One partition (the same last digit), written latest deadline first.
            const calls = [5, 4, 3, 2, 1].map((minutes) =>
              anExecution({
                execution_id: idEndingIn('a'),
                status: 'pending_approval',
                expires_at: at(minutes * 60_000),
              }),
            );
            for (const execution of calls) await fresh.create(execution);
            const listed = (await fresh.listOpen()).items;
            expect(idsOf(listed)).toEqual(idsOf([...calls].reverse()));

            const due = await allPages(
              (cursor) => fresh.listOpen({ dueBefore: at(3 * 60_000), limit: 2, ...(cursor ? { cursor } : {}) }),
              2,
            );
            expect(idsOf(due.items).sort()).toEqual(idsOf(calls.slice(2)).sort());

            // An approved call's next deadline is its expiry until it is claimed, then the claim's.
            const approved = anExecution({
              execution_id: idEndingIn('b'),
              status: 'approved',
              expires_at: at(60 * 60_000),
            });
            await fresh.create(approved);
            const dueSoon = async () => idsOf((await fresh.listOpen({ dueBefore: at(10 * 60_000) })).items);
            expect(await dueSoon()).not.toContain(approved.execution_id);
            await fresh.claim(approved, { at: at(0), deadline: at(30_000) });
            expect(await dueSoon()).toContain(approved.execution_id);
            await fresh.transition(approved, { from: 'approved', to: 'succeeded', at: at(1_000) });
            expect(await dueSoon()).not.toContain(approved.execution_id);
          });
        },
      );

      it(
        verifies(
          'store.open-calls-from-records',
          'scans the records for open calls, page by page, skipping calls that ended',
        ),
        async () => {
          await withFreshStore(async (fresh) => {
            const open = Array.from({ length: 12 }, (_, index) =>
              anExecution({ status: index % 3 === 0 ? 'approved' : 'pending_approval', expires_at: at(index) }),
            );
            const ended = Array.from({ length: 8 }, () => anExecution({ status: 'rejected' }));
            for (const execution of [...open, ...ended]) await fresh.create(execution);
            // The agents' places are no records: a scan never returns them.
            await fresh.reservePending('procurement-agent', open[1]?.execution_id ?? '', 5);

            const scanned = await allPages((cursor) => fresh.scanOpen({ limit: 5, ...(cursor ? { cursor } : {}) }), 5);
            expect(scanned.pages).toBeGreaterThanOrEqual(4);
            expect(idsOf(scanned.items).sort()).toEqual(idsOf(open).sort());
            expect(scanned.items.find((item) => item.execution_id === open[0]?.execution_id)).toEqual(open[0]);
          });
        },
      );
    });

    describe('retention', () => {
      const thirtyDays = 30 * 86_400;
      /** The TTL value a final write at `offsetMs` must set: its own time plus the retention. */
      const keptUntil = (offsetMs: number, retention: number): number =>
        Math.floor((base + offsetMs) / 1_000) + retention;
      it(
        verifies(
          'ops.retention',
          'the write that makes a call final stores when it may be deleted, from the call’s own retention; waiting and running calls store none',
        ),
        async () => {
          // Which writes are final is the plan's rule (write-plan.test.ts); here, that the date is stored.
          const execution = anExecution({ created_at: at(0), retention_s: thirtyDays });
          await store.create(execution);
          expect((await store.get(execution.execution_id))?.retain_until).toBeNull();
          const approved = applied(
            await store.transition(execution, { from: 'pending_approval', to: 'approved', at: at(61_500) }),
          );
          expect(approved.retain_until).toBeNull();
          const claimed = applied(await store.claim(execution, { at: at(61_600), deadline: at(70_000) }));
          expect(claimed.retain_until).toBeNull();
          const settled = applied(
            await store.transition(execution, { from: 'approved', to: 'failed', at: at(123_000) }),
          );
          expect(settled.retain_until).toBe(keptUntil(123_000, thirtyDays));
          expect((await store.get(execution.execution_id))?.retain_until).toBe(keptUntil(123_000, thirtyDays));
        },
      );

      it(
        verifies(
          'ops.retention',
          'a call recorded final at once is given its date in that write; without a retention, 400 days',
        ),
        async () => {
          const denied = anExecution({ status: 'denied', created_at: at(5_000), retention_s: thirtyDays });
          await store.create(denied);
          expect((await store.get(denied.execution_id))?.retain_until).toBe(keptUntil(5_000, thirtyDays));
          const older = anExecution({ status: 'succeeded', created_at: at(7_000) });
          await store.create(older);
          expect((await store.get(older.execution_id))?.retain_until).toBe(keptUntil(7_000, 400 * 86_400));
          const waiting = anExecution({ created_at: at(0) });
          await store.create(waiting);
          const expired = applied(
            await store.transition(waiting, { from: 'pending_approval', to: 'expired', at: at(9_000) }),
          );
          expect(expired.retain_until).toBe(keptUntil(9_000, 400 * 86_400));
          // What a caller puts in retain_until is not what decides it.
          const forged = anExecution({ created_at: at(0), retain_until: 1 });
          await store.create(forged);
          expect((await store.get(forged.execution_id))?.retain_until).toBeNull();
        },
      );
    });

    describe('settling unknown outcomes', () => {
      /** A write that ends unknown at `offsetMs`, as a sent call's outcome is recorded. */
      const endedUnknown = async (target: ExecutionStore, offsetMs: number): Promise<Execution> => {
        const execution = anExecution({ status: 'approved', created_at: at(0), retention_s: 86_400 });
        await target.create(execution);
        return applied(
          await target.transition(execution, {
            from: 'approved',
            to: 'unknown',
            at: at(offsetMs),
            patch: { code: 'timeout', message: 'no answer' },
          }),
        );
      };
      const settlement = (outcome: 'succeeded' | 'failed', by: string, offsetMs: number) => ({
        outcome,
        by,
        at: at(offsetMs),
        reason: 'the ERP shows PO-77 created at the call time',
        unknown_code: 'timeout',
      });

      it(
        verifies(
          ['settle.only-unknown-once', 'settle.record', 'settle.unknown-outcomes-gauge'],
          'an unknown outcome is counted until settled; the settlement keeps the history and who, when and why',
        ),
        async () => {
          await withFreshStore(async (fresh) => {
            const unknown = await endedUnknown(fresh, 5_000);
            await endedUnknown(fresh, 6_000);
            expect(await fresh.countUnsettled()).toBe(2);
            // Never taken for a call still waiting: recovery reads only the open partitions.
            expect((await fresh.listOpen()).items).toEqual([]);
            const given = settlement('succeeded', 'alice', 60_000);
            const settled = applied(
              await fresh.transition(unknown, { from: 'unknown', to: 'succeeded', at: at(60_000), settlement: given }),
            );
            expect(settled).toMatchObject({ status: 'succeeded', code: null, settlement: given });
            expect(settled.history.map((change) => change.status)).toEqual(['approved', 'unknown', 'succeeded']);
            // Kept for its retention from the settlement, as any write that makes a call final.
            expect(settled.retain_until).toBe(Math.floor((base + 60_000) / 1_000) + 86_400);
            expect(await fresh.get(unknown.execution_id)).toEqual(settled);
            expect(await fresh.countUnsettled()).toBe(1);
            // Once: the record is no longer unknown, so a second settlement finds the first.
            const again = await fresh.transition(unknown, {
              from: 'unknown',
              to: 'failed',
              at: at(61_000),
              settlement: settlement('failed', 'bob', 61_000),
            });
            expect(again).toEqual({ kind: 'conflict', current: settled });
          });
        },
      );

      it(
        verifies('settle.only-unknown-once', 'of two operators settling at once, one settles and the other is told'),
        async () => {
          const unknown = await endedUnknown(store, 5_000);
          const outcomes = await Promise.all([
            store.transition(unknown, {
              from: 'unknown',
              to: 'succeeded',
              at: at(9_000),
              settlement: settlement('succeeded', 'alice', 9_000),
            }),
            store.transition(unknown, {
              from: 'unknown',
              to: 'failed',
              at: at(9_000),
              settlement: settlement('failed', 'bob', 9_000),
            }),
          ]);
          const winners = outcomes.filter((outcome) => outcome.kind === 'applied');
          expect(winners).toHaveLength(1);
          const loser = outcomes.find((outcome) => outcome.kind === 'conflict');
          expect(loser?.kind === 'conflict' && loser.current).toEqual(await store.get(unknown.execution_id));
          expect(loser?.kind === 'conflict' && loser.current?.settlement?.by).toMatch(/^(alice|bob)$/);
        },
      );

      it(
        verifies(
          ['settle.only-unknown-once', 'store.lifecycle-plan'],
          'refuses a move out of unknown without a settlement, and a settlement of anything but unknown',
        ),
        async () => {
          const unknown = await endedUnknown(store, 5_000);
          await expect(store.transition(unknown, { from: 'unknown', to: 'succeeded', at: at(6_000) })).rejects.toThrow(
            'An unknown outcome moves only by a settlement, to succeeded or failed.',
          );
          const held = anExecution({ status: 'pending_approval' });
          await store.create(held);
          await expect(
            store.transition(held, {
              from: 'pending_approval',
              to: 'approved',
              at: at(6_000),
              settlement: settlement('succeeded', 'alice', 6_000),
            }),
          ).rejects.toBeInstanceOf(IllegalTransitionError);
          expect(await store.get(unknown.execution_id)).toEqual(unknown);
          expect(await store.get(held.execution_id)).toEqual(held);
        },
      );
    });

    describe('places for held calls', () => {
      /** The places an agent's held calls take now (a limit of 0 is always full once one is taken). */
      const holders = async (target: ExecutionStore, agentId: string): Promise<string[]> => {
        const answer = await target.reservePending(agentId, uuidV7Ids.next(), 0);
        return answer.kind === 'full' ? [...answer.holders].sort() : [];
      };

      it(
        verifies(
          'limits.pending-store-race-safe',
          'concurrent holds take at most the limit, the same place counts once',
        ),
        async () => {
          const agent = `racing-agent-${uuidV7Ids.next()}`;
          const ids = Array.from({ length: 12 }, () => uuidV7Ids.next());
          const answers = await Promise.all(ids.map((id) => store.reservePending(agent, id, 5)));
          const reserved = ids.filter((_, index) => answers[index]?.kind === 'reserved');
          expect(reserved).toHaveLength(5);
          const full = answers.find((answer) => answer.kind === 'full');
          expect(full?.kind === 'full' && [...full.holders].sort()).toEqual([...reserved].sort());
          // A call already holding a place keeps it at the limit.
          expect(await store.reservePending(agent, reserved[0] ?? '', 5)).toEqual({ kind: 'reserved' });
          expect(await holders(store, agent)).toEqual([...reserved].sort());

          await store.releasePending(agent, [reserved[0] ?? '', reserved[0] ?? '']);
          await store.releasePending(agent, [reserved[0] ?? '']);
          expect(await holders(store, agent)).toEqual(reserved.slice(1).sort());
          expect(await store.reservePending(agent, ids.find((id) => !reserved.includes(id)) ?? '', 5)).toEqual({
            kind: 'reserved',
          });
          await store.releasePending(`agent-with-no-places-${agent}`, [reserved[1] ?? '']);
          await store.releasePending(agent, []);
        },
      );

      it(
        verifies(
          'limits.pending-released-on-leave',
          'leaving pending_approval gives the place back; other moves do not',
        ),
        async () => {
          const agent = `leaving-agent-${uuidV7Ids.next()}`;
          const leaving = anExecution({ agent_id: agent, status: 'pending_approval' });
          const staying = anExecution({ agent_id: agent, status: 'pending_approval' });
          for (const execution of [leaving, staying]) {
            await store.create(execution);
            await store.reservePending(agent, execution.execution_id, 2);
          }
          // A conflict gives nothing back.
          await store.transition(leaving, { from: 'approved', to: 'succeeded', at: at(1) });
          expect(await holders(store, agent)).toEqual([leaving.execution_id, staying.execution_id].sort());
          applied(await store.transition(leaving, { from: 'pending_approval', to: 'approved', at: at(1) }));
          expect(await holders(store, agent)).toEqual([staying.execution_id]);
          applied(await store.transition(leaving, { from: 'approved', to: 'succeeded', at: at(2) }));
          expect(await holders(store, agent)).toEqual([staying.execution_id]);
          // The places are no execution: reads by id and listings never see them.
          expect(idsOf((await store.listByAgent(agent)).items).sort()).toEqual(
            [leaving.execution_id, staying.execution_id].sort(),
          );
        },
      );

      it(
        verifies(
          'store.release-failure-logged',
          'a place that cannot be given back leaves the move applied, and is logged',
        ),
        async () => {
          const agent = `broken-places-agent-${uuidV7Ids.next()}`;
          const held = anExecution({ agent_id: agent, status: 'pending_approval' });
          await store.create(held);
          await store.reservePending(agent, held.execution_id, 2);
          await opened.breakPlaces(agent);
          const moved = applied(await store.transition(held, { from: 'pending_approval', to: 'expired', at: at(1) }));
          expect(moved.status).toBe('expired');
          expect(await store.getOwned(held)).toEqual(moved);
          const logged = opened.warnings.filter(({ attributes }) =>
            attributes.some((entry) => JSON.stringify(entry).includes(held.execution_id)),
          );
          expect(logged).toEqual([
            {
              message: expect.stringContaining('place could not be given back'),
              attributes: [{ execution_id: held.execution_id, agent_id: agent, error: expect.any(String) }],
            },
          ]);
        },
      );
    });
  });
};
