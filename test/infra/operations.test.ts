// CDK assertion tests for running the gateway: every alarm (its metric, threshold and the SNS action
// both ways), the encrypted alarm topic and its email subscribers from context, the dashboard, and the
// held-call notices by email, present exactly when approverEmails is set; cdk-nag stays clean.
//
// Long: one assertion block per alarm family, the topic, the dashboard and the email notices.
import { EventBus } from 'aws-cdk-lib/aws-events';
import { describe, expect, it } from 'vitest';
import { ApprovalStateMachine } from '../../infra/constructs/approval-state-machine.js';
import { ApproverConsole } from '../../infra/constructs/approver-console.js';
import { EmailNotices } from '../../infra/constructs/email-notices.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { GatewayTable } from '../../infra/constructs/gateway-table.js';
import { Operations } from '../../infra/constructs/operations.js';
import { metricNames, metricsNamespace, metricsService } from '../../shared/adapters/emf-names.js';
import { verifies } from '../support/requirements.js';
import {
  asList,
  child,
  isObject,
  type JsonObject,
  logicalIdOf,
  nagFindings,
  propertiesOf,
  resourceProperties,
  resourcesOf,
  type Synthesized,
  synthesize,
} from './synthesis.js';

const plain = synthesize();
const withEmails = synthesize({
  alarmEmails: ['ops@example.com', 'oncall@example.com'],
  approverEmails: ['finance@example.com'],
});

const operationsOf = ({ stack }: Synthesized) => child(stack, 'Operations', Operations);

/** The alarm's properties, by its construct id. */
const alarmProperties = (synthesized: Synthesized, id: string): JsonObject => {
  const alarm = operationsOf(synthesized).alarms.get(id);
  if (alarm === undefined) throw new Error(`no alarm ${id}`);
  return resourceProperties(synthesized.template, logicalIdOf(alarm));
};

const functionIds = (synthesized: Synthesized): Record<string, string> => {
  const { stack } = synthesized;
  const approvals = child(stack, 'Approvals', ApprovalStateMachine);
  return {
    Mcp: logicalIdOf(child(stack, 'Mcp', GatewayFunction).function),
    ResourceMetadata: logicalIdOf(child(stack, 'ResourceMetadata', GatewayFunction).function),
    HeldCallSteps: logicalIdOf(approvals.steps.function),
    Reconciler: logicalIdOf(approvals.reconciler.function),
    Console: logicalIdOf(child(stack, 'Console', ApproverConsole).console.function),
    AgentAuthorizer: logicalIdOf(child(stack, 'AgentAuthorizer', GatewayFunction).function),
    CallToolSocket: logicalIdOf(child(stack, 'CallToolSocket', GatewayFunction).function),
  };
};

const topicRef = (synthesized: Synthesized) => ({ Ref: logicalIdOf(operationsOf(synthesized).alarmTopic) });

