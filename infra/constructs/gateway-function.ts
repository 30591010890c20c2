// The one factory for the gateway's Lambda functions: Node 24 on arm64, bundled by the local
// esbuild (no Docker), ESM, Powertools settings, active tracing and a log group with retention.
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { projectPath } from '../paths.js';

export interface GatewayFunctionProps {
  /** Handler module under `functions/`, e.g. `mcp.ts`. */
  readonly entry: string;
  readonly description: string;
  /** @default 30 */
  readonly timeoutSeconds?: number;
  /** @default 1024 */
  readonly memoryMiB?: number;
  readonly environment?: Record<string, string>;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
}

export class GatewayFunction extends Construct {
  readonly function: NodejsFunction;
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
    this.function = new NodejsFunction(this, 'Function', {
      role,
      entry: projectPath('functions', props.entry),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memoryMiB ?? 1024,
      timeout: Duration.seconds(props.timeoutSeconds ?? 30),
      tracing: Tracing.ACTIVE,
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      projectRoot: projectPath(),
      depsLockFilePath: projectPath('package-lock.json'),
      environment: {
        POWERTOOLS_SERVICE_NAME: id.toLowerCase(),
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        mainFields: ['module', 'main'],
        // Some dependencies are CommonJS and call require(); ESM bundles need it defined.
        banner:
          "import { createRequire as __gatewayCreateRequire } from 'node:module'; const require = __gatewayCreateRequire(import.meta.url);",
        externalModules: ['@aws-sdk/*'],
      },
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray accepts trace segments only on resource "*" (xray:PutTraceSegments, xray:PutTelemetryRecords).',
    });
  }
}
