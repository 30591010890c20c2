// The run-once protocol: the one place a permitted call is sent to its system. Two entries, one
// rule: `runDirect` for a call the policy lets run now, `runApproved` for a held call an approver
// approved (run by the state machine's execute step or by recovery).
//
// A call is recorded as claimed (status approved, with its deadline) before it is sent, and its
// outcome recorded after: a claim is a conditional write, so however many workers try, one sends.
// A claim left without an outcome (the gateway stopped) is settled, never sent again: as unknown
// for a write (the system may have done it), as failed for a read (it can be tried again). A read
// run directly is the one exception: it is recorded once, with its outcome, since sending it twice
// harms nothing.
//
// Long: both entries share the claim, the send through either kind of system, and the settling;
// split apart, the one rule would have two homes.

import { quorumMet } from '../approvals/quorum.js';
import { argumentsHash } from '../arguments/hash.js';
import type { AgentIdentity } from '../auth/agent.js';
import { type CatalogTool, isJsonObject, type JsonObject } from '../catalog/tool.js';
import { type Clock, isoAt } from '../clock.js';
import type { ResolvedSystem } from '../config/resolved.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import { type Coded, coded, errorText, outcomeMessage, StoreUnavailableError } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import { fitsRecord } from '../executions/record-size.js';
import { type ExecutionKey, type ExecutionStore, heldAfter } from '../executions/store.js';
import { buildRequest, type CallOutcome, classify, withReceipt } from '../invoke/call.js';
import type { SystemClient } from '../invoke/system-client.js';
import { boundedTimeoutMs } from '../invoke/time-budget.js';
import { classifyToolAnswer, type ToolServerClient } from '../invoke/tool-server.js';
import { resumeTrace } from '../invoke/trace.js';
import type { Log } from '../log.js';
import type { PolicyDecision } from '../policy/engine.js';
import { type HttpBinding, httpBindingOf, signReceipt } from '../receipts/claims.js';
import type { ReceiptSigner } from '../receipts/signer.js';
import type { Sealer } from '../sealing.js';
import { secretRulesOf } from '../secrets.js';
import { exactJsonText, parseExactJson } from '../wire/exact-json.js';

/**
 * Steps of a call, reported to an optional probe (the local runtime's fault injection): a decision
 * recorded, a claim recorded, an answer received.
 */
export type CallStep = 'decided' | 'claimed' | 'answered';

export interface RunOnceDeps {
  readonly store: ExecutionStore;
  readonly clock: Clock;
  /** HTTP systems (OpenAPI operations). */
  readonly systems: SystemClient;
  /** MCP servers, behind a call-tool proxy or spoken to directly. */
  readonly toolServers: ToolServerClient;
  readonly log: Log;
  readonly probe?: (step: CallStep, executionId: string) => void;
  /** What the running function has left before it is stopped (a Lambda); null or absent where nothing stops it. */
  readonly timeLeftMs?: () => number | null;
}

/** The call as it may be sent here: its system's timeout cut to what the running function has left. */
const withinTimeLeft = (deps: RunOnceDeps, sendable: Sendable): Sendable => {
  const timeout = boundedTimeoutMs(sendable.system.timeout, deps.timeLeftMs?.() ?? null);
  return timeout === sendable.system.timeout ? sendable : { ...sendable, system: { ...sendable.system, timeout } };
};

/** An approved call is looked up again before it runs: the tool as configured now, and the policy. */
export interface ApprovedRunDeps extends RunOnceDeps {
  readonly controlPlane: ControlPlane;
  readonly sealer: Sealer;
  /** Signs the receipt an approved call carries to its system (and its agent sees). */
  readonly receiptSigner: ReceiptSigner;
  /** The gateway's public base URL, the receipts' issuer (read when one is signed). */
  readonly receiptIssuer: () => string;
}

/** How long after its deadline an unsettled claim is declared interrupted. */
export const claimGraceMs = 5_000;

/** What a call needs to be sent: the tool and system as configured now, and its canonical arguments. */
export interface Sendable {
  readonly tool: CatalogTool;
  readonly system: ResolvedSystem;
  readonly args: JsonObject;
  readonly traceparent: string;
}

/**
 * A call made ready to send: its whole deadline, the HTTP request as built (what a receipt binds;
 * null for a tool server's call), and the send, with the receipt when the call has one, that
 * classifies its answer.
 */
