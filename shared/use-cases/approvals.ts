// Held calls, from the hold to the outcome: the workflow registers its task token (and approvers
// are notified), an approver decides, the approved call runs once, or the approval time runs out.
//
// Every step is a single-item conditional write on the execution, so double clicks, two approvers
// at once, a decision racing the expiry timer, a restarted runtime and a lost signal each end in
// exactly one outcome. The decision is recorded first and then pushed to the workflow; if the push
// is lost, the workflow (when it registers) or recovery hands it over again.
import type { Approver } from '../approvals/approver.js';
import type { HeldCallNotice, Notifier } from '../approvals/notifier.js';
import { summarize } from '../approvals/notifier.js';
import type { ApprovalWorkflow, WorkflowOutcome } from '../approvals/workflow.js';
import { argumentsHash } from '../arguments/canonicalize.js';
import { parseExactJson } from '../arguments/exact-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import type { JsonObject } from '../catalog/tool.js';
import { isoAt } from '../clock.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { resultMessages } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import { type ExecutionKey, type ExecutionStore, heldAfter, type TransitionResult } from '../executions/store.js';
import { resumeTrace } from '../invoke/trace.js';
import type { PolicyDecision } from '../policy/engine.js';
import type { Sealer } from '../sealing.js';
import { hiddenSecretsOf } from '../secret-pointers.js';
import { approvalTimeoutSeconds } from './approval-time.js';
import { claimGraceMs, claimWindow, outboundFor, type SendDeps, sendClaimed, settleAbandonedClaim } from './send.js';

export interface ApprovalDeps extends SendDeps {
  readonly controlPlane: ControlPlane;
  readonly sealer: Sealer;
  readonly workflow: ApprovalWorkflow;
  readonly notifier: Notifier;
  /** The console page of one held call (the link in notifications). */
  readonly consoleUrl: (executionId: string) => string;
}

const keyOf = (execution: Pick<Execution, 'execution_id' | 'agent_id'>): ExecutionKey => ({
  execution_id: execution.execution_id,
  agent_id: execution.agent_id,
});

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** What a waiting workflow is told of a call that left pending: run it, or end. */
const workflowOutcome = (execution: Execution): WorkflowOutcome =>
  execution.status === 'approved' ? 'approved' : 'closed';

/**
 * Every call still open, page by page: from the store's index, or from the records themselves
 * (`records`: a scan, which finds a call whose index entry a crash left behind its record).
 */
async function* openExecutions(
  store: ExecutionStore,
  source: 'index' | 'records' = 'index',
): AsyncGenerator<Execution> {
  let cursor: string | undefined;
  do {
    const options = { limit: 100, ...(cursor === undefined ? {} : { cursor }) };
    const page = source === 'index' ? await store.listOpen(options) : await store.scanOpen(options);
    yield* page.items;
    cursor = page.next;
  } while (cursor !== undefined);
}

/** Pending becomes expired (nothing ran), by a conditional write: only if it is still pending. */
const expirePending = (deps: Pick<SendDeps, 'store' | 'clock'>, key: ExecutionKey): Promise<TransitionResult> =>
  deps.store.transition(key, {
    from: 'pending_approval',
    to: 'expired',
    at: isoAt(deps.clock),
    patch: { code: 'approval_expired', message: resultMessages.approval_expired },
  });

// ---------------------------------------------------------------------------------------------
// The workflow's steps

export interface RegisterRequest extends ExecutionKey {
  readonly task_token: string;
}

/**
 * The workflow waits on a task token: record it (while the call is still pending) and notify the
 * approvers once. When the call was decided before the workflow listened (a decision during a
 * restart, or a lost signal), the decision is handed over at once.
 */
