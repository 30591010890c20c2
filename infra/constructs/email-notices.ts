// Held-call notices by email: a rule on the notice bus sends each `Approval requested` event to an
// encrypted SNS topic whose subscribers are the approvers' addresses. The message is built from the
// notice's own fields (the agent, the tool, the arguments summary with secrets already redacted, the
// expiry and the console link), as the webhook carries them; nothing else of the event is sent.
import { Stack } from 'aws-cdk-lib';
import { EventField, type IEventBus, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SnsTopic } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

/** What the held-call steps function puts on the bus (shared/adapters/eventbridge-notifier.ts). */
const heldCallNoticePattern = { source: ['approval-gateway'], detailType: ['Approval requested'] };

export interface EmailNoticesProps {
  /** The bus held-call notices go out on. */
  readonly bus: IEventBus;
  /** Who receives every notice (each address confirms its subscription once). */
  readonly emails: readonly string[];
}

export class EmailNotices extends Construct {
  readonly topic: Topic;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: EmailNoticesProps) {
    super(scope, id);
    if (props.emails.length === 0) {
      throw new Error('EmailNotices needs at least one address (received none); leave it out to send no email.');
    }
    // EventBridge publishes to the topic, so it may use the topic's key (the AWS managed key would refuse it).
    const key = new Key(this, 'TopicKey', {
      description: 'Approval Gateway: held-call notices by email',
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    this.topic = new Topic(this, 'Topic', {
      displayName: 'Approval Gateway: calls waiting for approval',
      masterKey: key,
      enforceSSL: true,
    });
    for (const email of props.emails) this.topic.addSubscription(new EmailSubscription(email));

    // A JSON object, each field placed as a JSON value: EventBridge does not escape a value placed
    // inside a quoted string, and the summary is JSON text full of quotes.
    const field = (name: string) => EventField.fromPath(`$.detail.${name}`);
    this.rule = new Rule(this, 'Rule', {
      description: 'Approval Gateway: held-call notices by email',
      eventBus: props.bus,
      eventPattern: heldCallNoticePattern,
      targets: [
        new SnsTopic(this.topic, {
          message: RuleTargetInput.fromObject({
            notice: 'A call is waiting for approval. Open the console link to approve or reject it.',
            agent: field('agent_id'),
            tool: field('tool'),
            'arguments (secrets redacted)': field('summary'),
            'decide before': field('expires_at'),
            console: field('console_url'),
          }),
        }),
      ],
    });
  }
}
