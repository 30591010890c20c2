// Running the gateway in production: the alarms an operator acts on, each saying what it means and
// what to do, sent to one encrypted SNS topic (email subscribers from the deployment), and one
// dashboard with the gateway's own metrics (embedded-metric-format lines the functions write) and
// the state of every alarm.
//
// Each alarm carries its operator text (the operations page says the same). The alarms are
// grouped by what they watch (functions, approval runs, reconciler, tables, the gateway's own
// metrics), the dashboard by its rows.
import { Duration, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  type IWidget,
  MathExpression,
  Metric,
  Stats,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IRule } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { dimensionNames, metricNames, metricsNamespace, metricsService } from '../../shared/adapters/emf-names.js';

/** The period every alarm and graph reads. */
const period = Duration.minutes(5);

export interface OperationsProps {
  /** Every function of the stack, by the name its alarms carry (e.g. `Mcp`). */
  readonly functions: Readonly<Record<string, IFunction>>;
  /** The approval state machine (one run per held call). */
  readonly stateMachine: IStateMachine;
  /** The held-call steps function the approval runs invoke, and its timeout. */
  readonly steps: { readonly function: IFunction; readonly timeoutSeconds: number };
  /** The reconciler, the schedule that runs it, and how often it does. */
  readonly reconciler: { readonly function: IFunction; readonly schedule: IRule; readonly everyMinutes: number };
  /** The tables, by the name their alarms carry (e.g. `Executions`). */
  readonly tables: Readonly<Record<string, ITableV2>>;
  /** Addresses alarm notices are emailed to (each confirms once). @default none: subscribe to the topic yourself */
  readonly alarmEmails?: readonly string[];
}

/** One of the gateway's own metrics (namespace ApprovalGateway). */
const gatewayMetric = (metricName: string, statistic: string, label?: string): Metric =>
  new Metric({
    namespace: metricsNamespace,
    metricName,
    dimensionsMap: { service: metricsService },
    statistic,
    period,
    ...(label === undefined ? {} : { label }),
  });

/** Every series of a metric with per-call dimensions, found by a search (graphs only), as `statistic` (Sum by default). */
const searchOf = (
  metricName: string,
  dimensions: readonly string[],
  label: string,
  statistic = 'Sum',
  filled = false,
): MathExpression => {
  const search = `SEARCH('{${metricsNamespace},service,${dimensions.join(',')}} MetricName="${metricName}"', '${statistic}', ${period.toSeconds()})`;
  return new MathExpression({
    // A gauge published only while it is above zero reads 0 where a period has no point.
    expression: filled ? `FILL(${search}, 0)` : search,
    usingMetrics: {},
    label,
    period,
  });
};

/** Options of one alarm: at or above 1 in one period, missing data not breaching, unless said. */
interface AlarmOptions {
  readonly threshold?: number;
  readonly below?: boolean;
  readonly evaluationPeriods?: number;
  readonly missing?: TreatMissingData;
  readonly description: string;
}

/** A latency metric of the gateway's own as its median and 99th percentile. */
const percentiles = (metricName: string, label: string): Metric[] => [
  gatewayMetric(metricName, Stats.p(50), `${label} p50`),
  gatewayMetric(metricName, Stats.p(99), `${label} p99`),
];

/** The dashboard's title and the state of every alarm. */
const summaryRows = (alarms: readonly Alarm[]): IWidget[][] => [
  [
    new TextWidget({
      markdown:
        '# Approval Gateway\nCalls, decisions and held-call times from the functions (namespace `ApprovalGateway`); every alarm below says what it means and what to do.',
      width: 24,
      height: 2,
    }),
  ],
  [new AlarmStatusWidget({ title: 'Alarms', alarms: [...alarms], width: 24, height: 6 })],
];

/** What agents asked and what was decided, per call dimension. */
const callsRow = (): IWidget[] => [
  new GraphWidget({
    title: 'Calls by tool, agent group and outcome',
    left: [
      searchOf(metricNames.calls, [dimensionNames.tool, dimensionNames.agentGroup, dimensionNames.outcome], 'Calls'),
    ],
    width: 12,
  }),
  new GraphWidget({
    title: 'Decisions by policy (run now, held, denied)',
    left: [searchOf(metricNames.decisions, [dimensionNames.decision, dimensionNames.policy], 'Decisions')],
    width: 12,
  }),
];