export const registerApproval = async (
  deps: ApprovalDeps,
  request: RegisterRequest,
): Promise<{ status: Execution['status'] | 'missing' }> => {
  const registered = await deps.store.annotate(request, 'pending_approval', { task_token: request.task_token });
  if (registered.kind === 'applied') {
    await notifyOnce(deps, registered.execution);
    return { status: 'pending_approval' };
  }
  const current = registered.current;
  if (current === undefined) {
    deps.log.warn('a workflow registered for an execution that does not exist', { execution_id: request.execution_id });
    await deps.workflow.signal(request.task_token, 'closed');
    return { status: 'missing' };
  }
  await deps.workflow.signal(request.task_token, workflowOutcome(current));
  return { status: current.status };
};

export const noticeOf = (deps: Pick<ApprovalDeps, 'consoleUrl'>, execution: Execution): HeldCallNotice => ({
  execution_id: execution.execution_id,
  tool: execution.tool,
  agent_id: execution.agent_id,
  customer_id: execution.customer_id,
  staff_group: execution.decision?.step?.staff ?? null,
  customer_confirms: execution.decision?.step?.customer ?? false,
  summary: summarize(execution.arguments_json, hiddenSecretsOf(execution)),
  console_url: deps.consoleUrl(execution.execution_id),
  expires_at: execution.expires_at ?? execution.created_at,
});

/**
 * Approvers hear about a held call at least once: the channels are told first, then the record
 * notes it, so a crash in between repeats the notice rather than lose it.
 */
const notifyOnce = async (deps: ApprovalDeps, execution: Execution): Promise<void> => {
  if (execution.notified_at !== null) return;
  await deps.notifier.heldCall(noticeOf(deps, execution));
  await deps.store.annotate(execution, 'pending_approval', { notified_at: isoAt(deps.clock) }, 'notified_at');
};

/** The approval time ran out: pending becomes expired; a decision that won the race runs instead. */
export const expireApproval = async (deps: ApprovalDeps, key: ExecutionKey): Promise<Execution | undefined> => {
  const expired = await expirePending(deps, key);
  if (expired.kind === 'applied') {
    deps.log.info('held call expired', { execution_id: key.execution_id });
    return expired.execution;
  }
  if (expired.current?.status === 'approved') return executeApproved(deps, key);
  return expired.current;
};

/** Ends an approved call that cannot be sent, before anything was sent. */
const failUnsent = async (
  deps: ApprovalDeps,
  execution: Execution,
  code: 'tool_unavailable' | 'arguments_mismatch',
): Promise<Execution> => {
  deps.log.warn('an approved call was not sent', { execution_id: execution.execution_id, code });
  const failed = await deps.store.transition(execution, {
    from: 'approved',
    to: 'failed',
    at: isoAt(deps.clock),
    patch: { code, message: resultMessages[code] },
  });
  return heldAfter(failed, execution);
};

/** The agent that asked, as the policy saw it then (groups as its token named them). */
const requesterOf = (execution: Execution): AgentIdentity => ({
  id: execution.agent_id,
  groups: execution.agent_groups ?? [],
  customerId: execution.customer_id,
});

/**
 * Whether the approval given still answers what the policy asks now: the call is permitted, and
 * any human step it needs now is the one that was taken (an approval by finance does not stand
 * for another group, nor for the customer's confirmation). A call that now runs at once is covered.
 */
const approvalCovers = (execution: Execution, decision: PolicyDecision): boolean => {
  if (decision.kind === 'deny') return false;
  const step = decision.step;
  if (step === null) return true;
  const given = execution.decision?.step ?? null;
  if (step.staff !== null && step.staff !== given?.staff) return false;
  return !step.customer || given?.customer === true;
};

/** Ends an approved call the policy no longer allows as approved: denied, nothing sent. */
const denyUnsent = async (
  deps: ApprovalDeps,
  execution: Execution,
  decision: PolicyDecision | undefined,
): Promise<Execution> => {
  deps.log.warn('an approved call is no longer allowed by the policy; it was not sent', {
    execution_id: execution.execution_id,
    effect: decision?.kind ?? null,
    reason: decision?.kind === 'deny' ? decision.reason : 'approval_does_not_cover',
    policies: decision?.determining.map((policy) => policy.name) ?? [],
  });
  const denied = await deps.store.transition(execution, {
    from: 'approved',
    to: 'denied',
    at: isoAt(deps.clock),
    patch: { code: 'policy_denied', message: resultMessages.policy_changed },
  });
  return heldAfter(denied, execution);
};