interface Dispatch {
  readonly deadlineMs: number;
  readonly http: (() => HttpBinding) | null;
  readonly send: (deps: RunOnceDeps, receipt: string | null) => Promise<CallOutcome>;
}

/** How this tool is reached: an HTTP request built from its bindings, or its server's tool call. */
const dispatchFor = (execution: Execution, sendable: Sendable): Dispatch => {
  const { tool, system, args } = sendable;
  const rules = secretRulesOf(system);
  const context = { executionId: execution.execution_id, traceparent: sendable.traceparent };
  if (tool.target.kind === 'http' && system.kind === 'openapi') {
    const outbound = buildRequest(tool.target, system, args, context);
    return {
      deadlineMs: outbound.deadlineMs,
      http() {
        return httpBindingOf(outbound);
      },
      async send(deps, receipt) {
        return classify(
          await deps.systems.send(receipt === null ? outbound : withReceipt(outbound, receipt)),
          tool,
          system,
          rules,
        );
      },
    };
  }
  if (tool.target.kind === 'tool-server' && system.kind !== 'openapi') {
    const request = {
      system,
      name: tool.target.name,
      argumentsJson: exactJsonText(args),
      ...context,
      deadlineMs: system.timeout,
      maxResponseBytes: system.max_response_size,
    };
    return {
      deadlineMs: request.deadlineMs,
      http: null,
      async send(deps, receipt) {
        return classifyToolAnswer(
          await deps.toolServers.call(receipt === null ? request : { ...request, receipt }),
          tool,
          rules,
        );
      },
    };
  }
  // The catalog builds each tool from its own system, so the two always agree.
  throw new Error(`the tool ${tool.name} does not match the kind of its system ${system.key}`);
};

/** When a claim is made and by when its outcome must be known: the call's whole deadline. */
const claimWindow = (clock: Clock, dispatch: Dispatch): { at: string; deadline: string } => {
  const at = clock.now();
  return { at: new Date(at).toISOString(), deadline: new Date(at + dispatch.deadlineMs).toISOString() };
};

/** Sends the call and classifies the answer, logging how it went. */
const send = async (
  deps: RunOnceDeps,
  execution: Execution,
  sendable: Sendable,
  dispatch: Dispatch,
): Promise<{ outcome: CallOutcome; latency: number }> => {
  const started = deps.clock.now();
  // An approved call's receipt was kept with its claim: the record says what is sent.
  const outcome = await dispatch.send(deps, execution.receipt);
  const latency = deps.clock.now() - started;
  deps.log.info('system call finished', {
    execution_id: execution.execution_id,
    trace_id: execution.trace_id,
    tool: sendable.tool.name,
    status: outcome.status,
    code: outcome.code,
    http_status: outcome.httpStatus,
    latency_ms: latency,
    cause: outcome.status === 'succeeded' ? null : (outcome.cause ?? null),
  });
  return { outcome, latency };
};

/** The outcome's fields, as recorded on the execution. */
const outcomeFields = (outcome: CallOutcome, latency: number) => ({
  code: outcome.code,
  message: outcomeMessage(outcome),
  result_json: outcome.status === 'succeeded' ? exactJsonText(outcome.result) : null,
  http_status: outcome.httpStatus,
  latency_ms: latency,
});

/**
 * The outcome as the record can keep it, with its fields as recorded (the answer's text written
 * once). max_response_size bounds the answer read, but parsing, redacting and serializing it may
 * grow it (1e20 is written out in 21 digits): an answer that no longer fits is not kept. A read
 * then failed (response_too_large: nothing happened, it can be asked again); a write succeeded and
 * stays succeeded, without its answer, never unknown by the gateway's own limit.
 */
const keptOutcome = (
  execution: Execution,
  outcome: CallOutcome,
  latency: number,
): { readonly outcome: CallOutcome; readonly fields: ReturnType<typeof outcomeFields> } => {
  const fields = outcomeFields(outcome, latency);
  if (outcome.status !== 'succeeded' || fitsRecord({ ...execution, ...fields })) return { outcome, fields };
  const kept: CallOutcome =
    execution.access === 'write'
      ? { ...outcome, result: null }
      : { status: 'failed', code: 'response_too_large', result: null, httpStatus: outcome.httpStatus };
  return { outcome: kept, fields: outcomeFields(kept, latency) };
};

/**
 * Records what a sent call did. The store failing here is not the temporary refusal it is before
 * sending (nothing was sent): the call went out, so it reads as a fault of unknown outcome.
 */
