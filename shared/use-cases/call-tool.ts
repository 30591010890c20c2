// tools/call for catalog tools: find the tool this agent may see, put its arguments in canonical
// form, let policy decide, and run what may run now or hold it for approval. Every call leaves an
// execution record. A decided call under a key (the agent's idempotency key, or a held call's own)
// answers the call the key names instead (keyed-calls.ts). This module decides; sending is
// run-once.ts's, holding is the state machine's.
import type { ApprovalRuns } from '../approvals/approval-runs.js';
import { maxInputErrors } from '../arguments/canonicalize.js';
import { argumentsHash } from '../arguments/hash.js';
import type { StrictArguments } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool } from '../catalog/tool.js';
import { isoAt } from '../clock.js';
import type { ResolvedSystem } from '../config/resolved.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import type { GatewaySnapshot } from '../control-plane/gateway-snapshot.js';
import { coded, errorText, limitRefusals, refusal, statusMessages } from '../errors.js';
import { type CallKey, heldCallDigest, idempotencyDigest, keyRetainUntil } from '../executions/call-keys.js';
import {
  type DecisionRecord,
  type Execution,
  type ExecutionAnswer,
  type ExecutionOrigin,
  newExecutionRecord,
  toResultObject,
} from '../executions/execution.js';
import { defaultRetentionMs, defaultRetentionSeconds, retentionSeconds } from '../executions/retention.js';
import type { IdSource } from '../ids.js';
import { continueTrace } from '../invoke/trace.js';
import { limitsFor } from '../limits/agent-limits.js';
import { takePendingPlace } from '../limits/pending-quota.js';
import type { PolicyDecision } from '../policy/engine.js';
import type { HumanStep } from '../policy/human-step.js';
import type { InputError, ResultObject } from '../result.js';
import type { Sealer } from '../sealing.js';
import { redactWithPointers, secretRulesOf } from '../secrets.js';
import { canonicalJsonText } from '../wire/exact-json.js';
import { approvalTimeoutSeconds } from './approval-time.js';
import { type CallDecision, decideCall } from './decide-call.js';
import { type KeyKind, underCallKey } from './keyed-calls.js';
import { type RunOnceDeps, runDirect } from './run-once.js';

export type { CallStep } from './run-once.js';

export interface CallToolDeps extends RunOnceDeps {
  readonly ids: IdSource;
  readonly controlPlane: ControlPlane;
  readonly sealer: Sealer;
  readonly approvalRuns: ApprovalRuns;
  /** The customer's page of one held call (its approval_url): names the call, carries no secret. */
  readonly customerUrl: (executionId: string) => string;
}

export interface CallRequestContext {
  /** The caller's W3C traceparent, continued into the system call. */
  readonly traceparent: string | null;
  /** Where the call came from, recorded on its execution (gRPC streams); null or absent for HTTP MCP. */
  readonly origin?: ExecutionOrigin | null;
  /** Only this system's tools exist for the call (a gRPC stream's server_id); null or absent: all. */
  readonly systemKey?: string | null;
  /**
   * The agent's idempotency key for the call (params._meta["approval-gateway/idempotency-key"],
   * checked by the transport); null or absent: none.
   */
  readonly idempotencyKey?: string | null;
  /** Why the key the agent gave is not one: an input error naming its `_meta` member; null or absent: none. */
  readonly idempotencyKeyError?: InputError | null;
}

/** What a decided call keeps of its request. */
type DecidedRequest = Pick<CallRequestContext, 'traceparent' | 'idempotencyKey'> & {
  readonly origin: ExecutionOrigin | null;
};

/** Tool names as recorded: an unlisted name is the agent's text, so it is bounded. */
const recordedName = (name: string): string => (name.length > 200 ? `${name.slice(0, 200)}…` : name);

/** The catalog tools this agent may see now: none while the configuration is off or stale. */
export const visibleTools = async (
  controlPlane: ControlPlane,
  agent: AgentIdentity,
): Promise<readonly CatalogTool[]> => {
  const state = await controlPlane.current();
  if (state.kind !== 'active') return [];
  const { catalog, policy } = state.snapshot;
  return catalog.tools.filter((tool) => policy.isListed(agent, tool));
};