/**
 * Runs an approved call once: claims it (a conditional write only one worker wins), sends exactly
 * the canonical arguments the approver saw (checked against their hash), and records the outcome.
 * Before the claim, the tool must still be on and the current policy must still allow the call as
 * approved; otherwise it ends (failed / tool_unavailable, denied / policy_denied) with nothing sent.
 */
export const executeApproved = async (deps: ApprovalDeps, key: ExecutionKey): Promise<Execution | undefined> => {
  const execution = await deps.store.getOwned(key);
  if (execution === undefined || execution.status !== 'approved') return execution;
  if (execution.claimed_at !== null) return settleAbandonedClaim(deps, execution);

  const state = await deps.controlPlane.current();
  const snapshot = state.kind === 'active' ? state.snapshot : null;
  const tool = snapshot?.catalog.byName.get(execution.tool);
  const system = snapshot?.config.systems.find((candidate) => candidate.key === tool?.systemKey);
  if (tool === undefined || system === undefined) return failUnsent(deps, execution, 'tool_unavailable');

  const json =
    execution.sealed_arguments === null
      ? execution.arguments_json
      : await deps.sealer.open(execution.sealed_arguments, execution.execution_id);
  if (json === null || execution.arguments_hash === null || argumentsHash(json) !== execution.arguments_hash) {
    return failUnsent(deps, execution, 'arguments_mismatch');
  }
  // Integers beyond 2^53 come back exact, as the approver saw them and as they are sent.
  const args = parseExactJson(json) as JsonObject;
  // The policy as it is now decides again, on the same arguments, as the agent that asked.
  const current = snapshot?.policy.decide(requesterOf(execution), tool, args);
  if (current === undefined || !approvalCovers(execution, current)) return denyUnsent(deps, execution, current);
  const sendable = { tool, system, args, traceparent: resumeTrace(execution.trace_id).traceparent };
  const outbound = outboundFor(execution, sendable);
  const claimed = await deps.store.claim(execution, claimWindow(deps.clock, outbound));
  // Another worker claimed it first: it sends, this one does not.
  if (claimed.kind === 'conflict') return claimed.current;
  return sendClaimed(deps, claimed.execution, sendable, outbound);
};

// ---------------------------------------------------------------------------------------------
// The approver's side

/** How long a rejection's reason may be. */
export const maxNoteLength = 500;

export type DecisionRefusal =
  /** No such execution. */
  | 'not_found'
  /** The approver is not in the group the policy names (or the call waits for the customer only). */
  | 'not_an_approver'
  /** The approver made the call. */
  | 'own_call'
  /** The call was decided already; `execution` says how. */
  | 'already_decided'
  /** The approval time ran out. */
  | 'expired'
  /** The arguments hash sent with the decision is not the one of the arguments held. */
  | 'arguments_changed'
  /** The call also needs the customer's confirmation, which is collected on the customer's page. */
  | 'customer_confirms'
  /** The reason is too long or empty after clean-up. */
  | 'invalid_note';

export type DecisionResult =
  | { readonly kind: 'decided'; readonly execution: Execution }
  | { readonly kind: 'refused'; readonly reason: DecisionRefusal; readonly execution?: Execution };

export interface DecisionRequest {
  readonly execution_id: string;
  readonly outcome: 'approve' | 'reject';
  /** The hash of the arguments the approver was shown. */
  readonly arguments_hash: string;
  /** For a rejection: a short reason the agent will read. */
  readonly note?: string | null;
}

/** A reason as the agent will read it: one line, normalized, no control or invisible characters. */
export const cleanNote = (note: string | null | undefined): string | null => {
  if (note === null || note === undefined) return null;
  const cleaned = note
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned.length === 0 ? null : cleaned;
};

