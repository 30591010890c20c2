// The names the gateway's metrics are published under (see emf-metrics.ts), apart from the adapter
// so the stack's alarms and dashboard read the same names without loading Powertools.

/** The CloudWatch namespace of the gateway's metrics. */
export const metricsNamespace = 'ApprovalGateway';
/** The one `service` dimension every metric carries (Powertools adds it; the same in every function). */
export const metricsService = 'approval-gateway';

/** Metric names. */
export const metricNames = {
  /** Calls by Tool, AgentGroup and Outcome (a final status), counted once each. */
  calls: 'Calls',
  /** New calls by Decision (run_now, held, denied) and the Policy that determined it. */
  decisions: 'Decisions',
  /** Calls that ended unknown and are not settled yet: a gauge, published on each reconciler pass. */
  unknownOutcomes: 'UnknownOutcomes',
  expiries: 'Expiries',
  /** Time from a held call to its decision (ms): without dimensions, and by the Group that decided. */
  heldToDecided: 'HeldToDecided',
  /** Held calls waiting for a decision, by Group: a gauge, published on each pass over them. */
  pendingApprovals: 'PendingApprovals',
  decidedToSent: 'DecidedToSent',
  sentToSettled: 'SentToSettled',
  configurationAge: 'ConfigurationAge',
  /** The configuration's age as a percentage of its allowed staleness (100: stale). */
  configurationStaleness: 'ConfigurationStaleness',
  notificationFailures: 'NotificationFailures',
  approvalRunsLost: 'ApprovalRunsLost',
  /** MCP tools changed by their server since the operator reviewed them, once per change. */
  mcpToolChanges: 'McpToolChanges',
} as const;

/** Dimension names beyond `service`. */
export const dimensionNames = {
  tool: 'Tool',
  agentGroup: 'AgentGroup',
  outcome: 'Outcome',
  decision: 'Decision',
  policy: 'Policy',
  /** The group of approvers a held call counts for (its decider's, else the policy's). */
  group: 'Group',
} as const;