const recordingSent = <T>(write: Promise<T>): Promise<T> =>
  write.catch((error: unknown) => {
    throw error instanceof StoreUnavailableError
      ? new Error('The outcome of a sent call could not be recorded.', { cause: error })
      : error;
  });

/** Sends a claimed call (status approved, claim recorded) and records its outcome. */
const sendClaimed = async (
  deps: RunOnceDeps,
  claimed: Execution,
  sendable: Sendable,
  dispatch: Dispatch,
): Promise<Execution> => {
  deps.probe?.('claimed', claimed.execution_id);
  const sent = await send(deps, claimed, sendable, dispatch);
  const kept = keptOutcome(claimed, sent.outcome, sent.latency);
  deps.probe?.('answered', claimed.execution_id);
  const settled = await recordingSent(
    deps.store.transition(claimed, {
      from: 'approved',
      to: kept.outcome.status,
      at: isoAt(deps.clock),
      patch: kept.fields,
    }),
  );
  // Someone may have settled the claim first (it outlived its deadline): then their answer stands.
  return heldAfter(settled, claimed);
};

/**
 * Runs a call the policy lets run now; `execution` is its new record (status approved, not yet
 * stored). A write is stored already claimed (the one write that creates the record), sent, then
 * settled; a read is sent and stored once, with its outcome.
 */
export const runDirect = async (deps: RunOnceDeps, execution: Execution, sendable: Sendable): Promise<Execution> => {
  const dispatch = dispatchFor(execution, withinTimeLeft(deps, sendable));
  if (sendable.tool.access === 'write') {
    const window = claimWindow(deps.clock, dispatch);
    const claimed: Execution = { ...execution, claimed_at: window.at, deadline_at: window.deadline };
    await deps.store.create(claimed);
    return sendClaimed(deps, claimed, sendable, dispatch);
  }
  const sent = await send(deps, execution, sendable, dispatch);
  const kept = keptOutcome(execution, sent.outcome, sent.latency);
  const at = isoAt(deps.clock);
  const settled: Execution = {
    ...execution,
    status: kept.outcome.status,
    ...kept.fields,
    updated_at: at,
    history: [...execution.history, { status: kept.outcome.status, at }],
  };
  await recordingSent(deps.store.create(settled));
  return settled;
};

/**
 * A claim whose outcome never came is settled: once its deadline (and a grace) has passed, or at
 * once when the caller knows no one else can still be sending it (`now`: the local runtime after
 * a restart, which holds the only lock on its data).
 */
export const settleAbandonedClaim = async (
  deps: Pick<RunOnceDeps, 'store' | 'clock'>,
  execution: Execution,
  options: { readonly now?: boolean } = {},
): Promise<Execution> => {
  if (execution.status !== 'approved' || execution.claimed_at === null || execution.deadline_at === null) {
    return execution;
  }
  if (options.now !== true && deps.clock.now() <= Date.parse(execution.deadline_at) + claimGraceMs) return execution;
  const read = execution.access === 'read';
  const settled = await deps.store.transition(execution, {
    from: 'approved',
    to: read ? 'failed' : 'unknown',
    at: isoAt(deps.clock),
    patch: coded('interrupted', read ? 'read' : 'write'),
  });
  return heldAfter(settled, execution);
};

/** Ends an approved call before anything was sent, with the status and code that say why. */
const endUnsent = async (
  deps: RunOnceDeps,
  execution: Execution,
  to: 'failed' | 'denied',
  patch: Coded<'tool_unavailable' | 'arguments_mismatch' | 'policy_denied'>,
): Promise<Execution> => {
  const ended = await deps.store.transition(execution, { from: 'approved', to, at: isoAt(deps.clock), patch });
  return heldAfter(ended, execution);
};

/** The agent that asked, as the policy saw it then (groups as its token named them). */
export const requesterOf = (execution: Execution): AgentIdentity => ({
  id: execution.agent_id,
  groups: execution.agent_groups ?? [],
  customerId: execution.customer_id,
});

/**
 * Whether the approval given still answers what the policy asks now: the call is permitted, and
 * any human step it needs now is the one that was taken: as many distinct approvers as its quorum
 * asks now, each of a group it lets decide now, on a sign-in as recent and as strong as it asks
 * now (an approval by finance does not stand for another group, one approver does not stand for
 * two), and the customer's confirmation when it asks for one. A call that now runs at once is covered.
 */
