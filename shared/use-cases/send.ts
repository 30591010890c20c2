// Sending a permitted call to its system, once. The protocol both paths share (a call run at once
// and an approved call run by the workflow):
//
// A call is recorded as claimed (status approved, with its deadline) before it is sent, and its
// outcome recorded after: a claim is a conditional write, so however many workers try, one sends.
// A claim left without an outcome (the gateway stopped) is settled, never sent again: as unknown
// for a write (the system may have done it), as failed for a read (it can be tried again).
import type { CatalogTool, JsonObject } from '../catalog/tool.js';
import { type Clock, isoAt } from '../clock.js';
import type { ResolvedSystem } from '../config/load.js';
import type { Execution } from '../executions/execution.js';
import { type ExecutionStore, heldAfter } from '../executions/store.js';
import { buildRequest, type CallOutcome, classify } from '../invoke/call.js';
import type { OutboundRequest, SystemClient } from '../invoke/system-client.js';
import type { Log } from '../log.js';
import type { SecretRules } from '../secrets.js';

/**
 * Steps of a call, reported to an optional probe (the local runtime's fault injection): a decision
 * recorded, a claim recorded, an answer received.
 */
export type CallStep = 'decided' | 'claimed' | 'answered';

export interface SendDeps {
  readonly store: ExecutionStore;
  readonly clock: Clock;
  readonly systems: SystemClient;
  readonly log: Log;
  readonly probe?: (step: CallStep, executionId: string) => void;
}

/** How long after its deadline an unsettled claim is declared interrupted. */
export const claimGraceMs = 5_000;

export const secretRules = (system: ResolvedSystem | undefined): SecretRules => ({
  names: new Set(system?.sensitive_fields ?? []),
});

export const outcomeMessage = (outcome: CallOutcome): string | null => {
  if (outcome.status === 'succeeded') return null;
  if (outcome.status === 'unknown') {
    return 'The call was sent but no reliable answer came back; the system may or may not have done it. It will not be retried.';
  }
  return outcome.httpStatus !== null && outcome.httpStatus >= 400 && outcome.httpStatus < 500
    ? 'The system refused the call.'
    : 'The system gave no usable answer; nothing needs undoing, and the call can be tried again.';
};

/** What a call needs to be sent: the tool and system as configured now, and its canonical arguments. */
export interface Sendable {
  readonly tool: CatalogTool;
  readonly system: ResolvedSystem;
  readonly args: JsonObject;
  readonly traceparent: string;
}

export const outboundFor = (execution: Execution, sendable: Sendable): OutboundRequest =>
  buildRequest(sendable.tool, sendable.system, sendable.args, {
    executionId: execution.execution_id,
    traceparent: sendable.traceparent,
  });

/** When a claim is made and by when its outcome must be known: the request's whole deadline. */
export const claimWindow = (clock: Clock, outbound: OutboundRequest): { at: string; deadline: string } => {
  const at = clock.now();
  return { at: new Date(at).toISOString(), deadline: new Date(at + outbound.deadlineMs).toISOString() };
};

/** Sends the request and classifies the answer, logging how it went. */
export const send = async (
  deps: SendDeps,
  execution: Execution,
  sendable: Sendable,
  outbound: OutboundRequest,
): Promise<{ outcome: CallOutcome; latency: number }> => {
  const started = deps.clock.now();
  const outcome = classify(
    await deps.systems.send(outbound),
    sendable.tool,
    sendable.system,
    secretRules(sendable.system),
  );
  const latency = deps.clock.now() - started;
  deps.log.info('system call finished', {
    execution_id: execution.execution_id,
    trace_id: execution.trace_id,
    tool: sendable.tool.name,
    status: outcome.status,
    code: outcome.code,
    http_status: outcome.httpStatus,
    latency_ms: latency,
  });
  return { outcome, latency };
};

/** The outcome's fields, as recorded on the execution. */
export const outcomeFields = (outcome: CallOutcome, latency: number) => ({
  code: outcome.code,
  message: outcomeMessage(outcome),
  result_json: outcome.status === 'succeeded' ? JSON.stringify(outcome.result) : null,
  http_status: outcome.httpStatus,
  latency_ms: latency,
});

/** Sends a claimed call (status approved, claim recorded) and records its outcome. */
export const sendClaimed = async (
  deps: SendDeps,
  claimed: Execution,
  sendable: Sendable,
  outbound: OutboundRequest,
): Promise<Execution> => {
  deps.probe?.('claimed', claimed.execution_id);
  const { outcome, latency } = await send(deps, claimed, sendable, outbound);
  deps.probe?.('answered', claimed.execution_id);
  const settled = await deps.store.transition(claimed, {
    from: 'approved',
    to: outcome.status,
    at: isoAt(deps.clock),
    patch: outcomeFields(outcome, latency),
  });
  // Someone may have settled the claim first (it outlived its deadline): then their answer stands.
  return heldAfter(settled, claimed);
};

export const interruptedMessages = {
  write: 'The call was sent but the gateway stopped before its answer was recorded; it will not be retried.',
  read: 'The gateway stopped before the answer was recorded; nothing needs undoing, and the call can be tried again.',
} as const;

/**
 * A claim whose outcome never came is settled: once its deadline (and a grace) has passed, or at
 * once when the caller knows no one else can still be sending it (`now`: the local runtime after
 * a restart, which holds the only lock on its data).
 */
export const settleAbandonedClaim = async (
  deps: Pick<SendDeps, 'store' | 'clock'>,
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
    patch: { code: 'interrupted', message: read ? interruptedMessages.read : interruptedMessages.write },
  });
  return heldAfter(settled, execution);
};
