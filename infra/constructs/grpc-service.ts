// The optional gRPC transport (DESIGN §8): API Gateway and Lambda cannot hold a bidirectional
// stream, so the same domain code runs as a container on Fargate behind an Application Load
// Balancer that speaks gRPC (HTTPS to clients, h2c to the tasks). The image is the repo's
// Dockerfile, built by a deploy; synthesis only stages the build context (no Docker needed).
import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import { FlowLogDestination, type IVpc, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import {
  AppProtocol,
  Cluster,
  ContainerImage,
  ContainerInsights,
  CpuArchitecture,
  FargateService,
  FargateTaskDefinition,
  LogDrivers,
  OperatingSystemFamily,
} from 'aws-cdk-lib/aws-ecs';
import {
  ApplicationLoadBalancer,
  ApplicationProtocol,
  ApplicationProtocolVersion,
  ApplicationTargetGroup,
  ListenerCertificate,
  Protocol,
  SslPolicy,
  TargetType,
} from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { projectPath } from '../paths.js';

/** The port the container serves gRPC on, in plain HTTP/2 (the load balancer terminates TLS). */
export const grpcContainerPort = 50051;
/** The standard gRPC health service's method, which the load balancer calls. */
export const grpcHealthCheckPath = '/grpc.health.v1.Health/Check';

const certificateArnPattern = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;

export interface GrpcServiceProps {
  /**
   * ACM certificate of the name agents connect to, in the stack's region. An ALB speaks gRPC over
   * HTTPS listeners only, so there is no default.
   */
  readonly certificateArn: string;
  /** The container's environment: the MCP function's, plus how agents' tokens are checked. */
  readonly environment: Readonly<Record<string, string>>;
  /** Where the service runs. @default a new VPC over two zones with one NAT gateway */
  readonly vpc?: IVpc;
  /** Tasks always running. @default 1 */
  readonly minTasks?: number;
  /** Tasks autoscaling may run. @default 4 */
  readonly maxTasks?: number;
  /** gRPC calls (streams opened) per task per minute that autoscaling keeps to. @default 1000 */
  readonly requestsPerTaskPerMinute?: number;
  /** Task CPU units (1024 = one vCPU). @default 256 */
  readonly cpu?: number;
  /** Task memory. @default 512 */
  readonly memoryMiB?: number;
  /**
   * How long the load balancer keeps a connection with no data on it; long-lived streams need
   * client keepalive pings shorter than this. @default 3600 (the ALB allows up to 4000)
   */
  readonly idleTimeoutSeconds?: number;
}

/** What a deployment chooses about the service: the stack's `grpcService` prop. */
export interface GrpcServiceSettings extends Pick<GrpcServiceProps, 'certificateArn' | 'minTasks' | 'maxTasks'> {
  /** The certificate's name, which agents connect to, for the endpoint output. @default the load balancer's DNS name */
  readonly domainName?: string;
}

const wholeNumber = (name: string, value: number, least: number): number => {
  if (!Number.isInteger(value) || value < least) {
    throw new Error(`GrpcService: ${name} must be a whole number of at least ${least} (got ${value}).`);
  }
  return value;
};

/** The numbers the service is built with, each checked, and the certificate and region it needs. */
const checkedSettings = (scope: Construct, props: GrpcServiceProps) => {
  if (!Token.isUnresolved(props.certificateArn) && !certificateArnPattern.test(props.certificateArn)) {
    throw new Error(
      `GrpcService: certificateArn must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>), got "${props.certificateArn}".`,
    );
  }
  // The ALB's access log delivery is granted by a principal that differs by region.
  if (Token.isUnresolved(Stack.of(scope).region)) {
    throw new Error(
      'GrpcService: the stack needs a region (env.region) for the load balancer access logs; got none (an environment-agnostic stack). infra/app.ts takes it from CDK_DEFAULT_REGION (--profile or AWS_REGION).',
    );
  }
  const minTasks = wholeNumber('minTasks', props.minTasks ?? 1, 1);
  const maxTasks = wholeNumber('maxTasks', props.maxTasks ?? 4, minTasks);
  const requestsPerTarget = wholeNumber('requestsPerTaskPerMinute', props.requestsPerTaskPerMinute ?? 1000, 1);
  const idleTimeoutSeconds = wholeNumber('idleTimeoutSeconds', props.idleTimeoutSeconds ?? 3600, 1);
  if (idleTimeoutSeconds > 4000) {
    throw new Error(
      `GrpcService: idleTimeoutSeconds must be at most 4000, the ALB's limit (got ${idleTimeoutSeconds}).`,
    );
  }
  return { minTasks, maxTasks, requestsPerTarget, idleTimeoutSeconds };
};

export class GrpcService extends Construct {
  readonly service: FargateService;
  readonly taskDefinition: FargateTaskDefinition;
  /** The role the gateway's code runs as: grant it what the MCP function's role has. */
  readonly taskRole: IRole;
  readonly loadBalancer: ApplicationLoadBalancer;
  readonly targetGroup: ApplicationTargetGroup;

  constructor(scope: Construct, id: string, props: GrpcServiceProps) {
    super(scope, id);
    const { minTasks, maxTasks, requestsPerTarget, idleTimeoutSeconds } = checkedSettings(this, props);
    const vpc = props.vpc ?? this.network();
    const cluster = new Cluster(this, 'Cluster', { vpc, containerInsightsV2: ContainerInsights.ENABLED });
    this.taskDefinition = this.gatewayTask(props);
    this.taskRole = this.taskDefinition.taskRole;
    this.service = new FargateService(this, 'Service', {
      cluster,
      taskDefinition: this.taskDefinition,
      desiredCount: minTasks,
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
      vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
      assignPublicIp: false,
      healthCheckGracePeriod: Duration.seconds(60),
    });
    this.loadBalancer = this.publicLoadBalancer(vpc, idleTimeoutSeconds);
    this.targetGroup = this.grpcTargets(vpc, props.certificateArn);
    const scaling = this.service.autoScaleTaskCount({ minCapacity: minTasks, maxCapacity: maxTasks });
    // Each gRPC call (a stream) is one ALB request; streams held open mostly cost CPU.
    scaling.scaleOnRequestCount('Requests', { requestsPerTarget, targetGroup: this.targetGroup });
    scaling.scaleOnCpuUtilization('Cpu', { targetUtilizationPercent: 60 });
    this.acknowledgeTaskFindings();
  }

  /** The gateway's container (ARM64, as the gateway's Lambda functions run), logging to its own group. */
  private gatewayTask(props: GrpcServiceProps): FargateTaskDefinition {
    const taskDefinition = new FargateTaskDefinition(this, 'Task', {
      cpu: props.cpu ?? 256,
      memoryLimitMiB: props.memoryMiB ?? 512,
      runtimePlatform: {
        cpuArchitecture: CpuArchitecture.ARM64,
        operatingSystemFamily: OperatingSystemFamily.LINUX,
      },
    });
    const logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    taskDefinition.addContainer('Gateway', {
      image: ContainerImage.fromAsset(projectPath(), { file: 'Dockerfile', platform: Platform.LINUX_ARM64 }),
      environment: {
        POWERTOOLS_SERVICE_NAME: 'grpc',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
        GRPC_PORT: String(grpcContainerPort),
        ...props.environment,
      },
      portMappings: [{ containerPort: grpcContainerPort, name: 'grpc', appProtocol: AppProtocol.grpc }],
      logging: LogDrivers.awsLogs({ streamPrefix: 'grpc', logGroup }),
      readonlyRootFilesystem: true,
      // Time for open streams to be told to reconnect elsewhere before the task is stopped.
      stopTimeout: Duration.seconds(30),
    });
    return taskDefinition;
  }

  /** The internet-facing load balancer, its access logs in a bucket of their own. */
  private publicLoadBalancer(vpc: IVpc, idleTimeoutSeconds: number): ApplicationLoadBalancer {
    const accessLogs = new Bucket(this, 'AccessLogs', {
      // The log delivery writes with SSE-S3 only (not KMS).
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This bucket holds the load balancer access logs; logging access to it would log the log writes.',
    });
    const loadBalancer = new ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc,
      internetFacing: true,
      http2Enabled: true,
      dropInvalidHeaderFields: true,
      idleTimeout: Duration.seconds(idleTimeoutSeconds),
    });
    loadBalancer.logAccessLogs(accessLogs, 'grpc');
    Validations.of(loadBalancer).acknowledge({
      id: 'AwsSolutions-EC23',
      reason:
        'Agents connect from anywhere, as to the HTTP API: port 443 only, TLS at the listener and every call authenticated by its bearer token.',
    });
    return loadBalancer;
  }

  /** The tasks as gRPC targets, checked by the standard health service, behind the one HTTPS listener. */
  private grpcTargets(vpc: IVpc, certificateArn: string): ApplicationTargetGroup {
    const targetGroup = new ApplicationTargetGroup(this, 'Targets', {
      vpc,
      port: grpcContainerPort,
      // HTTP to the targets with protocol version GRPC: HTTP/2 without TLS inside the VPC.
      protocol: ApplicationProtocol.HTTP,
      protocolVersion: ApplicationProtocolVersion.GRPC,
      targetType: TargetType.IP,
      targets: [this.service],
      healthCheck: {
        enabled: true,
        protocol: Protocol.HTTP,
        path: grpcHealthCheckPath,
        healthyGrpcCodes: '0',
        interval: Duration.seconds(15),
        timeout: Duration.seconds(5),
        healthyThresholdCount: 2,
        unhealthyThresholdCount: 3,
      },
      deregistrationDelay: Duration.seconds(60),
    });
    // The only listener: ALB's gRPC support needs HTTPS (there is no plain-HTTP gRPC listener).
    this.loadBalancer.addListener('Https', {
      port: 443,
      protocol: ApplicationProtocol.HTTPS,
      certificates: [ListenerCertificate.fromArn(certificateArn)],
      sslPolicy: SslPolicy.RECOMMENDED_TLS,
      defaultTargetGroups: [targetGroup],
      open: true,
    });
    return targetGroup;
  }

  private acknowledgeTaskFindings(): void {
    Validations.of(this.taskDefinition).acknowledge({
      id: 'AwsSolutions-ECS2',
      reason:
        'The variables are names and ARNs of the stack resources and the token issuer settings, none of them secret (the Lambda functions get the same).',
    });
    const executionRole = this.taskDefinition.executionRole;
    if (executionRole !== undefined) {
      Validations.of(executionRole).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'ECR issues pull tokens only on resource "*" (ecr:GetAuthorizationToken); the image pulls themselves are scoped to the asset repository.',
      });
    }
  }

  /** Public subnets for the load balancer, private ones for the tasks (out through one NAT gateway), flow logs on. */
  private network(): Vpc {
    const vpc = new Vpc(this, 'Network', {
      maxAzs: 2,
      natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'tasks', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
      ],
    });
    const flowLogs = new LogGroup(this, 'FlowLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    vpc.addFlowLog('FlowLogs', { destination: FlowLogDestination.toCloudWatchLogs(flowLogs) });
    return vpc;
  }
}