/** Whether this approver may decide this call (group named by the policy, and not their own call). */
export const mayDecide = (approver: Approver, execution: Execution): DecisionRefusal | null => {
  const group = execution.decision?.step?.staff ?? null;
  if (group === null || !approver.groups.includes(group)) return 'not_an_approver';
  if (approver.id === execution.agent_id) return 'own_call';
  return null;
};

/** Why a call that left pending cannot be decided: it expired, or someone decided it. */
const closedReason = (execution: Execution): DecisionRefusal =>
  execution.status === 'expired' ? 'expired' : 'already_decided';

export const decide = async (
  deps: ApprovalDeps,
  approver: Approver,
  request: DecisionRequest,
): Promise<DecisionResult> => {
  const execution = await deps.store.get(request.execution_id);
  if (execution === undefined) return { kind: 'refused', reason: 'not_found' };
  const refusal = mayDecide(approver, execution);
  if (refusal !== null) return { kind: 'refused', reason: refusal, execution };
  if (execution.status !== 'pending_approval') return { kind: 'refused', reason: closedReason(execution), execution };
  const now = isoAt(deps.clock);
  if (execution.expires_at !== null && execution.expires_at <= now) {
    return { kind: 'refused', reason: 'expired', execution };
  }
  if (request.arguments_hash !== execution.arguments_hash) {
    return { kind: 'refused', reason: 'arguments_changed', execution };
  }
  if (request.outcome === 'approve' && execution.decision?.step?.customer === true) {
    return { kind: 'refused', reason: 'customer_confirms', execution };
  }
  const note = request.outcome === 'reject' ? cleanNote(request.note) : null;
  if (note !== null && note.length > maxNoteLength) return { kind: 'refused', reason: 'invalid_note', execution };

  const approve = request.outcome === 'approve';
  const decided = await deps.store.transition(execution, {
    from: 'pending_approval',
    to: approve ? 'approved' : 'rejected',
    at: now,
    guard: { argumentsHash: request.arguments_hash, notExpiredAt: now },
    patch: {
      decided_by: approver.id,
      decided_at: now,
      decision_note: note,
      code: approve ? null : 'rejected',
      message: approve
        ? resultMessages.approved
        : note === null
          ? resultMessages.rejected
          : `${resultMessages.rejected_because}${note}`,
    },
  });
  if (decided.kind === 'conflict') {
    const current = decided.current ?? execution;
    if (current.status !== 'pending_approval')
      return { kind: 'refused', reason: closedReason(current), execution: current };
    return {
      kind: 'refused',
      reason: current.expires_at !== null && current.expires_at <= now ? 'expired' : 'arguments_changed',
      execution: current,
    };
  }
  deps.probe?.('decided', execution.execution_id);
  deps.log.info('held call decided', {
    execution_id: execution.execution_id,
    outcome: decided.execution.status,
    approver: approver.id,
  });
  await pushDecision(deps, decided.execution);
  return { kind: 'decided', execution: decided.execution };
};

/** Hands a recorded decision to the waiting workflow; a lost push is repeated by recovery. */
const pushDecision = async (deps: ApprovalDeps, execution: Execution): Promise<boolean> => {
  if (execution.task_token === null) return false;
  try {
    return await deps.workflow.signal(execution.task_token, workflowOutcome(execution));
  } catch (error) {
    deps.log.warn('the decision could not be handed to the workflow; recovery will', {
      execution_id: execution.execution_id,
      error: errorText(error),
    });
    return false;
  }
};

/** Held calls this approver may decide now, soonest expiry first. */
export const decidableBy = async (
  deps: Pick<ApprovalDeps, 'store'>,
  approver: Approver,
  limit = 200,
): Promise<Execution[]> => {
  const found: Execution[] = [];
  for await (const execution of openExecutions(deps.store)) {
    if (execution.status === 'pending_approval' && mayDecide(approver, execution) === null) found.push(execution);
    if (found.length >= limit) break;
  }
  return found
    .sort((a, b) => (a.expires_at ?? '').localeCompare(b.expires_at ?? '') || a.created_at.localeCompare(b.created_at))
    .slice(0, limit);
};