/** How long held calls take, and the events an operator looks into. */
const heldCallsRow = (): IWidget[] => [
  new GraphWidget({
    title: 'Held calls: held to decided, decided to sent, sent to settled (ms)',
    left: [
      ...percentiles(metricNames.heldToDecided, 'Held to decided'),
      ...percentiles(metricNames.decidedToSent, 'Decided to sent'),
      ...percentiles(metricNames.sentToSettled, 'Sent to settled'),
    ],
    width: 12,
  }),
  new GraphWidget({
    title: 'Expiries, unknown outcomes, notification failures, approval runs lost, MCP tool changes',
    left: [
      gatewayMetric(metricNames.expiries, Stats.SUM, 'Expiries'),
      gatewayMetric(metricNames.unknownOutcomes, Stats.MAXIMUM, 'Unknown outcomes not settled'),
      gatewayMetric(metricNames.notificationFailures, Stats.SUM, 'Notification failures'),
      gatewayMetric(metricNames.approvalRunsLost, Stats.SUM, 'Approval runs lost'),
      gatewayMetric(metricNames.mcpToolChanges, Stats.SUM, 'MCP tool changes held'),
    ],
    width: 12,
  }),
];

/**
 * The approval load: how long each group takes to decide (p50, p90), how many calls wait for each
 * group now (the gauge each reconciler pass publishes), and the share of held calls that ended
 * expired rather than decided by a person.
 */
const approvalLoadRow = (): IWidget[] => {
  const group = [dimensionNames.group];
  const expiries = gatewayMetric(metricNames.expiries, Stats.SUM);
  const decided = gatewayMetric(metricNames.heldToDecided, Stats.SAMPLE_COUNT);
  return [
    new GraphWidget({
      title: 'Time from request to decision per group, p50 and p90 (ms)',
      left: [
        searchOf(metricNames.heldToDecided, group, 'p50', Stats.p(50)),
        searchOf(metricNames.heldToDecided, group, 'p90', Stats.p(90)),
      ],
      width: 8,
    }),
    new GraphWidget({
      title: 'Calls waiting for a decision per group',
      left: [searchOf(metricNames.pendingApprovals, group, 'Pending', Stats.MAXIMUM, true)],
      width: 8,
    }),
    new GraphWidget({
      title: 'Held calls that expired (% of those decided or expired)',
      left: [
        new MathExpression({
          expression: '100 * expired / (expired + decided)',
          usingMetrics: { expired: expiries, decided },
          label: 'Expired share',
          period,
        }),
      ],
      width: 8,
    }),
  ];
};

/** The configuration's age, and the approval runs. */
const configurationAndRunsRow = (stateMachine: IStateMachine): IWidget[] => [
  new GraphWidget({
    title: 'Configuration age (% of allowed staleness; 100 = stale)',
    left: [gatewayMetric(metricNames.configurationStaleness, Stats.MAXIMUM, 'Configuration staleness')],
    right: [gatewayMetric(metricNames.configurationAge, Stats.MAXIMUM, 'Configuration age (s)')],
    leftAnnotations: [
      { value: 50, label: 'alarm' },
      { value: 100, label: 'stale' },
    ],
    width: 12,
  }),
  new GraphWidget({
    title: 'Approval runs',
    left: [
      stateMachine.metricStarted({ period, statistic: Stats.SUM }),
      stateMachine.metricSucceeded({ period, statistic: Stats.SUM }),
      stateMachine.metricFailed({ period, statistic: Stats.SUM }),
    ],
    width: 12,
  }),
];

/** Every function's errors, and every table's throttled requests. */
const faultsRow = (functions: OperationsProps['functions'], tableThrottles: readonly IMetric[]): IWidget[] => [
  new GraphWidget({
    title: 'Function errors',
    left: Object.entries(functions).map(([name, fn]) => fn.metricErrors({ period, statistic: Stats.SUM, label: name })),
    width: 12,
  }),
  new GraphWidget({
    title: 'DynamoDB throttled requests',
    left: [...tableThrottles],
    width: 12,
  }),
];

/** A table's read and write throttle events, summed (ids unique per table: one graph shows every table's). */
const tableThrottlesOf = (name: string, table: ITableV2): MathExpression => {
  const throttle = (metricName: string) =>
    new Metric({
      namespace: 'AWS/DynamoDB',
      metricName,
      dimensionsMap: { TableName: table.tableName },
      statistic: Stats.SUM,
      period,
    });
  return new MathExpression({
    expression: `${name.toLowerCase()}Reads + ${name.toLowerCase()}Writes`,
    usingMetrics: {
      [`${name.toLowerCase()}Reads`]: throttle('ReadThrottleEvents'),
      [`${name.toLowerCase()}Writes`]: throttle('WriteThrottleEvents'),
    },
    label: `${name} throttled requests`,
    period,
  });
};

