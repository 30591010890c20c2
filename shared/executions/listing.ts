// Reading executions back for audit: one page at a time, newest first, filtered by agent, status,
// tool and time. The operator's `npm run executions` and an agent's own listing (tasks/list,
// through ExecutionStore.listByAgent) read through this port; what a listing shows of a call is
// decided here, so no sealed value, task token or system answer ever reaches it.

import { escalationGroupOf } from '../approvals/escalation.js';
import { Duration } from '../config/duration.js';
import { ExecutionStatus } from '../result.js';
import type { Execution, Settlement, StaffApproval } from './execution.js';
import type { ExecutionPage } from './store.js';

export interface ExecutionQuery {
  /** Only this agent's calls, read through the by-agent index; without it, every call. */
  readonly agent?: string;
  readonly status?: ExecutionStatus;
  /** Only calls of this tool (its full name, as recorded). */
  readonly tool?: string;
  /** Only calls made at or after this instant (ISO 8601, UTC). */
  readonly since?: string;
  readonly limit: number;
  /** Where the previous page ended, as that page gave it. */
  readonly cursor?: string;
}

export interface ExecutionListing {
  /**
   * One page of the executions the query selects, newest first across pages (by `listingOrderKey`),
   * with an agent or without. A page may hold fewer than `limit` while more follow (`next` says so).
   */
  list(query: ExecutionQuery): Promise<ExecutionPage>;
}

/**
 * Where a call stands in a listing, newest last: its creation instant (always in the same ISO form,
 * so text order is time order) then its id, so no two calls tie and a page ends at an exact place.
 */
export const listingOrderKey = (execution: Pick<Execution, 'created_at' | 'execution_id'>): string =>
  `${new Date(execution.created_at).toISOString()}#${execution.execution_id}`;

/** A cursor this listing did not give out for this query (forged, altered, or another agent's). */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
  constructor() {
    super('The cursor is not one this listing gave out for this query.');
  }
}

/** Largest page a listing returns. */
export const maxListingLimit = 1_000;

/** Every call recorded at or after `since`, read page after page in the listing's largest pages. */
export async function* callsSince(listing: ExecutionListing, since: string): AsyncGenerator<Execution> {
  let cursor: string | undefined;
  do {
    const page = await listing.list({ since, limit: maxListingLimit, ...(cursor === undefined ? {} : { cursor }) });
    yield* page.items;
    cursor = page.next;
  } while (cursor !== undefined);
}

/** A page size every listing accepts: a whole number from 1 to `maxListingLimit`. */
export const checkListingLimit = (limit: number): void => {
  if (!Number.isInteger(limit) || limit < 1 || limit > maxListingLimit) {
    throw new RangeError(`A listing's limit is a whole number from 1 to ${maxListingLimit}.`);
  }
};

export type QueryParse = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly error: string };

/** A status given by name: one of the lifecycle's, else an error that lists them. */
export const parseStatus = (
  text: string,
): { readonly ok: true; readonly value: ExecutionStatus } | { readonly ok: false; readonly error: string } => {
  const parsed = ExecutionStatus.safeParse(text);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: `unknown status "${text}": expected one of ${ExecutionStatus.options.join(', ')}` };
};

const isoInstant = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * `--since`: an ISO 8601 date or instant with its offset (2026-11-29, 2026-11-29T12:00Z), or a
 * duration back from `now` as the configuration writes them (90m, 24h, 30d); the instant, in UTC.
 */
export const parseSince = (text: string, now: number): QueryParse => {
  const duration = Duration.safeParse(text);
  if (duration.success) return { ok: true, value: new Date(now - duration.data).toISOString() };
  const at = isoInstant.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) {
    return {
      ok: false,
      error: `cannot read the time "${text}": expected an ISO time such as 2026-11-29T12:00:00Z or a duration such as 24h or 7d`,
    };
  }
  return { ok: true, value: new Date(at).toISOString() };
};

/** How policy disposed of the call: run at once, held for people, denied, or refused before policy. */
const dispositionOf = (execution: Execution): string => {
  const decision = execution.decision;
  if (decision === null) return 'refused';
  if (decision.effect === 'deny') return 'denied';
  if (decision.step === null) return 'run';
  const who = [decision.step.staff, decision.step.customer ? 'customer' : null].filter((part) => part !== null);
  return `held:${who.join('+')}`;
};

/** What an audit listing shows of a call: who asked, what, the decision, who decided, the outcome. */
export interface AuditLine {
  readonly created_at: string;
  readonly execution_id: string;
  readonly agent_id: string;
  readonly customer_id: string | null;
  readonly tool: string;
  readonly status: ExecutionStatus;
  readonly code: string | null;
  readonly decision: string;
  readonly policies: readonly string[];
  readonly config_version: string | null;
  readonly decided_by: string | null;
  readonly decided_at: string | null;
  readonly decision_note: string | null;
  /** The staff approvals given, in order: who, as a member of which group, when. */
  readonly approvals: readonly Pick<StaffApproval, 'by' | 'group' | 'at'>[];
  /** The group the call escalates to (@escalate), or null; and when it was escalated, or null. */
  readonly escalated_to: string | null;
  readonly escalated_at: string | null;
  /**
   * The canonical arguments as JSON text, every secret value shown as "[REDACTED]" (the sealed copy
   * is never opened); null when they were refused unread.
   */
  readonly arguments_json: string | null;
  /** Where the hidden values are (JSON Pointers), so a hidden secret is told from a plain "[REDACTED]". */
  readonly sealed_fields: readonly string[];
  readonly http_status: number | null;
  readonly latency_ms: number | null;
  readonly updated_at: string;
  /** When the table may delete the record (ISO), once it is final. */
  readonly retain_until: string | null;
  /** Every status the call took, with when (a settled call: unknown, then its settled status). */
  readonly history: Execution['history'];
  /** Who settled an unknown outcome, when, why and as what; null unless an operator did. */
  readonly settlement: Settlement | null;
}

export const auditLineOf = (execution: Execution): AuditLine => ({
  created_at: execution.created_at,
  execution_id: execution.execution_id,
  agent_id: execution.agent_id,
  customer_id: execution.customer_id,
  tool: execution.tool,
  status: execution.status,
  code: execution.code,
  decision: dispositionOf(execution),
  policies: execution.decision?.determining.map((policy) => policy.name) ?? [],
  config_version: execution.decision?.config_version ?? null,
  decided_by: execution.decided_by,
  decided_at: execution.decided_at,
  decision_note: execution.decision_note,
  approvals: execution.approvals.map(({ by, group, at }) => ({ by, group, at })),
  escalated_to: escalationGroupOf(execution),
  escalated_at: execution.escalated_at,
  arguments_json: execution.arguments_json,
  sealed_fields: execution.secret_pointers ?? [],
  http_status: execution.http_status,
  latency_ms: execution.latency_ms,
  updated_at: execution.updated_at,
  retain_until: execution.retain_until === null ? null : new Date(execution.retain_until * 1_000).toISOString(),
  history: execution.history,
  settlement: execution.settlement,
});
