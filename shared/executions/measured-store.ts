// The execution store, measured and watched: every decision and outcome of a call is written to the
// store by exactly one conditional write, so counting there counts each once, whoever wrote it (the
// agents' front, an approval run, the console, recovery) and however many raced (a lost race writes
// nothing and counts nothing); and telling there of each write lets a request waiting on a call
// (tasks/result) wake when it changes instead of reading it again and again. Neither costs I/O:
// the metrics port only buffers, and a told write only wakes listeners.
import {
  agentGroupOf,
  type DecisionKind,
  dimensionValue,
  type GatewayMetrics,
  noGroup,
  noPolicy,
  unlistedTool,
} from '../metrics.js';
import { approvalGroupOf } from './approval-load.js';
import type { CallKey, CallKeyClaim } from './call-keys.js';
import { type Execution, terminalStatuses } from './execution.js';
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
} from './store.js';

const elapsed = (from: string | null, to: string): number | null =>
  from === null ? null : Math.max(0, Date.parse(to) - Date.parse(from));

/** The call's tool as a dimension: an unlisted name is the agent's own text, so it is not one. */
const toolOf = (execution: Execution): string =>
  execution.code === 'unknown_tool' ? unlistedTool : dimensionValue(execution.tool, unlistedTool);

const decisionOf = (execution: Execution): DecisionKind | null => {
  const decision = execution.decision;
  if (decision === null) return null;
  if (decision.effect === 'deny') return 'denied';
  return decision.step === null ? 'run_now' : 'held';
};

/** Told of every record a write left (the local runtime's waits on a call: ./execution-writes.ts). */
export type WriteListener = (execution: Execution) => void;

class MeasuredExecutionStore implements ExecutionStore {
  constructor(
    private readonly inner: ExecutionStore,
    private readonly metrics: GatewayMetrics | null,
    private readonly onWritten: WriteListener | null,
  ) {}

  /** An applied write, told; any write's answer passes through. */
  private told(result: TransitionResult): TransitionResult {
    if (result.kind === 'applied') this.onWritten?.(result.execution);
    return result;
  }

  private settled(metrics: GatewayMetrics, execution: Execution): void {
    metrics.callSettled({
      tool: toolOf(execution),
      agentGroup: agentGroupOf(execution.agent_groups),
      outcome: execution.status,
    });
  }

  async create(execution: Execution): Promise<CreateResult> {
    const created = await this.inner.create(execution);
    const { metrics } = this;
    if (created.kind !== 'created' || metrics === null) return created;
    const decision = decisionOf(execution);
    if (decision !== null) {
      const policy = execution.decision?.determining[0]?.name;
      metrics.decided({ decision, policy: policy === undefined ? noPolicy : dimensionValue(policy, noPolicy) });
    }
    if (terminalStatuses.has(execution.status)) {
      this.settled(metrics, execution);
      // A read run at once is sent and recorded in one write: its latency is the send.
      if (execution.latency_ms !== null) metrics.sentSettled(execution.latency_ms);
    }
    return created;
  }

  async transition(key: ExecutionKey, change: TransitionRequest): Promise<TransitionResult> {
    const result = this.told(await this.inner.transition(key, change));
    const { metrics } = this;
    if (result.kind !== 'applied' || metrics === null) return result;
    const execution = result.execution;
    // Decided by a person (staff or the customer); an agent withdrawing its own call decides nothing.
    const decided = change.to === 'approved' || (change.to === 'rejected' && execution.code !== 'withdrawn');
    if (change.from === 'pending_approval' && decided) {
      metrics.heldDecided(elapsed(execution.created_at, change.at) ?? 0, approvalGroupOf(execution) ?? noGroup);
    }
    // A settlement changes what is known of a call counted when it ended unknown: not a second call.
    if (terminalStatuses.has(change.to) && change.settlement === undefined) {
      this.settled(metrics, execution);
      const sent = elapsed(execution.claimed_at, change.at);
      if (change.from === 'approved' && sent !== null) metrics.sentSettled(sent);
    }
    return result;
  }

  async claim(key: ExecutionKey, claim: ClaimRequest): Promise<TransitionResult> {
    const result = this.told(await this.inner.claim(key, claim));
    if (result.kind === 'applied' && this.metrics !== null) {
      const waited = elapsed(result.execution.decided_at, claim.at);
      if (waited !== null) this.metrics.decidedSent(waited);
    }
    return result;
  }

  getOwned(key: ExecutionKey): Promise<Execution | undefined> {
    return this.inner.getOwned(key);
  }

  get(executionId: string): Promise<Execution | undefined> {
    return this.inner.get(executionId);
  }

  listByAgent(agentId: string, options?: { limit?: number; cursor?: string }): Promise<ExecutionPage> {
    return this.inner.listByAgent(agentId, options);
  }

  async addApproval(key: ExecutionKey, approval: ApprovalRequest): Promise<TransitionResult> {
    return this.told(await this.inner.addApproval(key, approval));
  }

  async annotate(
    key: ExecutionKey,
    status: Execution['status'],
    patch: ExecutionPatch,
    onlyIfUnset?: keyof ExecutionPatch,
  ): Promise<TransitionResult> {
    return this.told(await this.inner.annotate(key, status, patch, onlyIfUnset));
  }

  listOpen(options?: { dueBefore?: string; limit?: number; cursor?: string }): Promise<ExecutionPage> {
    return this.inner.listOpen(options);
  }

  scanOpen(options?: { limit?: number; cursor?: string }): Promise<ExecutionPage> {
    return this.inner.scanOpen(options);
  }

  reservePending(agentId: string, executionId: string, limit: number): Promise<PendingReservation> {
    return this.inner.reservePending(agentId, executionId, limit);
  }

  releasePending(agentId: string, executionIds: readonly string[]): Promise<void> {
    return this.inner.releasePending(agentId, executionIds);
  }

  claimCallKey(key: CallKey, replacing?: string): Promise<CallKeyClaim> {
    return this.inner.claimCallKey(key, replacing);
  }

  countUnsettled(): Promise<number> {
    return this.inner.countUnsettled();
  }
}

/**
 * The store, measured when metrics are watched and telling `onWritten` of each write when something
 * waits on calls (the local runtime); as it is otherwise.
 */
export const measuredStore = (
  store: ExecutionStore,
  metrics: GatewayMetrics | null,
  onWritten: WriteListener | null = null,
): ExecutionStore =>
  metrics === null && onWritten === null ? store : new MeasuredExecutionStore(store, metrics, onWritten);
