// The approval lifecycle in AWS: the Standard state machine run from the repo's ASL document (the
// same file the local runtime runs), the held-call steps function its tasks invoke, and the reconciler
// that brings lost or overdue calls forward every minute.
import { ArnFormat, Aws, Duration, Names, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { type ApprovalSubstitutions, approvalDefinitionPath } from '../state-machine/definition.js';
import { GatewayFunction } from './gateway-function.js';
import { nagRegionAndAccount } from './nag-arn.js';

export interface ApprovalStateMachineProps {
  /** Environment of the approval run and reconciler functions; STATE_MACHINE_ARN is added here. */
  readonly environment: Record<string, string>;
  /**
   * Variables only the functions that notify approvers read (the notice bus): the held-call steps
   * (a held call) and the reconciler (an escalation). @default none
   */
  readonly noticesEnvironment?: Record<string, string>;
  /**
   * How long one state machine step or reconciler pass may run: an approved call is sent within it,
   * so it must exceed the longest system timeout. @default 300
   */
  readonly runTimeoutSeconds?: number;
}

export class ApprovalStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  /**
   * The state machine's ARN, built from its fixed name rather than read from the resource: the
   * held-call steps function needs it while the state machine's definition names the function.
   */
  readonly stateMachineArn: string;
  readonly logGroup: LogGroup;
  /** Invoked by the state machine's tasks: register and notify, execute once, expire. */
  readonly steps: GatewayFunction;
  /** Run by the schedule: starts lost approval runs, hands lost decisions over, expires overdue calls. */
  readonly reconciler: GatewayFunction;
  readonly schedule: Rule;
  /** How often the schedule runs the reconciler. */
  readonly reconcileEveryMinutes = 1;
  /** How long one step or reconciler pass may run. */
  readonly runTimeoutSeconds: number;

  constructor(scope: Construct, id: string, props: ApprovalStateMachineProps) {
    super(scope, id);
    const stateMachineName = Names.uniqueResourceName(this, { maxLength: 80 });
    this.stateMachineArn = Stack.of(this).formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.runTimeoutSeconds = props.runTimeoutSeconds ?? 300;
    const environment = { ...props.environment, STATE_MACHINE_ARN: this.stateMachineArn };
    this.steps = new GatewayFunction(this, 'HeldCallSteps', {
      entry: 'held-call-steps.ts',
      description: 'Approval Gateway approval state machine steps',
      timeoutSeconds: this.runTimeoutSeconds,
      // Running an approved call loads the configuration snapshot, whose policy engine is Cedar.
      cedar: true,
      environment: { ...environment, ...props.noticesEnvironment },
    });
    this.reconciler = new GatewayFunction(this, 'Reconciler', {
      entry: 'reconciler.ts',
      description: 'Approval Gateway reconciler of open calls',
      timeoutSeconds: this.runTimeoutSeconds,
      cedar: true,
      environment: { ...environment, ...props.noticesEnvironment },
    });
    // Vended-logs prefix: Step Functions then needs no CloudWatch Logs resource policy per group.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = this.approvalRuns(stateMachineName);
    this.grantRecovery(stateMachineName);
    this.schedule = this.reconcileSchedule();
  }

  /** The Standard state machine run from the repo's ASL document, invoking the held-call steps. */
  private approvalRuns(stateMachineName: string): StateMachine {
    const substitutions: ApprovalSubstitutions = {
      Partition: Aws.PARTITION,
      HeldCallStepsFunction: this.steps.function.functionArn,
    };
    const stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromFile(approvalDefinitionPath),
      definitionSubstitutions: { ...substitutions },
      // Every state transition is logged, without inputs and outputs: those carry task tokens,
      // which stay in the execution history (read only with states:GetExecutionHistory).
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    // The definition names the unqualified function ARN, so exactly that may be invoked.
    stateMachine.addToRolePolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.steps.function.functionArn] }),
    );
    Validations.of(stateMachine.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Step Functions log delivery (logs:CreateLogDelivery and the other delivery APIs) and X-Ray (xray:PutTraceSegments, sampling rules) accept only resource "*".',
    });
    return stateMachine;
  }

  /** What the steps and the reconciler may do with approval runs to bring a lost call or decision forward. */
  private grantRecovery(stateMachineName: string): void {
    // The register task hands a decision back itself when the call was decided before it listened.
    this.grantTaskSuccess(this.steps.role);
    this.grantStartExecution(this.reconciler.role);
    this.grantTaskSuccess(this.reconciler.role);
    // A start refused as ExecutionAlreadyExists is told apart (still running, or ended for good) by
    // describing the run of that name: only recovery meets it, so only the reconciler may. Every
    // run of this state machine, whatever its name.
    const executionArns = Stack.of(this).formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${stateMachineName}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.reconciler.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['states:DescribeExecution'], resources: [executionArns] }),
    );
    Validations.of(this.reconciler.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:${nagRegionAndAccount(Stack.of(this))}:execution:${stateMachineName}:*]`,
      reason:
        "An approval run is named by its held call's execution id, known only when the call is made: the grant covers this state machine's runs, to describe only.",
    });
  }

  /** The reconciler's schedule, every minute. */
  private reconcileSchedule(): Rule {
    const schedule = new Rule(this, 'Schedule', {
      description: 'Approval Gateway: reconcile open calls',
      schedule: Schedule.rate(Duration.minutes(this.reconcileEveryMinutes)),
      targets: [new LambdaFunction(this.reconciler.function)],
    });
    // The next pass, a minute later, is the retry; a retried pass would only overlap it.
    this.reconciler.function.configureAsyncInvoke({ retryAttempts: 0 });
    return schedule;
  }

  /** Start approval runs (named by execution id) on this state machine only. */
  grantStartExecution(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['states:StartExecution'], resources: [this.stateMachineArn] }),
    );
  }

  /**
   * Hand a decision to a waiting approval run. Step Functions authorizes a callback task's token
   * against the state machine that issued it, so the grant names this one.
   */
  grantTaskSuccess(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['states:SendTaskSuccess'], resources: [this.stateMachineArn] }),
    );
  }
}