const approvalCovers = (execution: Execution, decision: PolicyDecision): boolean => {
  if (decision.kind === 'deny') return false;
  const step = decision.step;
  if (step === null) return true;
  if (step.staff !== null && !quorumMet(execution, step)) return false;
  const given = execution.decision?.step ?? null;
  return !step.customer || (given?.customer === true && execution.customer_confirmed_at !== null);
};

/**
 * Signs the receipt of an approved call, over the request as it will be sent, before its claim, so
 * the claim's own write keeps it. An approved call is never sent without its receipt: a signer
 * that fails leaves it approved and unclaimed, nothing sent, for the workflow's retries and
 * recovery to run again (docs/adr/0085-approval-receipts-on-calls.md).
 */
const receiptFor = async (deps: ApprovedRunDeps, execution: Execution, dispatch: Dispatch): Promise<string> => {
  try {
    return await signReceipt(
      deps.receiptSigner,
      execution,
      deps.receiptIssuer(),
      deps.clock.now(),
      dispatch.http?.() ?? null,
    );
  } catch (error) {
    deps.log.warn('an approved call was not sent: its receipt could not be signed; it is tried again', {
      execution_id: execution.execution_id,
      error: errorText(error),
    });
    throw new Error('The approval receipt could not be signed; the call was not sent.', { cause: error });
  }
};

/**
 * Runs an approved call once: claims it (a conditional write only one worker wins), sends exactly
 * the canonical arguments the approver saw (checked against their hash), and records the outcome.
 * Before the claim, the tool must still be on and the current policy must still allow the call as
 * approved; otherwise it ends (failed / tool_unavailable, denied / policy_denied) with nothing sent.
 */
export const runApproved = async (deps: ApprovedRunDeps, key: ExecutionKey): Promise<Execution | undefined> => {
  const execution = await deps.store.getOwned(key);
  if (execution === undefined || execution.status !== 'approved') return execution;
  if (execution.claimed_at !== null) return settleAbandonedClaim(deps, execution);

  const state = await deps.controlPlane.current();
  const snapshot = state.kind === 'active' ? state.snapshot : null;
  const tool = snapshot?.catalog.byName.get(execution.tool);
  const system = snapshot?.config.systems.find((candidate) => candidate.key === tool?.systemKey);
  if (snapshot === null || tool === undefined || system === undefined) {
    deps.log.warn('an approved call was not sent', { execution_id: execution.execution_id, code: 'tool_unavailable' });
    return endUnsent(deps, execution, 'failed', coded('tool_unavailable'));
  }

  const json =
    execution.sealed_arguments === null
      ? execution.arguments_json
      : await deps.sealer.open(execution.sealed_arguments, execution.execution_id);
  // Integers beyond 2^53 come back exact, as the approver saw them and as they are sent.
  const args =
    json !== null && execution.arguments_hash !== null && argumentsHash(json) === execution.arguments_hash
      ? parseExactJson(json)
      : null;
  if (!isJsonObject(args)) {
    deps.log.warn('an approved call was not sent', {
      execution_id: execution.execution_id,
      code: 'arguments_mismatch',
    });
    return endUnsent(deps, execution, 'failed', coded('arguments_mismatch'));
  }
  // The policy as it is now decides again, on the same arguments, as the agent that asked.
  const current = snapshot.policy.decide(requesterOf(execution), tool, args);
  if (!approvalCovers(execution, current)) {
    deps.log.warn('an approved call is no longer allowed by the policy; it was not sent', {
      execution_id: execution.execution_id,
      effect: current.kind,
      reason: current.kind === 'deny' ? current.reason : 'approval_does_not_cover',
      policies: current.determining.map((policy) => policy.name),
    });
    return endUnsent(deps, execution, 'denied', coded('policy_denied', 'changed'));
  }
  const sendable = { tool, system, args, traceparent: resumeTrace(execution.trace_id).traceparent };
  const dispatch = dispatchFor(execution, withinTimeLeft(deps, sendable));
  const receipt = await receiptFor(deps, execution, dispatch);
  const claimed = await deps.store.claim(execution, { ...claimWindow(deps.clock, dispatch), receipt });
  // Another worker claimed it first: it sends, this one does not.
  if (claimed.kind === 'conflict') return claimed.current;
  return sendClaimed(deps, claimed.execution, sendable, dispatch);
};