const decisionRecord = (decision: PolicyDecision, snapshot: GatewaySnapshot): DecisionRecord => ({
  effect: decision.kind,
  reason: decision.kind === 'deny' ? decision.reason : null,
  determining: decision.determining.map((policy) => ({ name: policy.name, file: policy.file, line: policy.line })),
  step: decision.kind === 'allow' ? decision.step : null,
  config_version: snapshot.version,
});

type NewExecution = Pick<Execution, 'status' | 'code' | 'message'> &
  Partial<Omit<Execution, 'status' | 'code' | 'message'>>;

const newExecution = (
  deps: CallToolDeps,
  agent: AgentIdentity,
  tool: string,
  fields: NewExecution,
  origin: ExecutionOrigin | null,
  snapshot: GatewaySnapshot | null,
): Execution =>
  newExecutionRecord({
    origin,
    // Kept with the call, so whichever side makes it final (the console has no configuration) keeps it as long.
    retention_s: retentionSeconds(snapshot?.config.settings.retention ?? defaultRetentionMs),
    execution_id: deps.ids.next(),
    agent_id: agent.id,
    customer_id: agent.customerId,
    agent_groups: [...agent.groups],
    tool: recordedName(tool),
    created_at: isoAt(deps.clock),
    ...fields,
  });

const record = async (deps: CallToolDeps, execution: Execution): Promise<ResultObject> => {
  await deps.store.create(execution);
  return toResultObject(execution);
};

/** A tools/call for a catalog tool: its result object (callToolAnswer adds the receipt it ran with). */
export const callTool = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
  request: CallRequestContext = { traceparent: null },
): Promise<ResultObject> => (await callToolAnswer(deps, agent, name, args, request)).result;

/** A call that is answered now, not from an earlier call's record: no one approved it, nothing to prove. */
const unapproved = async (result: Promise<ResultObject>): Promise<ExecutionAnswer> => ({
  result: await result,
  receipt: null,
});

/**
 * A tools/call for a catalog tool: its result object and the approval receipt its call was sent with
 * (only a call answered from an earlier, approved one under its key has one).
 */
export const callToolAnswer = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
  request: CallRequestContext = { traceparent: null },
): Promise<ExecutionAnswer> => {
  const state = await deps.controlPlane.current();
  const snapshot = state.kind === 'active' ? state.snapshot : null;
  const origin = request.origin ?? null;
  const decided =
    snapshot === null
      ? ({ kind: 'unknown_tool' } as const)
      : decideCall(snapshot, agent, name, args, request.systemKey ?? null);
  if (snapshot === null || decided.kind === 'unknown_tool') {
    return unapproved(record(deps, newExecution(deps, agent, name, refusal('unknown_tool'), origin, snapshot)));
  }
  const keyError = request.idempotencyKeyError ?? null;
  if (decided.kind === 'invalid_arguments' || keyError !== null) {
    const errors = decided.kind === 'invalid_arguments' ? decided.errors : [];
    const refused = refusedInput(args, withKeyError(errors, keyError));
    return unapproved(record(deps, newExecution(deps, agent, decided.tool.name, refused, origin, snapshot)));
  }
  return callDecided(deps, agent, decided, snapshot, {
    traceparent: request.traceparent,
    origin,
    idempotencyKey: request.idempotencyKey ?? null,
  });
};

/**
 * Refused input is kept in bounded form: its digest and the (bounded) errors, never itself.
 * (Plain JSON text: refused input may hold what has no exact form, such as 1e400.)
 */
const refusedInput = (args: StrictArguments, errors: readonly InputError[]): NewExecution => ({
  ...refusal('invalid_arguments'),
  arguments_hash: argumentsHash(JSON.stringify(args.value ?? null)),
  input_errors: [...errors],
});

/** A malformed key is one more input error, listed first (nothing runs, and no key is claimed). */
const withKeyError = (errors: readonly InputError[], keyError: InputError | null): InputError[] =>
  // A full list already ends saying more problems were found.
  keyError === null || errors.length >= maxInputErrors ? [...errors] : [keyError, ...errors];

