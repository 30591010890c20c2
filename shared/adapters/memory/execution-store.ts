// An execution store held in memory, for use-case tests and anything else that needs the port
// without a database. It persists the domain's write plans as the DynamoDB adapter does
// (test/contracts holds both to one contract): each write is one atomic conditional step, and
// records are copied in and out.
import type { CallKey, CallKeyClaim } from '../../executions/call-keys.js';
import { Execution, openStatuses } from '../../executions/execution.js';
import {
  checkListingLimit,
  type ExecutionListing,
  type ExecutionQuery,
  InvalidCursorError,
  listingOrderKey,
} from '../../executions/listing.js';
import { retainUntil } from '../../executions/retention.js';
import type {
  ApprovalRequest,
  ClaimRequest,
  CreateResult,
  ExecutionKey,
  ExecutionPage,
  ExecutionPatch,
  ExecutionStore,
  PendingReservation,
  TransitionRequest,
  TransitionResult,
} from '../../executions/store.js';
import {
  applyPlan,
  legalPlan,
  type OpenEntry,
  openEntryOf,
  planAnnotation,
  planApproval,
  planClaim,
  releasePlaceAfter,
  unsettledSince,
  type WritePlan,
} from '../../executions/write-plan.js';
import type { Log } from '../../log.js';
import type { ExecutionStatus } from '../../result.js';

interface Stored {
  execution: Execution;
  /** Null once the call has ended (as the DynamoDB adapter's sparse index drops it). */
  open: OpenEntry | null;
  /** Whether it sits in the sparse index's partition of unknown outcomes not yet settled. */
  unsettled: boolean;
}

const keyText = (key: ExecutionKey): string => `${key.execution_id}\u0000${key.agent_id}`;

/** Copies out: callers never hold a reference into the store. */
const copy = (execution: Execution): Execution => structuredClone(execution);

/** Page cursors are opaque to callers: the last position read, as JSON in base64url. */
const encodeCursor = (position: readonly (string | number)[]): string =>
  Buffer.from(JSON.stringify(position)).toString('base64url');
const decodeCursor = (cursor: string): (string | number)[] => {
  const position: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Array.isArray(position) || !position.every((part) => typeof part === 'string' || typeof part === 'number')) {
    throw new Error('The page cursor is not one this store gave out.');
  }
  return position;
};

/** Compares positions part by part (numbers as numbers, text as the store's keys sort). */
const comparePositions = (a: readonly (string | number)[], b: readonly (string | number)[]): number => {
  for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
    const left = a[index];
    const right = b[index];
    if (left === right) continue;
    if (left === undefined) return -1;
    if (right === undefined) return 1;
    return left < right ? -1 : 1;
  }
  return 0;
};

/**
 * One page of `positioned` (sorted in `order`: 1 ascending, -1 descending), after the cursor's
 * position, at most `limit` long; `next` only when more follow.
 */
const pageOf = <T>(
  positioned: readonly { readonly position: (string | number)[]; readonly item: T }[],
  options: { readonly limit: number; readonly cursor: string | undefined; readonly order: 1 | -1 },
): { items: T[]; next?: string } => {
  const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
  const rest =
    after === null
      ? positioned
      : positioned.filter((entry) => options.order * comparePositions(entry.position, after) > 0);
  const page = rest.slice(0, options.limit);
  const last = page.at(-1);
  const items = page.map((entry) => entry.item);
  return rest.length > page.length && last !== undefined ? { items, next: encodeCursor(last.position) } : { items };
};

/** Whether a record is one the listing's filters select. */
const selects = (query: ExecutionQuery, execution: Execution): boolean =>
  (query.agent === undefined || execution.agent_id === query.agent) &&
  (query.status === undefined || execution.status === query.status) &&
  (query.tool === undefined || execution.tool === query.tool) &&
  (query.since === undefined || listingOrderKey(execution) >= new Date(query.since).toISOString());

