// The metrics port as CloudWatch embedded metric format (Powertools Metrics): metrics are log lines
// that CloudWatch turns into metrics, with no call of their own. Recording only adds to a buffer;
// `flush` (once per Lambda invocation, or on a timer in a long-running process) writes one line per
// distinct set of dimension values, which is the fewest EMF allows.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { type DecisionKind, dimensionValue, type GatewayMetrics, noGroup } from '../metrics.js';
import type { ExecutionStatus } from '../result.js';
import { dimensionNames, metricNames, metricsNamespace, metricsService } from './emf-names.js';

export { metricsNamespace } from './emf-names.js';

type Dimensions = Readonly<Record<string, string>>;
type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

interface Group {
  readonly dimensions: Dimensions;
  /** The dimension sets the values are published under (each a list of dimension names). */
  readonly sets: readonly (readonly string[])[];
  readonly metrics: Map<string, { readonly unit: Unit; readonly values: number[]; readonly sum: boolean }>;
}

/** Powertools keeps at most this many values of one metric per line. */
const maxValuesPerLine = 100;

export interface EmfMetricsOptions {
  /**
   * Where each EMF line goes. @default Powertools' own standard output (what Lambda ingests), which
   * honours POWERTOOLS_METRICS_DISABLED
   */
  readonly write?: (line: string) => void;
}

export class EmfMetrics implements GatewayMetrics {
  private readonly groups = new Map<string, Group>();
  private readonly metrics: Metrics;

  constructor(private readonly options: EmfMetricsOptions = {}) {
    this.metrics = new Metrics({ namespace: metricsNamespace, serviceName: metricsService });
  }

  private add(
    dimensions: Dimensions,
    sets: readonly (readonly string[])[],
    name: string,
    unit: Unit,
    value: number,
    sum = false,
  ): void {
    const key = JSON.stringify(dimensions);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { dimensions, sets, metrics: new Map() };
      this.groups.set(key, group);
    }
    let metric = group.metrics.get(name);
    if (metric === undefined) {
      metric = { unit, values: [], sum };
      group.metrics.set(name, metric);
    }
    if (sum && metric.values.length > 0) metric.values[0] = (metric.values[0] ?? 0) + value;
    else metric.values.push(value);
    if (metric.values.length >= maxValuesPerLine) this.flush();
  }

  private count(name: string, dimensions: Dimensions = {}, sets: readonly (readonly string[])[] = []): void {
    this.add(dimensions, sets, name, MetricUnit.Count, 1, true);
  }

  callSettled(call: { readonly tool: string; readonly agentGroup: string; readonly outcome: ExecutionStatus }): void {
    const { tool, agentGroup, outcome } = dimensionNames;
    this.count(metricNames.calls, { [tool]: call.tool, [agentGroup]: call.agentGroup, [outcome]: call.outcome }, [
      [tool, agentGroup, outcome],
    ]);
    // An alarm reads this one without dimensions (unknown outcomes are a gauge: unsettledOutcomes).
    if (call.outcome === 'expired') this.count(metricNames.expiries);
  }

  decided(decision: { readonly decision: DecisionKind; readonly policy: string }): void {
    const names = dimensionNames;
    this.count(metricNames.decisions, { [names.decision]: decision.decision, [names.policy]: decision.policy }, [
      [names.decision, names.policy],
    ]);
  }

  /** One value under the group of approvers it concerns. */
  private byGroup(name: string, group: string, unit: Unit, value: number): void {
    const dimension = dimensionNames.group;
    this.add({ [dimension]: dimensionValue(group, noGroup) }, [[dimension]], name, unit, value);
  }

  heldDecided(ms: number, group: string): void {
    // Once as a whole (the alarms and the overall graph) and once by the group that decided.
    this.add({}, [], metricNames.heldToDecided, MetricUnit.Milliseconds, ms);
    this.byGroup(metricNames.heldToDecided, group, MetricUnit.Milliseconds, ms);
  }

  pendingApprovals(group: string, count: number): void {
    this.byGroup(metricNames.pendingApprovals, group, MetricUnit.Count, count);
  }

  decidedSent(ms: number): void {
    this.add({}, [], metricNames.decidedToSent, MetricUnit.Milliseconds, ms);
  }

  sentSettled(ms: number): void {
    this.add({}, [], metricNames.sentToSettled, MetricUnit.Milliseconds, ms);
  }

  configurationAge(ageMs: number, allowedMs: number | null): void {
    // 100 % is the allowed staleness: from there on agents see only get_execution_status.
    const staleness = allowedMs === null || allowedMs <= 0 ? 100 : Math.min(100, (ageMs / allowedMs) * 100);
    this.add({}, [], metricNames.configurationStaleness, MetricUnit.Percent, Math.round(staleness * 10) / 10);
    if (Number.isFinite(ageMs)) {
      this.add({}, [], metricNames.configurationAge, MetricUnit.Seconds, Math.round(ageMs / 1000));
    }
  }

  unsettledOutcomes(count: number): void {
    this.add({}, [], metricNames.unknownOutcomes, MetricUnit.Count, count);
  }

  notificationFailed(): void {
    this.count(metricNames.notificationFailures);
  }

  approvalRunLost(): void {
    this.count(metricNames.approvalRunsLost);
  }

  mcpToolChanged(): void {
    this.count(metricNames.mcpToolChanges);
  }

  /** Writes what was recorded since the last flush: one EMF line per distinct set of dimension values. */
  flush(): void {
    const groups = [...this.groups.values()];
    this.groups.clear();
    for (const group of groups) {
      for (const set of group.sets) {
        this.metrics.addDimensions(Object.fromEntries(set.map((name) => [name, group.dimensions[name] ?? ''])));
      }
      for (const [name, metric] of group.metrics) {
        for (const value of metric.values) this.metrics.addMetric(name, metric.unit, value);
      }
      this.publish();
    }
  }

  private publish(): void {
    const write = this.options.write;
    if (write === undefined) {
      this.metrics.publishStoredMetrics();
      return;
    }
    try {
      write(JSON.stringify(this.metrics.serializeMetrics()));
    } finally {
      this.metrics.clearMetrics();
      this.metrics.clearDimensions();
    }
  }
}
