// tools/call for catalog tools: find the tool this agent may see, put its arguments in canonical
// form, let policy decide, and run what may run now. Every call leaves an execution record.
//
// At most once: a write is recorded as claimed (status approved, with its deadline) before it is
// sent, and its outcome recorded after: two store writes. A claim left without an outcome (the
// gateway stopped) is settled as unknown, never sent again. A read is recorded once, with its
// outcome: it can be tried again.
import canonicalJson from 'canonicalize';
import { canonicalizeArguments } from '../arguments/canonicalize.js';
import type { StrictArguments } from '../arguments/strict-json.js';
import type { AgentIdentity } from '../auth/agent.js';
import type { CatalogTool, JsonObject } from '../catalog/tool.js';
import { type Clock, isoAt } from '../clock.js';
import type { ResolvedSystem } from '../config/load.js';
import type { ControlPlane } from '../control-plane/control-plane.js';
import type { GatewaySnapshot } from '../control-plane/snapshot.js';
import { resultMessages } from '../errors.js';
import { type DecisionRecord, type Execution, newExecutionRecord, toResultObject } from '../executions/execution.js';
import type { ExecutionStore } from '../executions/store.js';
import type { IdSource } from '../ids.js';
import { buildRequest, type CallOutcome, classify } from '../invoke/call.js';
import type { SystemClient } from '../invoke/system-client.js';
import { continueTrace } from '../invoke/trace.js';
import type { Log } from '../log.js';
import type { PolicyDecision } from '../policy/engine.js';
import type { ResultObject } from '../result.js';
import type { Sealer } from '../sealing.js';
import { holdsSecrets, redactSecrets, type SecretRules } from '../secrets.js';

/** Steps of a direct call, reported to an optional probe (the local runtime's fault injection). */
export type CallStep = 'claimed' | 'answered';

export interface CallToolDeps {
  readonly store: ExecutionStore;
  readonly ids: IdSource;
  readonly clock: Clock;
  readonly controlPlane: ControlPlane;
  readonly sealer: Sealer;
  readonly systems: SystemClient;
  readonly log: Log;
  readonly probe?: (step: CallStep, executionId: string) => void;
}

export interface CallRequestContext {
  /** The caller's W3C traceparent, continued into the system call. */
  readonly traceparent: string | null;
}

/** How long after its deadline an unsettled claim is declared unknown. */
export const claimGraceMs = 5_000;

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

const secretRules = (system: ResolvedSystem | undefined): SecretRules => ({
  names: new Set(system?.sensitive_fields ?? []),
});

type NewExecution = Pick<Execution, 'status' | 'code' | 'message'> &
  Partial<Omit<Execution, 'status' | 'code' | 'message'>>;

const newExecution = (deps: CallToolDeps, agent: AgentIdentity, tool: string, fields: NewExecution): Execution =>
  newExecutionRecord({
    execution_id: deps.ids.next(),
    agent_id: agent.id,
    customer_id: agent.customerId,
    tool: recordedName(tool),
    created_at: isoAt(deps.clock),
    ...fields,
  });

const record = async (deps: CallToolDeps, execution: Execution): Promise<ResultObject> => {
  await deps.store.create(execution);
  return toResultObject(execution);
};

const outcomeMessage = (outcome: CallOutcome): string | null => {
  if (outcome.status === 'succeeded') return null;
  if (outcome.status === 'unknown') {
    return 'The call was sent but no reliable answer came back; the system may or may not have done it. It will not be retried.';
  }
  return outcome.httpStatus !== null && outcome.httpStatus >= 400 && outcome.httpStatus < 500
    ? 'The system refused the call.'
    : 'The system gave no usable answer; nothing needs undoing, and the call can be tried again.';
};