/** A listing's cursor names what it lists (an agent, or every call), so it is refused for anything else. */
const listingScope = (query: ExecutionQuery): string[] =>
  query.agent === undefined ? ['all'] : ['agent', query.agent];

const checkListingCursor = (cursor: string, scope: readonly string[]): void => {
  let position: (string | number)[];
  try {
    position = decodeCursor(cursor);
  } catch {
    throw new InvalidCursorError();
  }
  if (position.length !== scope.length + 1 || scope.some((part, index) => position[index] !== part))
    throw new InvalidCursorError();
};

export class MemoryExecutionStore implements ExecutionStore, ExecutionListing {
  private readonly records = new Map<string, Stored>();
  /** Each agent's places for calls waiting for approval: the ids holding them. */
  private readonly places = new Map<string, Set<string>>();
  /** Each agent's call keys by their digest (as the DynamoDB adapter's key items). */
  private readonly callKeys = new Map<string, CallKey>();

  /** `log` hears of a held call's place that could not be given back. */
  constructor(private readonly log: Log) {}

  async create(execution: Execution): Promise<CreateResult> {
    const key = keyText(execution);
    if (this.records.has(key)) return { kind: 'exists' };
    const parsed = Execution.parse(structuredClone(execution));
    const stored = { ...parsed, retain_until: retainUntil(parsed.status, parsed.updated_at, parsed.retention_s) };
    this.records.set(key, { execution: stored, open: openEntryOf(stored), unsettled: unsettledSince(stored) !== null });
    return { kind: 'created' };
  }

  async getOwned(key: ExecutionKey): Promise<Execution | undefined> {
    return this.read(key);
  }

  async get(executionId: string): Promise<Execution | undefined> {
    const found = [...this.records.values()].filter((stored) => stored.execution.execution_id === executionId);
    // Ids are generated by the gateway (UUIDv7), so one id has one owner; two would be a fault.
    if (found.length > 1) throw new Error(`Execution id ${executionId} is recorded for more than one agent.`);
    const [stored] = found;
    return stored === undefined ? undefined : copy(stored.execution);
  }

  // async: a move the lifecycle refuses is a rejected promise, as every other fault of a write.
  async transition(key: ExecutionKey, change: TransitionRequest): Promise<TransitionResult> {
    return this.persist(key, legalPlan(change));
  }

  /** One atomic step: the plan applied to the record if it meets the plan's conditions, else a conflict. */
  private async persist(key: ExecutionKey, plan: WritePlan): Promise<TransitionResult> {
    const stored = this.records.get(keyText(key));
    const next = stored === undefined ? null : applyPlan(stored.execution, plan);
    if (stored === undefined || next === null) return this.conflict(key);
    stored.execution = next;
    stored.open = openAfter(stored.open, plan);
    if (plan.openIndex.kind !== 'keep' && plan.openIndex.kind !== 'due') {
      stored.unsettled = plan.openIndex.kind === 'unsettled';
    }
    await releasePlaceAfter(plan, key, (agentId, ids) => this.releasePending(agentId, ids), this.log);
    return { kind: 'applied', execution: copy(next) };
  }

  listByAgent(agentId: string, options: { limit?: number; cursor?: string } = {}): Promise<ExecutionPage> {
    return this.list({
      agent: agentId,
      limit: options.limit ?? 50,
      ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
    });
  }

  /** The audit listing: newest first across pages, with an agent or without, as the DynamoDB adapter. */
  async list(query: ExecutionQuery): Promise<ExecutionPage> {
    checkListingLimit(query.limit);
    const scope = listingScope(query);
    if (query.cursor !== undefined) checkListingCursor(query.cursor, scope);
    const positioned = [...this.records.values()]
      .filter((stored) => selects(query, stored.execution))
      .map((stored) => ({ position: [...scope, listingOrderKey(stored.execution)], item: stored.execution }))
      .sort((a, b) => comparePositions(b.position, a.position));
    const page = pageOf(positioned, { limit: query.limit, cursor: query.cursor, order: -1 });
    return { ...page, items: page.items.map(copy) };
  }