// ---------------------------------------------------------------------------------------------
// Nothing lost

/**
 * A call's overdue state settled on sight: a pending call past its approval time (and a grace for
 * the workflow's own timer) expires; a claim past its deadline is settled by the claim rules.
 */
export const settleOverdue = async (
  deps: Pick<SendDeps, 'store' | 'clock'>,
  execution: Execution,
): Promise<Execution> => {
  if (execution.status === 'approved') return settleAbandonedClaim(deps, execution);
  if (execution.status !== 'pending_approval' || execution.expires_at === null) return execution;
  if (deps.clock.now() <= Date.parse(execution.expires_at) + claimGraceMs) return execution;
  const expired = await expirePending(deps, execution);
  return heldAfter(expired, execution);
};

/** How long a decision may wait for its workflow before recovery runs it itself. */
export const signalGraceMs = 60_000;
/** How long a held call may wait for its workflow to register before recovery starts it. */
export const registerGraceMs = 60_000;

export interface RecoveryReport {
  /** Pending calls whose workflow was (re)started. */
  readonly resumed: number;
  readonly expired: number;
  /** Approved calls run (or handed to their workflow again). */
  readonly executed: number;
  /** Claims settled as interrupted. */
  readonly settled: number;
}

/**
 * Brings every open call forward. `restart`: the local runtime after a start, holding the only lock
 * on its data, so every workflow it ran is gone and no one else is sending. Otherwise (the AWS
 * reconciler), workflows may be alive: only what is overdue or lost is acted on.
 */
export const recoverOpenExecutions = async (
  deps: ApprovalDeps,
  mode: 'restart' | 'reconcile',
  background: (work: Promise<unknown>) => void = () => undefined,
): Promise<RecoveryReport> => {
  let resumed = 0;
  let expired = 0;
  let executed = 0;
  let settled = 0;
  // At local start the records are read, not the index: a crash between a record's write and its
  // index entry's leaves the index saying a call ended while its record says it is open.
  for await (const execution of openExecutions(deps.store, mode === 'restart' ? 'records' : 'index')) {
    // Each call is judged at the time it is reached: recovering thousands of calls takes a while.
    const now = deps.clock.now();
    try {
      if (execution.status === 'pending_approval') {
        const expiresAt = execution.expires_at === null ? now : Date.parse(execution.expires_at);
        const overdue = mode === 'restart' ? now >= expiresAt : now > expiresAt + claimGraceMs;
        if (overdue) {
          await expireApproval(deps, execution);
          expired += 1;
        } else if (
          mode === 'restart' ||
          (execution.task_token === null && now - Date.parse(execution.created_at) > registerGraceMs)
        ) {
          await deps.workflow.start({
            execution_id: execution.execution_id,
            agent_id: execution.agent_id,
            timeout_seconds: approvalTimeoutSeconds(execution, now),
          });
          resumed += 1;
        }
      } else if (execution.claimed_at !== null) {
        const after = await settleAbandonedClaim(deps, execution, { now: mode === 'restart' });
        if (after.status !== 'approved') settled += 1;
      } else if (mode === 'restart' || now - Date.parse(execution.decided_at ?? execution.updated_at) > signalGraceMs) {
        // Approved, not yet claimed: hand it to its workflow again, or run it here.
        const handed = mode === 'reconcile' && (await pushDecision(deps, execution));
        if (!handed) background(executeApproved(deps, keyOf(execution)));
        executed += 1;
      }
    } catch (error) {
      deps.log.warn('an open call could not be recovered now; the next pass retries', {
        execution_id: execution.execution_id,
        error: errorText(error),
      });
    }
  }
  return { resumed, expired, executed, settled };
};
