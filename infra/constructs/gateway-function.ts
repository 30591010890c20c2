// The one factory for the gateway's Lambda functions: Node 24 on arm64, bundled on this machine
// by the project's own bundler (infra/bundling: no Docker), Powertools settings, active tracing
// and a log group with retention.
import { execFileSync } from 'node:child_process';
import { AssetHashType, DockerImage, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { projectPath } from '../paths.js';

/**
 * The function's code: `functions/<entry>` bundled by infra/bundling in a child process (CDK asks
 * for bundles synchronously), hashed by its output. There is no container fallback: bundling
 * needs only this project's own dependencies.
 */
const bundledCode = (entry: string, cedar: boolean): Code =>
  Code.fromAsset(projectPath('functions'), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('public.ecr.aws/docker/library/node:24'),
      // CDK reuses a bundle for assets whose options are alike: what is bundled must be in them.
      environment: { GATEWAY_FUNCTION: entry, GATEWAY_CEDAR: String(cedar) },
      local: {
        tryBundle(outputDir) {
          execFileSync(
            process.execPath,
            [
              '--import',
              'tsx',
              projectPath('infra', 'bundling', 'cli.ts'),
              entry.replace(/\.ts$/, ''),
              outputDir,
              ...(cedar ? ['--cedar'] : []),
            ],
            { cwd: projectPath(), stdio: ['ignore', 'ignore', 'inherit'] },
          );
          return true;
        },
      },
    },
  });

export interface GatewayFunctionProps {
  /** Handler module under `functions/`, e.g. `mcp.ts`. */
  readonly entry: string;
  readonly description: string;
  /** @default 30 */
  readonly timeoutSeconds?: number;
  /** @default 1024 */
  readonly memoryMiB?: number;
  readonly environment?: Record<string, string>;
  /** Whether the function evaluates Cedar policies (its wasm is then shipped with it). @default false */
  readonly cedar?: boolean;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
}

export class GatewayFunction extends Construct {
  readonly function: LambdaFunction;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: GatewayFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Its own role, allowed to write only its own log group (no AWS managed policy).
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.role = role;
    logGroup.grantWrite(role);
    this.function = new LambdaFunction(this, 'Function', {
      role,
      code: bundledCode(props.entry, props.cedar ?? false),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memoryMiB ?? 1024,
      timeout: Duration.seconds(props.timeoutSeconds ?? 30),
      tracing: Tracing.ACTIVE,
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      environment: {
        POWERTOOLS_SERVICE_NAME: id.toLowerCase(),
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray accepts trace segments only on resource "*" (xray:PutTraceSegments, xray:PutTelemetryRecords).',
    });
  }
}