type DecidedCall = Extract<CallDecision, { kind: 'decided' }>;

/** What the record of a decided call holds of it: its arguments (secrets redacted), the decision, the trace. */
const decidedFields = (
  decided: DecidedCall,
  snapshot: GatewaySnapshot,
  system: ResolvedSystem | undefined,
  traceId: string,
) => {
  const redaction = redactWithPointers(decided.arguments.value, decided.tool.inputSchema, secretRulesOf(system));
  return {
    // Nothing hidden: the copy is the canonical value itself, whose text is already written.
    arguments_json: redaction.pointers.length === 0 ? decided.arguments.json : canonicalJsonText(redaction.redacted),
    secret_pointers: redaction.pointers,
    arguments_hash: decided.arguments.hash,
    decision: decisionRecord(decided.decision, snapshot),
    trace_id: traceId,
  };
};

/** A permitted call's first status: approved to run now, or waiting for the human step the policy asks. */
const admitted = (step: HumanStep | null): NewExecution => ({
  status: step === null ? 'approved' : 'pending_approval',
  code: null,
  message:
    step === null ? null : step.customer ? statusMessages.waiting_for_customer : statusMessages.waiting_for_staff,
});

/** A call the policy decided, under its key when it has one (./keyed-calls.ts). */
const callDecided = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  decided: DecidedCall,
  snapshot: GatewaySnapshot,
  request: DecidedRequest,
): Promise<ExecutionAnswer> => {
  const { tool, decision } = decided;
  const system = snapshot.config.systems.find((candidate) => candidate.key === tool.systemKey);
  const trace = continueTrace(request.traceparent);
  const fields = decidedFields(decided, snapshot, system, trace.traceId);
  const first: NewExecution =
    decision.kind === 'deny'
      ? { ...refusal('policy_denied'), ...fields }
      : { ...admitted(decision.step), access: tool.access, ...fields };
  const execution = newExecution(deps, agent, tool.name, first, request.origin, snapshot);
  const call = { agent, decided, snapshot, system, traceparent: trace.traceparent };
  const key = callKeyOf(execution, snapshot, request.idempotencyKey ?? null);
  if (key === null) return unapproved(runDecided(deps, execution, call));
  const answered = await underCallKey(deps, key.key, key.kind, () => runDecided(deps, execution, call));
  if (answered.kind === 'answer') return { result: answered.result, receipt: answered.receipt };
  // The key is another call's: refused, and recorded like any refusal (nothing was sent). Nothing
  // was done on the policy's word either, so no decision is counted for it.
  const reused: NewExecution = { ...refusal('idempotency_key_reused'), ...fields, decision: null };
  return unapproved(record(deps, newExecution(deps, agent, tool.name, reused, request.origin, snapshot)));
};

/** A decided call's new record: kept as it is when the policy denies it, else the call run. */
const runDecided = (deps: CallToolDeps, execution: Execution, call: AllowedCall): Promise<ResultObject> =>
  call.decided.decision.kind === 'deny' ? record(deps, execution) : runAllowed(deps, execution, call);

/**
 * The key a decided call is made under: the agent's idempotency key; else, for a call the policy
 * holds, its own tool and arguments (unless settings.join_pending_calls is off); else none.
 */
const callKeyOf = (
  execution: Execution,
  snapshot: GatewaySnapshot,
  idempotencyKey: string | null,
): { readonly key: CallKey; readonly kind: KeyKind } | null => {
  const { settings } = snapshot.config;
  const argumentsHash = execution.arguments_hash ?? '';
  const heldCall = execution.status === 'pending_approval' && settings.join_pending_calls;
  if (idempotencyKey === null && !heldCall) return null;
  const key: CallKey = {
    agent_id: execution.agent_id,
    digest:
      idempotencyKey === null
        ? heldCallDigest(execution.customer_id, execution.tool, argumentsHash)
        : idempotencyDigest(idempotencyKey),
    execution_id: execution.execution_id,
    tool: execution.tool,
    arguments_hash: argumentsHash,
    retain_until: keyRetainUntil(
      execution.created_at,
      settings.approval_time,
      execution.retention_s ?? defaultRetentionSeconds,
    ),
  };
  return { key, kind: idempotencyKey === null ? 'held' : 'idempotency' };
};

