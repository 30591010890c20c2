// The one factory for the gateway's Lambda functions: Node 24 on arm64, bundled by the local
// esbuild (no Docker), ESM, Powertools settings, active tracing and a log group with retention.
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { projectPath } from '../paths.js';

/** Cedar's WebAssembly, loaded by its Node build from the bundle's own folder. */
const cedarWasm = projectPath('node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm_bg.wasm');

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
        // CommonJS dependencies call require() and read files next to themselves (Cedar's wasm):
        // an ESM bundle needs require and __dirname defined, and the wasm copied beside it.
        banner: [
          "import { createRequire as __gatewayCreateRequire } from 'node:module';",
          "import { fileURLToPath as __gatewayFileUrl } from 'node:url';",
          "import { dirname as __gatewayDirname } from 'node:path';",
          'const require = __gatewayCreateRequire(import.meta.url);',
          'const __dirname = __gatewayDirname(__gatewayFileUrl(import.meta.url));',
        ].join(' '),
        externalModules: ['@aws-sdk/*'],
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_input: string, output: string) =>
            props.cedar ? [`cp "${cedarWasm}" "${output}/cedar_wasm_bg.wasm"`] : [],
        },
      },
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray accepts trace segments only on resource "*" (xray:PutTraceSegments, xray:PutTelemetryRecords).',
    });
  }
}