export class Operations extends Construct {
  /** Alarm notices (ALARM and back to OK) go here. */
  readonly alarmTopic: Topic;
  /** Every alarm, by its construct id. */
  readonly alarms: ReadonlyMap<string, Alarm>;
  readonly dashboard: Dashboard;
  private readonly alarmsById = new Map<string, Alarm>();
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    this.alarmTopic = this.topic(props.alarmEmails ?? []);
    this.action = new SnsAction(this.alarmTopic);
    this.functionAlarms(props.functions);
    this.approvalRunAlarms(props);
    this.reconcilerAlarms(props.reconciler);
    const tableThrottles = this.tableAlarms(props.tables);
    this.gatewayAlarms();
    this.alarms = this.alarmsById;
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${Stack.of(this).stackName}-operations`,
      widgets: [
        ...summaryRows([...this.alarmsById.values()]),
        callsRow(),
        heldCallsRow(),
        approvalLoadRow(),
        configurationAndRunsRow(props.stateMachine),
        faultsRow(props.functions, tableThrottles),
      ],
    });
  }

  /**
   * The alarm topic. CloudWatch cannot publish to a topic under the AWS managed SNS key: a key of
   * our own, which CloudWatch of this account may use to publish.
   */
  private topic(alarmEmails: readonly string[]): Topic {
    const key = new Key(this, 'AlarmTopicKey', {
      description: 'Approval Gateway: alarm notices',
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: 'Approval Gateway alarms',
      masterKey: key,
      enforceSSL: true,
    });
    for (const email of alarmEmails) topic.addSubscription(new EmailSubscription(email));
    return topic;
  }

  /** One alarm, notifying the topic when it fires and when it is back to OK. */
  private alarm(alarmId: string, metric: IMetric, options: AlarmOptions): Alarm {
    const created = new Alarm(this, alarmId, {
      alarmName: `${Stack.of(this).stackName}-${alarmId}`,
      alarmDescription: options.description,
      metric,
      threshold: options.threshold ?? 1,
      comparisonOperator: options.below
        ? ComparisonOperator.LESS_THAN_THRESHOLD
        : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      treatMissingData: options.missing ?? TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(this.action);
    created.addOkAction(this.action);
    this.alarmsById.set(alarmId, created);
    return created;
  }

  private functionAlarms(functions: OperationsProps['functions']): void {
    for (const [name, fn] of Object.entries(functions)) {
      this.alarm(`${name}Errors`, fn.metricErrors({ period, statistic: Stats.SUM }), {
        description: `The ${name} function failed (an unhandled error or a Lambda timeout). Agents, approvers or approval runs may have received a generic error. Open the function's log group, find the "request failed" or error lines of the period, and fix the cause (a table, key or system it cannot reach; a deployment fault). Failed approval-run steps are retried, and the reconciler brings lost calls forward.`,
      });
      this.alarm(`${name}Throttles`, fn.metricThrottles({ period, statistic: Stats.SUM }), {
        description: `Lambda refused to run the ${name} function (throttled): the account's or the function's concurrency is exhausted. Requests were refused or delayed. Raise the account's concurrency quota or give the function reserved concurrency, and check for a runaway client (the per-agent limits bound one agent per instance).`,
      });
    }
  }

  private approvalRunAlarms({ stateMachine, steps }: OperationsProps): void {
    this.alarm('ApprovalRunsFailed', stateMachine.metricFailed({ period, statistic: Stats.SUM }), {
      description:
        "An approval run (one held call's state machine execution) failed: a step kept failing after its retries, or the run step timed out. The call stays as recorded (pending or approved): the reconciler starts a lost run again, hands a decision over or runs an approved call itself. Open the failed execution in the Step Functions console to see which step failed, and the held-call steps function's log for why.",
    });
    this.alarm('ApprovalRunsTimedOut', stateMachine.metricTimedOut({ period, statistic: Stats.SUM }), {
      description:
        'An approval run timed out as a whole. The approval wait itself ends in Expire, not here, so this means a run outlived its state machine limits. Check the execution in the Step Functions console; the reconciler settles the call.',
    });
    const nearTimeout = Math.floor(steps.timeoutSeconds * 0.8);
    this.alarm('ApprovalStepNearTimeout', steps.function.metricDuration({ period, statistic: Stats.MAXIMUM }), {
      threshold: nearTimeout * 1000,
      description: `A held-call step (register, execute or expire) ran for ${nearTimeout} s or more, 80% of its ${steps.timeoutSeconds} s limit. An approved call being sent is the long step: a system answering slowly, near its timeout. Past the limit the step fails and the call ends unknown (a write) or failed (a read). Check the systems' timeouts in the configuration and the system's health.`,
    });
  }

  private reconcilerAlarms(reconciler: OperationsProps['reconciler']): void {
    const runsPerPeriod = Math.max(1, Math.floor(period.toMinutes() / reconciler.everyMinutes));
    this.alarm('ReconcilerMissedRuns', reconciler.function.metricInvocations({ period, statistic: Stats.SUM }), {
      threshold: 1,
      below: true,
      evaluationPeriods: 3,
      missing: TreatMissingData.BREACHING,
      description: `The reconciler did not run for 15 minutes (it should run ${runsPerPeriod} times every 5 minutes). Lost decisions, approval runs that never started, overdue expiries and stale claims are not brought forward while it is down (approval runs that work still do their job). Check that the schedule rule is enabled and that its target is the reconciler function.`,
    });
    this.alarm(
      'ReconcilerScheduleFailed',
      new Metric({
        namespace: 'AWS/Events',
        metricName: 'FailedInvocations',
        dimensionsMap: { RuleName: reconciler.schedule.ruleName },
        statistic: Stats.SUM,
        period,
      }),
      {
        description:
          "EventBridge could not invoke the reconciler on its schedule (FailedInvocations). Check the rule's target and the function's resource policy; the next minute's run retries.",
      },
    );
  }

  /** An alarm on each table's throttled requests; returns their metrics for the dashboard. */
  private tableAlarms(tables: OperationsProps['tables']): MathExpression[] {
    return Object.entries(tables).map(([name, table]) => {
      const throttles = tableThrottlesOf(name, table);
      this.alarm(`${name}TableThrottles`, throttles, {
        description: `DynamoDB throttled requests on the ${name} table (on-demand capacity has per-partition and account limits). Calls may have failed with a generic error or been retried. Check the table's metrics for a hot partition or a burst beyond twice the previous peak, and the account's table throughput quotas.`,
      });
      return throttles;
    });
  }

  /** Alarms on the gateway's own metrics (embedded-metric-format lines the functions write). */
  private gatewayAlarms(): void {
    this.alarm('ConfigurationStale', gatewayMetric(metricNames.configurationStaleness, Stats.MAXIMUM), {
      threshold: 50,
      description:
        'The configuration in use has not been confirmed by the configuration table for half its allowed staleness (settings.allowed_staleness). At 100% the gateway offers agents only get_execution_status and refuses every other tool. Check that the functions can read the configuration table, and that the last pushed configuration is valid here (the functions log "the pushed configuration is not valid here"); push a good one with npm run config:push.',
    });
    // A gauge the reconciler publishes on every pass: a period without it (the reconciler failing,
    // which its own alarms tell) leaves the alarm as it was rather than clearing it.
    this.alarm('UnknownOutcomes', gatewayMetric(metricNames.unknownOutcomes, Stats.MAXIMUM), {
      missing: TreatMissingData.IGNORE,
      description:
        'Calls ended unknown and are not settled yet: a write was sent to a system but no reliable answer came (timeout, dropped connection, 5xx, redirect, too large or unreadable answer), or the gateway stopped between sending it and recording its outcome. The gateway never retries it. List them (npm run executions -- --table <executions table> --status unknown), check in the system whether each happened, and settle each with npm run executions -- settle <execution id> --outcome succeeded|failed --reason "<what you found>" --table <executions table>. The alarm stays on until the last one is settled.',
    });
    this.alarm('NotificationFailures', gatewayMetric(metricNames.notificationFailures, Stats.SUM), {
      description:
        'A notification channel (a webhook of the configuration, or the notice bus) failed to deliver a held-call notice; the call still waits in the console and the other channels were told. Find "a notification channel failed" in the held-call steps log for the error, and fix the webhook URL or its service (or the bus permissions).',
    });
    this.alarm('ApprovalRunsLost', gatewayMetric(metricNames.approvalRunsLost, Stats.SUM), {
      description:
        'The reconciler could not give a held call a running approval run: its runs kept ending before they registered (it restarts one at most 3 times, under a new name), or Step Functions refused to start one. Approvers were not notified of the call, which still expires at its time. Find "a held call has no approval run" in the reconciler log for the call and reason; check the approval state machine\'s failed executions (ApprovalRunsFailed) and the held-call steps function\'s errors, fix the cause, and ask the agent to make the call again.',
    });
  }
}