  claim(key: ExecutionKey, claim: ClaimRequest): Promise<TransitionResult> {
    return this.persist(key, planClaim(claim));
  }

  addApproval(key: ExecutionKey, approval: ApprovalRequest): Promise<TransitionResult> {
    return this.persist(key, planApproval(approval));
  }

  annotate(
    key: ExecutionKey,
    status: ExecutionStatus,
    patch: ExecutionPatch,
    onlyIfUnset?: keyof ExecutionPatch,
  ): Promise<TransitionResult> {
    return this.persist(key, planAnnotation(status, patch, onlyIfUnset));
  }

  async listOpen(options: { dueBefore?: string; limit?: number; cursor?: string } = {}): Promise<ExecutionPage> {
    const { dueBefore } = options;
    const positioned = [...this.records.values()]
      .flatMap((stored) => {
        const open = stored.open;
        if (open === null || (dueBefore !== undefined && open.until > dueBefore)) return [];
        const { execution_id, agent_id } = stored.execution;
        return [{ position: [open.shard, open.until, execution_id, agent_id], item: stored.execution }];
      })
      .sort((a, b) => comparePositions(a.position, b.position));
    const page = pageOf(positioned, { limit: options.limit ?? 100, cursor: options.cursor, order: 1 });
    return { ...page, items: page.items.map(copy) };
  }

  /** As the DynamoDB scan: `limit` records are read, and the open ones among them returned. */
  async scanOpen(options: { limit?: number; cursor?: string } = {}): Promise<ExecutionPage> {
    const positioned = [...this.records.entries()]
      .map(([key, stored]) => ({ position: [key], item: stored.execution }))
      .sort((a, b) => comparePositions(a.position, b.position));
    const page = pageOf(positioned, { limit: options.limit ?? 100, cursor: options.cursor, order: 1 });
    const items = page.items.filter((execution) => openStatuses.has(execution.status)).map(copy);
    return page.next === undefined ? { items } : { items, next: page.next };
  }

  async reservePending(agentId: string, executionId: string, limit: number): Promise<PendingReservation> {
    const holders = this.places.get(agentId);
    if (holders === undefined || holders.size < limit || holders.has(executionId)) {
      this.places.set(agentId, (holders ?? new Set()).add(executionId));
      return { kind: 'reserved' };
    }
    return { kind: 'full', holders: [...holders] };
  }

  async releasePending(agentId: string, executionIds: readonly string[]): Promise<void> {
    const holders = this.places.get(agentId);
    if (holders === undefined) return;
    for (const executionId of executionIds) holders.delete(executionId);
    // As a DynamoDB string set, an empty set is no set at all.
    if (holders.size === 0) this.places.delete(agentId);
  }

  async claimCallKey(key: CallKey, replacing?: string): Promise<CallKeyClaim> {
    const at = `${key.agent_id}\u0000${key.digest}`;
    const current = this.callKeys.get(at);
    if (current === undefined || (replacing !== undefined && current.execution_id === replacing)) {
      this.callKeys.set(at, { ...key });
      return { kind: 'claimed' };
    }
    return { kind: 'taken', current: { ...current } };
  }

  async countUnsettled(): Promise<number> {
    return [...this.records.values()].filter((stored) => stored.unsettled).length;
  }

  private read(key: ExecutionKey): Execution | undefined {
    const stored = this.records.get(keyText(key));
    return stored === undefined ? undefined : copy(stored.execution);
  }

  private conflict(key: ExecutionKey): TransitionResult {
    return { kind: 'conflict', current: this.read(key) };
  }
}

/** The entry a call has in the list of open calls after the plan's write (as the sparse index's). */
const openAfter = (open: OpenEntry | null, plan: WritePlan): OpenEntry | null => {
  const change = plan.openIndex;
  if (change.kind === 'leave' || change.kind === 'unsettled') return null;
  return change.kind === 'due' && open !== null ? { shard: open.shard, until: change.until } : open;
};