describe('the alarms', () => {
  const { stack } = plain;

  it(verifies('ops.alarms', "alarms on each function's errors and throttles, from the first one"), () => {
    for (const [name, logicalId] of Object.entries(functionIds(plain))) {
      for (const metricName of ['Errors', 'Throttles']) {
        expect(alarmProperties(plain, `${name}${metricName}`)).toMatchObject({
          Namespace: 'AWS/Lambda',
          MetricName: metricName,
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId } }],
          Statistic: 'Sum',
          Period: 300,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          EvaluationPeriods: 1,
          TreatMissingData: 'notBreaching',
        });
      }
    }
  });

  it(verifies('ops.alarms', 'alarms on failed and timed-out approval runs, and on a run step near its limit'), () => {
    const approvals = child(stack, 'Approvals', ApprovalStateMachine);
    const stateMachine = { Name: 'StateMachineArn', Value: { Ref: logicalIdOf(approvals.stateMachine) } };
    expect(alarmProperties(plain, 'ApprovalRunsFailed')).toMatchObject({
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsFailed',
      Dimensions: [stateMachine],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(alarmProperties(plain, 'ApprovalRunsTimedOut')).toMatchObject({
      MetricName: 'ExecutionsTimedOut',
      Dimensions: [stateMachine],
      Threshold: 1,
    });
    expect(alarmProperties(plain, 'ApprovalStepNearTimeout')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Duration',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionIds(plain).HeldCallSteps } }],
      Statistic: 'Maximum',
      Threshold: approvals.runTimeoutSeconds * 0.8 * 1000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it(
    verifies('ops.alarms', 'alarms when the reconciler misses its runs for three periods, or its schedule fails'),
    () => {
      const approvals = child(stack, 'Approvals', ApprovalStateMachine);
      expect(alarmProperties(plain, 'ReconcilerMissedRuns')).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Invocations',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionIds(plain).Reconciler } }],
        Statistic: 'Sum',
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        EvaluationPeriods: 3,
        // No invocation at all leaves no data point: that is the failure.
        TreatMissingData: 'breaching',
      });
      expect(alarmProperties(plain, 'ReconcilerScheduleFailed')).toMatchObject({
        Namespace: 'AWS/Events',
        MetricName: 'FailedInvocations',
        Dimensions: [{ Name: 'RuleName', Value: { Ref: logicalIdOf(approvals.schedule) } }],
        Threshold: 1,
      });
    },
  );

  it(verifies('ops.alarms', 'alarms on read and write throttles of both tables'), () => {
    for (const name of ['Executions', 'Config']) {
      const table = { Ref: child(stack, name, GatewayTable).tableLogicalId };
      const properties = alarmProperties(plain, `${name}TableThrottles`);
      expect(properties).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
      const queries = asList(properties.Metrics).filter(isObject);
      const stats = queries.flatMap((query) => (isObject(query.MetricStat) ? [query.MetricStat] : []));
      expect(
        stats.map((stat) => (isObject(stat.Metric) ? [stat.Metric.MetricName, stat.Metric.Dimensions] : null)).sort(),
      ).toEqual(
        [
          ['ReadThrottleEvents', [{ Name: 'TableName', Value: table }]],
          ['WriteThrottleEvents', [{ Name: 'TableName', Value: table }]],
        ].sort(),
      );
      const expression = queries.find((query) => typeof query.Expression === 'string');
      expect(expression?.ReturnData).not.toBe(false);
      expect(String(expression?.Expression)).toMatch(/Reads \+ \w+Writes$/);
    }
  });

  it(
    verifies(
      ['ops.alarms', 'settle.unknown-outcomes-gauge'],
      "alarms on the gateway's own metrics: staleness past half, any unknown outcome not settled, any notification failure",
    ),
    () => {
      const gateway = { Namespace: metricsNamespace, Dimensions: [{ Name: 'service', Value: metricsService }] };
      expect(alarmProperties(plain, 'ConfigurationStale')).toMatchObject({
        ...gateway,
        MetricName: metricNames.configurationStaleness,
        Statistic: 'Maximum',
        Threshold: 50,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(alarmProperties(plain, 'UnknownOutcomes')).toMatchObject({
        ...gateway,
        MetricName: metricNames.unknownOutcomes,
        Statistic: 'Maximum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        // A gauge: a period without it leaves the alarm on until the last unknown call is settled.
        TreatMissingData: 'ignore',
      });
      expect(alarmProperties(plain, 'NotificationFailures')).toMatchObject({
        ...gateway,
        MetricName: metricNames.notificationFailures,
        Statistic: 'Sum',
        Threshold: 1,
      });
    },
  );

  it(
    verifies('deploy.approval-run-restart', 'alarms on any held call the reconciler could not give an approval run'),
    () => {
      expect(metricNames.approvalRunsLost).toBe('ApprovalRunsLost');
      expect(alarmProperties(plain, 'ApprovalRunsLost')).toMatchObject({
        Namespace: metricsNamespace,
        Dimensions: [{ Name: 'service', Value: metricsService }],
        MetricName: metricNames.approvalRunsLost,
        Statistic: 'Sum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
    },
  );

  it(
    verifies('ops.alarms', 'every alarm notifies the topic when it fires and when it clears, and says what to do'),
    () => {
      const alarms = resourcesOf(plain.template, 'AWS::CloudWatch::Alarm');
      expect(alarms.size).toBe(operationsOf(plain).alarms.size);
      expect(alarms.size).toBe(7 * 2 + 3 + 2 + 2 + 4);
      for (const alarm of alarms.values()) {
        const properties = propertiesOf(alarm);
        expect(properties.AlarmActions).toEqual([topicRef(plain)]);
        expect(properties.OKActions).toEqual([topicRef(plain)]);
        expect(String(properties.AlarmDescription).length).toBeGreaterThan(120);
      }
    },
  );
});

describe('the alarm topic', () => {
  it(
    verifies('ops.alarms', 'is encrypted with a rotating key CloudWatch may use, and refuses unencrypted transport'),
    () => {
      const { template } = plain;
      const topicId = logicalIdOf(operationsOf(plain).alarmTopic);
      const topic = resourceProperties(template, topicId);
      expect(topic.KmsMasterKeyId).toMatchObject({
        'Fn::GetAtt': [expect.stringMatching(/^OperationsAlarmTopicKey/), 'Arn'],
      });
      const keyId = (topic.KmsMasterKeyId as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      const key = resourceProperties(template, keyId);
      expect(key.EnableKeyRotation).toBe(true);
      const statements = asList(isObject(key.KeyPolicy) ? key.KeyPolicy.Statement : undefined).filter(isObject);
      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Allow',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        }),
      );
      const policies = [...resourcesOf(template, 'AWS::SNS::TopicPolicy').values()].map(propertiesOf);
      const own = policies.find((policy) => asList(policy.Topics).some((ref) => isObject(ref) && ref.Ref === topicId));
      expect(JSON.stringify(own?.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    },
  );

  it(verifies('ops.alarms', 'emails the alarmEmails addresses, and nobody when none are given'), () => {
    const subscriptions = (synthesized: Synthesized) =>
      [...resourcesOf(synthesized.template, 'AWS::SNS::Subscription').values()]
        .map(propertiesOf)
        .filter(
          (subscription) => isObject(subscription.TopicArn) && subscription.TopicArn.Ref === topicRef(synthesized).Ref,
        )
        .map((subscription) => [subscription.Protocol, subscription.Endpoint]);
    expect(subscriptions(withEmails).sort()).toEqual([
      ['email', 'oncall@example.com'],
      ['email', 'ops@example.com'],
    ]);
    expect(subscriptions(plain)).toEqual([]);
  });
});

describe('the dashboard', () => {
  it(verifies('ops.dashboard', "shows every alarm's state and the gateway's metrics"), () => {
    const dashboards = [...resourcesOf(plain.template, 'AWS::CloudWatch::Dashboard').values()];
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(propertiesOf(dashboards[0]).DashboardBody);
    for (const name of Object.values(metricNames)) {
      expect(body).toContain(name);
    }
    // Per-call dimensions are found by search (tools and groups come from the configuration).
    expect(body).toContain(`SEARCH('{${metricsNamespace},service,Tool,AgentGroup,Outcome} MetricName=`);
    expect(body).toContain(`SEARCH('{${metricsNamespace},service,Decision,Policy} MetricName=`);
    expect(body).toContain('\\"type\\":\\"alarm\\"');
    for (const alarm of operationsOf(plain).alarms.values()) expect(body).toContain(logicalIdOf(alarm));
  });

  it(
    verifies(
      'load.metrics',
      'graphs the time to decision per group at p50 and p90, pending per group, the share expired',
    ),
    () => {
      const [dashboard] = [...resourcesOf(plain.template, 'AWS::CloudWatch::Dashboard').values()];
      const body = JSON.stringify(propertiesOf(dashboard).DashboardBody);
      // The metric's name sits in escaped quotes inside the search expression.
      const search = (metric: string, statistic: string) =>
        new RegExp(
          `SEARCH\\('\\{${metricsNamespace},service,Group\\} MetricName=\\W+${metric}\\W+', '${statistic}', 300\\)`,
        );
      expect(body).toMatch(search('HeldToDecided', 'p50'));
      expect(body).toMatch(search('HeldToDecided', 'p90'));
      // The pass publishes a group only while calls wait there: a drained group's periods read 0.
      expect(body).toMatch(new RegExp(`FILL\\(${search('PendingApprovals', 'Maximum').source}, 0\\)`));
      expect(body).toContain('100 * expired / (expired + decided)');
    },
  );
});

describe('held-call notices by email', () => {
  it(verifies('ops.email-notices', 'are not sent, and nothing is created for them, without approverEmails'), () => {
    expect(plain.stack.node.tryFindChild('EmailNotices')).toBeUndefined();
    expect(resourcesOf(plain.template, 'AWS::SNS::Topic').size).toBe(1);
    const busRules = [...resourcesOf(plain.template, 'AWS::Events::Rule').values()].filter(
      (rule) => propertiesOf(rule).EventBusName !== undefined,
    );
    expect(busRules).toEqual([]);
  });

  it(
    verifies('ops.email-notices', "go from the notice bus to an encrypted topic, built from the notice's fields only"),
    () => {
      const { stack, template } = withEmails;
      const notices = child(stack, 'EmailNotices', EmailNotices);
      const bus = child(stack, 'Notices', EventBus);
      const topicId = logicalIdOf(notices.topic);
      const rule = resourceProperties(template, logicalIdOf(notices.rule));
      expect(rule.EventBusName).toEqual({ Ref: logicalIdOf(bus) });
      expect(rule.EventPattern).toEqual({ source: ['approval-gateway'], 'detail-type': ['Approval requested'] });
      const [target, ...others] = asList(rule.Targets).filter(isObject);
      expect(others).toEqual([]);
      expect(target?.Arn).toEqual({ Ref: topicId });
      const transformer = isObject(target?.InputTransformer) ? target.InputTransformer : {};
      // Exactly these fields of the notice, nothing else of the event.
      expect(Object.values(isObject(transformer.InputPathsMap) ? transformer.InputPathsMap : {}).sort()).toEqual(
        [
          '$.detail.agent_id',
          '$.detail.console_url',
          '$.detail.expires_at',
          '$.detail.summary',
          '$.detail.tool',
        ].sort(),
      );
      const template_ = String(transformer.InputTemplate);
      // A JSON object whose values are placed as JSON values (EventBridge escapes nothing inside quotes).
      const placeholders = template_.replace(/<[\w-]+>/g, 'null');
      expect(Object.keys(JSON.parse(placeholders))).toEqual([
        'notice',
        'agent',
        'tool',
        'arguments (secrets redacted)',
        'decide before',
        'console',
      ]);
      expect(template_).not.toMatch(/"<[\w-]+>"/);

      const topic = resourceProperties(template, topicId);
      expect(topic.KmsMasterKeyId).toBeDefined();
      const subscriptions = [...resourcesOf(template, 'AWS::SNS::Subscription').values()]
        .map(propertiesOf)
        .filter((subscription) => isObject(subscription.TopicArn) && subscription.TopicArn.Ref === topicId)
        .map((subscription) => [subscription.Protocol, subscription.Endpoint]);
      expect(subscriptions).toEqual([['email', 'finance@example.com']]);
      const keyId = (topic.KmsMasterKeyId as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      const key = resourceProperties(template, keyId);
      expect(JSON.stringify(key.KeyPolicy)).toContain('events.amazonaws.com');
      const policies = [...resourcesOf(template, 'AWS::SNS::TopicPolicy').values()].map(propertiesOf);
      const own = JSON.stringify(
        policies.find((policy) => asList(policy.Topics).some((ref) => isObject(ref) && ref.Ref === topicId))
          ?.PolicyDocument,
      );
      expect(own).toContain('events.amazonaws.com');
      expect(own).toContain('"aws:SecureTransport":"false"');
    },
  );
});

describe('cdk-nag', () => {
  it(
    verifies(['ops.alarms', 'ops.email-notices'], 'leaves no AwsSolutions finding with the topics and the rule'),
    () => {
      expect(nagFindings(plain)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
      expect(nagFindings(withEmails)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
    },
  );
});
