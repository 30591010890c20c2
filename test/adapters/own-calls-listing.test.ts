// An agent's own listing (tasks/list, tasks/get, tasks/cancel, get_execution_status) attacked by
// another agent: agent B sets every parameter those requests take, to reach agent A's calls, on
// the DynamoDB store (dynalite) and on the in-memory store the use-case tests stand on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbExecutionListing } from '../../shared/adapters/dynamodb/execution-listing.js';
import { MemoryExecutionStore } from '../../shared/adapters/memory/execution-store.js';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import type { Execution } from '../../shared/executions/execution.js';
import { InvalidCursorError } from '../../shared/executions/listing.js';
import type { ExecutionStore } from '../../shared/executions/store.js';
import { findOwnCall, listOwnCalls, withdrawCall } from '../../shared/use-cases/tasks.js';
import { ManualClock } from '../support/clock.js';
import { anExecution } from '../support/executions.js';
import { startTestStore, type TestStore } from '../support/local-store.js';
import { quietLog } from '../support/logs.js';
import { verifies } from '../support/requirements.js';

const alpha: AgentIdentity = { id: 'alpha-agent', groups: ['procurement'], customerId: null };
const beta: AgentIdentity = { id: 'beta-agent', groups: ['procurement'], customerId: null };
const base = Date.parse('2026-11-29T12:00:00.000Z');

const cursorOf = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

let local: TestStore;
beforeAll(async () => {
  local = await startTestStore();
});
afterAll(async () => {
  await local.close();
});

const stores: readonly [string, () => ExecutionStore][] = [
  ['the DynamoDB store', () => local.store],
  ['the in-memory store', () => new MemoryExecutionStore(quietLog)],
];

describe.each(stores)('agent B against agent A on %s', (_name, storeOf) => {
  it(
    verifies(
      'ops.executions-own-only',
      "no cursor or id agent B can send lists, reads or withdraws one of agent A's calls",
    ),
    async () => {
      const store = storeOf();
      const clock = new ManualClock(base + 3_600_000);
      const deps = {
        store,
        clock,
        log: { info: () => undefined, warn: () => undefined },
        approvalRuns: {
          start: async () => 'started' as const,
          signal: async () => true,
        },
      };
      const written: Execution[] = [];
      for (const [index, agent] of [alpha, alpha, alpha, beta, alpha, beta].entries()) {
        const execution = anExecution({
          agent_id: agent.id,
          created_at: new Date(base + index * 60_000).toISOString(),
          expires_at: new Date(base + 86_400_000).toISOString(),
        });
        await store.create(execution);
        written.push(execution);
      }
      const alphaIds = new Set(written.filter((e) => e.agent_id === alpha.id).map((e) => e.execution_id));
      const betaIds = written.filter((e) => e.agent_id === beta.id).map((e) => e.execution_id);
      const alphaOne = written[0] as Execution;

      // A's own listing, a page at a time, gives the cursors B will try.
      const alphaPage = await listOwnCalls(deps, alpha, undefined);
      if (alphaPage.kind !== 'page') throw new Error('expected a page');
      const alphaCursors = [alphaPage.page.next].filter((cursor) => cursor !== undefined);
      // Forged cursors naming A's calls, in the shapes each store gives out.
      const forged = [
        cursorOf({ by: 'agent', key: { agent_id: alpha.id, created_at: '9999', execution_id: alphaOne.execution_id } }),
        cursorOf({ by: 'table', key: { agent_id: alpha.id, execution_id: alphaOne.execution_id } }),
        cursorOf({ agent_id: alpha.id, created_at: '9999', execution_id: alphaOne.execution_id }),
        cursorOf(['9999', alphaOne.execution_id]),
        'not-a-cursor',
      ];

      const seen: string[] = [];
      const unlisted = await listOwnCalls(deps, beta, undefined);
      if (unlisted.kind === 'page') seen.push(...unlisted.page.items.map((item) => item.execution_id));
      expect(seen.sort()).toEqual([...betaIds].sort());
      for (const cursor of [...alphaCursors, ...forged]) {
        const listed = await listOwnCalls(deps, beta, cursor);
        const ids = listed.kind === 'page' ? listed.page.items.map((item) => item.execution_id) : [];
        expect(
          ids.filter((id) => alphaIds.has(id)),
          `cursor ${cursor}`,
        ).toEqual([]);
      }

      for (const id of alphaIds) {
        for (const asked of [id, id.toUpperCase(), ` ${id} `]) {
          expect(await findOwnCall(deps, beta, asked)).toBeUndefined();
          expect(await withdrawCall(deps, beta, asked)).toEqual({ kind: 'not_found' });
        }
        // Nothing B asked changed A's call.
        expect(await store.getOwned({ execution_id: id, agent_id: alpha.id })).toMatchObject({
          status: 'pending_approval',
        });
      }
      // A still finds its own, and only its own.
      expect((await findOwnCall(deps, alpha, alphaOne.execution_id))?.execution_id).toBe(alphaOne.execution_id);
    },
  );
});

describe('the listing itself', () => {
  it(
    verifies('ops.executions-own-only', "refuses a cursor of another agent's listing before it reads anything"),
    async () => {
      const listing = new DynamoDbExecutionListing(local.dynamodb.documents, 'executions');
      for (const index of [0, 1]) {
        await local.store.create(
          anExecution({ agent_id: 'gamma-agent', created_at: new Date(base + index * 1_000).toISOString() }),
        );
      }
      const gamma = await listing.list({ agent: 'gamma-agent', limit: 1 });
      expect(gamma.next).toBeDefined();
      await expect(listing.list({ agent: beta.id, limit: 10, cursor: gamma.next ?? '' })).rejects.toThrow(
        InvalidCursorError,
      );
      // Nor does a cursor of the operator's whole-table listing open an agent's listing, or the reverse.
      const whole = await listing.list({ limit: 1 });
      await expect(listing.list({ agent: beta.id, limit: 10, cursor: whole.next ?? '' })).rejects.toThrow(
        InvalidCursorError,
      );
      await expect(listing.list({ limit: 10, cursor: gamma.next ?? '' })).rejects.toThrow(InvalidCursorError);
      // Its own cursor goes on.
      expect((await listing.list({ agent: 'gamma-agent', limit: 1, cursor: gamma.next ?? '' })).items).toHaveLength(1);
    },
  );
});