/** What running a decided call needs besides its record. */
interface AllowedCall {
  readonly agent: AgentIdentity;
  readonly decided: DecidedCall;
  readonly snapshot: GatewaySnapshot;
  readonly system: ResolvedSystem | undefined;
  readonly traceparent: string;
}

/** A permitted call: held for its human step, or run now. */
const runAllowed = async (deps: CallToolDeps, execution: Execution, call: AllowedCall): Promise<ResultObject> => {
  const { decided, snapshot, system } = call;
  // Redaction changed something exactly when the arguments hold a secret.
  const sealed =
    execution.arguments_json !== decided.arguments.json
      ? await deps.sealer.seal(decided.arguments.json, execution.execution_id)
      : null;
  if (execution.status === 'pending_approval') {
    return holdCall(
      deps,
      { ...execution, sealed_arguments: sealed },
      snapshot.config.settings.approval_time,
      limitsFor(snapshot.config.settings.limits, call.agent).pendingCalls,
    );
  }
  // A catalog tool always has its system in the same snapshot; should one not, nothing is sent.
  if (system === undefined) return record(deps, unconfigured(deps, execution));
  const ran = await runDirect(
    deps,
    { ...execution, sealed_arguments: sealed },
    { tool: decided.tool, system, args: decided.arguments.value, traceparent: call.traceparent },
  );
  return toResultObject(ran);
};

/** A call whose system is missing from its snapshot: failed before anything was sent. */
const unconfigured = (deps: CallToolDeps, execution: Execution): Execution => {
  const at = isoAt(deps.clock);
  return {
    ...execution,
    status: 'failed',
    ...coded('tool_unavailable', 'unconfigured'),
    updated_at: at,
    history: [...execution.history, { status: 'failed', at }],
  };
};

/**
 * Holds a call for a decision: its place among the agent's waiting calls first, then its record and
 * its approval run together, so the reply waits on the network once. Every order is safe: a run
 * that comes before its record retries its first step until the record lands, and ends untouched
 * if it never does (RecordNotYetWritten); a record whose run did not start is started by recovery;
 * a place whose record never came is given back once the record can no longer land (ids.ts).
 */
const holdCall = async (
  deps: CallToolDeps,
  execution: Execution,
  approvalMs: number,
  pendingLimit: number,
): Promise<ResultObject> => {
  // The agent's place among its calls waiting for approval comes first (pending_calls).
  if (!(await takePendingPlace(deps, execution, pendingLimit))) {
    // Recorded like any refusal: what was asked, not the secrets, and no history of waiting.
    const { sealed_arguments: _sealed, history: _history, updated_at: _updated, ...refused } = execution;
    return record(
      deps,
      newExecutionRecord({
        ...refused,
        ...limitRefusals.pending(pendingLimit),
      }),
    );
  }
  const held: Execution = {
    ...execution,
    expires_at: new Date(Date.parse(execution.created_at) + approvalMs).toISOString(),
    // The customer's page, while their step is open: the link the agent shows them.
    approval_url: execution.decision?.step?.customer === true ? deps.customerUrl(execution.execution_id) : null,
  };
  const [recorded, started] = await Promise.allSettled([
    deps.store.create(held),
    deps.approvalRuns.start({
      execution_id: held.execution_id,
      agent_id: held.agent_id,
      timeout_seconds: approvalTimeoutSeconds(held, deps.clock.now()),
    }),
  ]);
  // Not recorded: a fault, answered as one (a started run finds no record and ends).
  if (recorded.status === 'rejected') throw recorded.reason;
  if (started.status === 'rejected') {
    deps.log.warn('the approval run did not start; recovery will start it', {
      execution_id: held.execution_id,
      error: errorText(started.reason),
    });
  }
  return toResultObject(held);
};
