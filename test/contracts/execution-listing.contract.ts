// The audit listing's contract, one suite every adapter runs (DynamoDB against dynalite, the
// in-memory store): newest first across pages with an agent and without, with each filter and with
// ties in time, every record once and nothing that is no record; a cursor only for its own listing.
import { describe, expect, it } from 'vitest';
import type { Execution } from '../../shared/executions/execution.js';
import { type ExecutionListing, type ExecutionQuery, InvalidCursorError } from '../../shared/executions/listing.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { uuidV7Ids } from '../../shared/ids.js';
import { anExecution } from '../support/executions.js';
import { verifies } from '../support/requirements.js';

export interface OpenedListing {
  readonly store: ExecutionStore;
  readonly listing: ExecutionListing;
  close(): Promise<void>;
}

const base = Date.parse('2026-11-29T12:00:00.000Z');
const at = (offsetMs: number): string => new Date(base + offsetMs).toISOString();
const hexDigits = [...'0123456789abcdef'];

/** A fresh UUIDv7 whose last hex digit (the by-time partition) is `digit`. */
const idEndingIn = (digit: string): string => `${uuidV7Ids.next().slice(0, -1)}${digit}`;

const idsOf = (items: readonly Execution[]): string[] => items.map((item) => item.execution_id);

/** Newest first by creation time, then by id: the order every listing promises. */
const newestFirst = (records: readonly Execution[]): string[] =>
  idsOf(
    [...records].sort((a, b) => {
      const [left, right] = [`${a.created_at} ${a.execution_id}`, `${b.created_at} ${b.execution_id}`];
      return left < right ? 1 : left > right ? -1 : 0;
    }),
  );

/** Every page of a query, following its cursors; each page within the limit. */
const everyPage = async (listing: ExecutionListing, query: Omit<ExecutionQuery, 'cursor'>): Promise<string[][]> => {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await listing.list({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    expect(page.items.length).toBeLessThanOrEqual(query.limit);
    pages.push(idsOf(page.items));
    cursor = page.next;
    if (pages.length > 200) throw new Error('the cursors never end');
  } while (cursor !== undefined);
  return pages;
};

/**
 * 24 records of two agents and two tools, one minute apart, over every partition, and three more
 * of a third agent made in the same millisecond as one of them (two in one partition: an agent's
 * own listing leaves ties in its index's order); written in an order unrelated
 * to their time (a later id is not a later call), with an agent's place for held calls beside them.
 */
const writeOutOfOrder = async (store: ExecutionStore): Promise<Execution[]> => {
  const records = Array.from({ length: 24 }, (_, index) => {
    const minute = (index * 7) % 24;
    return anExecution({
      execution_id: idEndingIn(hexDigits[index % 16] ?? '0'),
      agent_id: minute % 3 === 0 ? 'beta-agent' : 'alpha-agent',
      tool: minute % 4 === 0 ? 'erp.orders.list' : 'erp.orders.create',
      status: minute % 2 === 0 ? 'succeeded' : 'pending_approval',
      created_at: at(minute * 60_000),
    });
  });
  const tied = [...'aa1'].map((digit) =>
    anExecution({ execution_id: idEndingIn(digit), agent_id: 'gamma-agent', created_at: at(5 * 60_000) }),
  );
  for (const record of [...records, ...tied].reverse()) expect(await store.create(record)).toEqual({ kind: 'created' });
  await store.reservePending('alpha-agent', records[1]?.execution_id ?? '', 10);
  return [...records, ...tied];
};

export const executionListingContract = (name: string, open: () => Promise<OpenedListing>): void => {
  describe(`${name} lists executions newest first`, () => {
    const withFresh = async (test: (opened: OpenedListing) => Promise<void>): Promise<void> => {
      const opened = await open();
      try {
        await test(opened);
      } finally {
        await opened.close();
      }
    };

    it(
      verifies(
        'ops.executions-newest-first',
        'every call, and one agent’s, newest first across small pages; calls made in the same millisecond by id',
      ),
      async () => {
        await withFresh(async ({ store, listing }) => {
          const records = await writeOutOfOrder(store);
          const all = await everyPage(listing, { limit: 4 });
          expect(all.length).toBeGreaterThanOrEqual(6);
          expect(all.flat()).toEqual(newestFirst(records));
          const alpha = await everyPage(listing, { agent: 'alpha-agent', limit: 3 });
          expect(alpha.flat()).toEqual(newestFirst(records.filter((record) => record.agent_id === 'alpha-agent')));
          // One page as large as the listing.
          expect(idsOf((await listing.list({ limit: 1_000 })).items)).toEqual(newestFirst(records));
        });
      },
    );

    it(
      verifies('ops.executions-newest-first', 'with each filter and the time bound, still newest first across pages'),
      async () => {
        await withFresh(async ({ store, listing }) => {
          const records = await writeOutOfOrder(store);
          const since = at(10 * 60_000);
          const cases: [Omit<ExecutionQuery, 'cursor' | 'limit'>, (record: Execution) => boolean][] = [
            [{ tool: 'erp.orders.list' }, (record) => record.tool === 'erp.orders.list'],
            [
              { status: 'pending_approval', tool: 'erp.orders.create', since },
              (record) =>
                record.status === 'pending_approval' &&
                record.tool === 'erp.orders.create' &&
                record.created_at >= since,
            ],
            [
              { agent: 'beta-agent', since },
              (record) => record.agent_id === 'beta-agent' && record.created_at >= since,
            ],
          ];
          for (const [filters, selected] of cases) {
            const pages = await everyPage(listing, { ...filters, limit: 4 });
            expect(pages.flat(), JSON.stringify(filters)).toEqual(newestFirst(records.filter(selected)));
          }
        });
      },
    );

    it(verifies('ops.executions-newest-first', 'a cursor continues only the listing that gave it'), async () => {
      await withFresh(async ({ store, listing }) => {
        for (const minute of [0, 1, 2])
          await store.create(anExecution({ agent_id: 'alpha-agent', created_at: at(minute) }));
        const whole = await listing.list({ limit: 2 });
        const alpha = await listing.list({ agent: 'alpha-agent', limit: 2 });
        await expect(listing.list({ agent: 'alpha-agent', limit: 2, cursor: whole.next ?? '' })).rejects.toThrow(
          InvalidCursorError,
        );
        await expect(listing.list({ limit: 2, cursor: alpha.next ?? '' })).rejects.toThrow(InvalidCursorError);
        await expect(listing.list({ agent: 'beta-agent', limit: 2, cursor: alpha.next ?? '' })).rejects.toThrow(
          InvalidCursorError,
        );
        await expect(listing.list({ limit: 2, cursor: 'bm90LWEtY3Vyc29y' })).rejects.toThrow(InvalidCursorError);
        await expect(listing.list({ limit: 0 })).rejects.toThrow(RangeError);
      });
    });
  });
};