export const callTool = async (
  deps: CallToolDeps,
  agent: AgentIdentity,
  name: string,
  args: StrictArguments,
  request: CallRequestContext = { traceparent: null },
): Promise<ResultObject> => {
  const state = await deps.controlPlane.current();
  const snapshot = state.kind === 'active' ? state.snapshot : null;
  const tool = snapshot?.catalog.byName.get(name);
  // A tool the agent cannot see answers exactly like one that does not exist.
  if (snapshot === null || tool === undefined || !snapshot.policy.isListed(agent, tool)) {
    return record(
      deps,
      newExecution(deps, agent, name, { status: 'denied', code: 'unknown_tool', message: resultMessages.unknown_tool }),
    );
  }
  const canonical = canonicalizeArguments(tool, args);
  if (!canonical.ok) {
    return record(
      deps,
      newExecution(deps, agent, tool.name, {
        status: 'denied',
        code: 'invalid_arguments',
        message: resultMessages.invalid_arguments,
        input_errors: [...canonical.errors],
      }),
    );
  }
  const system = snapshot.config.systems.find((candidate) => candidate.key === tool.systemKey);
  const rules = secretRules(system);
  const decision = snapshot.policy.decide(agent, tool, canonical.arguments.value);
  const trace = continueTrace(request.traceparent);
  const base = {
    arguments_json: canonicalJson(redactSecrets(canonical.arguments.value, tool.inputSchema, rules)) ?? '{}',
    arguments_hash: canonical.arguments.hash,
    decision: decisionRecord(decision, snapshot),
    trace_id: trace.traceId,
  };
  if (decision.kind === 'deny') {
    return record(
      deps,
      newExecution(deps, agent, tool.name, {
        status: 'denied',
        code: 'policy_denied',
        message: resultMessages.policy_denied,
        ...base,
      }),
    );
  }
  const execution = newExecution(deps, agent, tool.name, {
    status: decision.step === null ? 'approved' : 'pending_approval',
    code: null,
    message:
      decision.step === null
        ? null
        : decision.step.customer
          ? resultMessages.waiting_for_customer
          : resultMessages.waiting_for_staff,
    ...base,
  });
  const sealed = holdsSecrets(canonical.arguments.value, tool.inputSchema, rules)
    ? await deps.sealer.seal(canonical.arguments.json, execution.execution_id)
    : null;
  if (decision.step !== null || system === undefined) {
    return record(deps, { ...execution, sealed_arguments: sealed });
  }
  return runNow(
    deps,
    { ...execution, sealed_arguments: sealed },
    tool,
    system,
    canonical.arguments.value,
    trace.traceparent,
    rules,
  );
};

/** Sends a permitted call and records what came back. */
const runNow = async (
  deps: CallToolDeps,
  execution: Execution,
  tool: CatalogTool,
  system: ResolvedSystem,
  args: JsonObject,
  traceparent: string,
  rules: SecretRules,
): Promise<ResultObject> => {
  const outbound = buildRequest(tool, system, args, { executionId: execution.execution_id, traceparent });
  const log = { execution_id: execution.execution_id, trace_id: execution.trace_id, tool: tool.name };
  if (tool.access === 'write') {
    const claimedAt = deps.clock.now();
    const claimed: Execution = {
      ...execution,
      claimed_at: new Date(claimedAt).toISOString(),
      deadline_at: new Date(claimedAt + outbound.deadlineMs).toISOString(),
    };
    await deps.store.create(claimed);
    deps.probe?.('claimed', execution.execution_id);
    const started = deps.clock.now();
    const outcome = classify(await deps.systems.send(outbound), tool, system, rules);
    const latency = deps.clock.now() - started;
    deps.probe?.('answered', execution.execution_id);
    deps.log.info('system call finished', {
      ...log,
      status: outcome.status,
      code: outcome.code,
      http_status: outcome.httpStatus,
      latency_ms: latency,
    });
    const settled = await deps.store.transition(claimed, {
      from: 'approved',
      to: outcome.status,
      at: isoAt(deps.clock),
      patch: {
        code: outcome.code,
        message: outcomeMessage(outcome),
        result_json: outcome.status === 'succeeded' ? JSON.stringify(outcome.result) : null,
        http_status: outcome.httpStatus,
        latency_ms: latency,
      },
    });
    if (settled.kind === 'applied') return toResultObject(settled.execution);
    // Someone settled the claim first (it outlived its deadline): their answer stands.
    return settled.current === undefined ? toResultObject(claimed) : toResultObject(settled.current);
  }
  const started = deps.clock.now();
  const outcome = classify(await deps.systems.send(outbound), tool, system, rules);
  const latency = deps.clock.now() - started;
  deps.log.info('system call finished', {
    ...log,
    status: outcome.status,
    code: outcome.code,
    http_status: outcome.httpStatus,
    latency_ms: latency,
  });
  const at = isoAt(deps.clock);
  return record(deps, {
    ...execution,
    status: outcome.status,
    code: outcome.code,
    message: outcomeMessage(outcome),
    result_json: outcome.status === 'succeeded' ? JSON.stringify(outcome.result) : null,
    http_status: outcome.httpStatus,
    latency_ms: latency,
    updated_at: at,
    history: [...execution.history, { status: outcome.status, at }],
  });
};

/** A claim whose outcome never came (the gateway stopped mid-call) is settled as unknown. */
export const settleAbandonedClaim = async (
  deps: Pick<CallToolDeps, 'store' | 'clock'>,
  execution: Execution,
): Promise<Execution> => {
  if (execution.status !== 'approved' || execution.deadline_at === null) return execution;
  if (deps.clock.now() <= Date.parse(execution.deadline_at) + claimGraceMs) return execution;
  const settled = await deps.store.transition(execution, {
    from: 'approved',
    to: 'unknown',
    at: isoAt(deps.clock),
    patch: {
      code: 'interrupted',
      message: 'The call was sent but the gateway stopped before its answer was recorded; it will not be retried.',
    },
  });
  return settled.kind === 'applied' ? settled.execution : (settled.current ?? execution);
};
