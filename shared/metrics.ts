// The metrics port: what the gateway counts and times for its operators. The domain says what
// happened; an adapter (CloudWatch embedded metric format in the functions and locally) names the
// metrics. Nothing here carries an execution id, an agent id or an argument: every dimension is
// drawn from a small set (tools of the catalog, agent groups, statuses, policy ids).
import type { Clock } from './clock.js';
import type { GatewaySnapshot } from './control-plane/snapshot.js';
import type { ExecutionStatus } from './result.js';

/** What policy did with a new call: run it now, hold it for a human, or refuse it. */
export type DecisionKind = 'run_now' | 'held' | 'denied';

export interface GatewayMetrics {
  /** A call reached its outcome (a final status), counted once: by the write that recorded it. */
  callSettled(call: { readonly tool: string; readonly agentGroup: string; readonly outcome: ExecutionStatus }): void;
  /** Policy decided a new call; `policy` is the first policy that determined it (or "(none)"). */
  decided(decision: { readonly decision: DecisionKind; readonly policy: string }): void;
  /**
   * A held call was decided (approved or rejected), this long after it was made, by a person of
   * this group (shared/executions/approval-load.ts says which group a call counts for).
   */
  heldDecided(ms: number, group: string): void;
  /** How many held calls wait for this group's decision now (a gauge, published on each pass over them). */
  pendingApprovals(group: string, count: number): void;
  /** An approved call was claimed for sending, this long after it was decided. */
  decidedSent(ms: number): void;
  /** A sent call's outcome was recorded, this long after it was claimed for sending. */
  sentSettled(ms: number): void;
  /**
   * How old the configuration in use is (since the source last confirmed it) against the allowed
   * staleness; `ageMs` is Infinity and `allowedMs` null when none was ever loaded.
   */
  configurationAge(ageMs: number, allowedMs: number | null): void;
  /**
   * How many calls ended unknown and wait for an operator to settle them, counted now (a gauge the
   * reconciler publishes on each pass: the figure stays up until every one is settled).
   */
  unsettledOutcomes(count: number): void;
  /** A notification channel failed to deliver a held-call notice. */
  notificationFailed(): void;
  /**
   * Recovery could not give a held call a running approval run: starting one was refused, or its
   * runs kept ending before they registered. The call waits unseen by approvers until it expires.
   */
  approvalRunLost(): void;
  /**
   * An MCP server changed a tool since the operator reviewed it (its access, text or schemas):
   * counted once per change; the tool is held as a write until the change is accepted.
   */
  mcpToolChanged(): void;
}

/** Counts nothing: for tools and tests that do not watch the gateway. */
export const noMetrics: GatewayMetrics = {
  callSettled: () => undefined,
  decided: () => undefined,
  heldDecided: () => undefined,
  pendingApprovals: () => undefined,
  decidedSent: () => undefined,
  sentSettled: () => undefined,
  configurationAge: () => undefined,
  unsettledOutcomes: () => undefined,
  notificationFailed: () => undefined,
  approvalRunLost: () => undefined,
  mcpToolChanged: () => undefined,
};

/** The tool dimension of a call the gateway did not list: the name is the agent's text, never a dimension. */
export const unlistedTool = '(unlisted)';

/** The policy dimension of a decision no policy determined (no permit applied). */
export const noPolicy = '(none)';

/** The dimension of an agent with no group, or of a call that counts for no group of approvers. */
export const noGroup = '(none)';

/** How long a dimension value may be: longer ones are cut (configuration names are short). */
const maxDimensionLength = 100;

/** A dimension value as recorded: never empty, bounded. */
export const dimensionValue = (value: string, empty: string): string =>
  value.length === 0 ? empty : value.slice(0, maxDimensionLength);

/** One dimension for an agent's groups (as its token named them): sorted, joined, bounded. */
export const agentGroupOf = (groups: readonly string[] | null): string =>
  dimensionValue([...(groups ?? [])].sort().join(','), noGroup);

/** A control plane that can say when its configuration was last confirmed by its source. */
export interface ConfigurationFreshness {
  readonly lastSyncedAt: number;
  readonly lastGood: GatewaySnapshot | null;
}

export const hasFreshness = (value: object): value is ConfigurationFreshness =>
  'lastSyncedAt' in value && typeof value.lastSyncedAt === 'number' && 'lastGood' in value;

/** Records the age of the configuration in use against its allowed staleness. */
export const sampleConfigurationAge = (source: ConfigurationFreshness, clock: Clock, metrics: GatewayMetrics): void => {
  const snapshot = source.lastGood;
  metrics.configurationAge(
    snapshot === null ? Number.POSITIVE_INFINITY : clock.now() - source.lastSyncedAt,
    snapshot === null ? null : snapshot.config.settings.allowed_staleness,
  );
};
