// The synthesized stack, run here as AWS would run it: the stand-ins play the resources the
// template declares (tables created from its definitions, its buckets, keys, bus and secrets), the
// local Step Functions runs the state machine definition the template ships, each function runs
// from its shipped bundle with exactly the environment the template declares (see
// lambda-workers.ts), and requests reach the functions as the HTTP API's routes in the template
// route them, as payload-2.0 events, and as its WebSocket API's routes (websocket-api.ts, at the
// URLs its outputs name). Every AWS call a function makes passes the recording step
// (recording-proxy.ts), signed with that function's own key.
//
// Long: one stand-in per kind of resource the template declares, each set up from it, and the
// agents' pool played by a local OpenID provider; split, each would re-read the template.
import { readFile } from 'node:fs/promises';
import { CreateTableCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { newLocalAwsCredentials } from '../../infra/local/aws-signature.js';
import { startLocalDynamoDb } from '../../infra/local/dynamodb.js';
import { startLocalEventBridge } from '../../infra/local/eventbridge.js';
import { startLocalKms } from '../../infra/local/kms.js';
import { startLocalS3 } from '../../infra/local/s3.js';
import { startLocalSecretsManager } from '../../infra/local/secrets-manager.js';
import { startLocalStepFunctions } from '../../infra/local/step-functions.js';
import { errorText } from '../../shared/errors.js';
import { type AgentTokenIssuer, startAgentTokenIssuer } from '../support/oidc-provider.js';
import { temporaryFolder } from '../support/runtime-process.js';
import { loopbackCertificate } from '../support/tls.js';
import { type Assembly, isJson, type Json, type Resource } from './assembly.js';
import { type HttpAnswer, httpRoutes } from './http-api.js';
import { physicalResources, region, resolver } from './intrinsics.js';
import { type LambdaFunction, type LambdaInvocationError, lambdaFunction } from './lambda-workers.js';
import { type RecordedCall, type Service, startRecordingProxies } from './recording-proxy.js';
import { startWebSocketApi } from './websocket-api.js';

const ofType = (assembly: Assembly, type: string): [string, Resource][] =>
  Object.entries(assembly.template.Resources).filter(([, resource]) => resource.Type === type);

/** The logical id of the function a construct id names (`Mcp` is `McpFunction…`). */
export const functionId = (stack: Pick<DeployedStack, 'functions'>, construct: string): string => {
  const found = [...stack.functions.keys()].find((id) => id.startsWith(`${construct}Function`));
  if (found === undefined) throw new Error(`The template has no function of the construct ${construct}.`);
  return found;
};

export interface DeployedStack {
  /** The functions by logical id. */
  readonly functions: ReadonlyMap<string, LambdaFunction>;
  /** Every AWS call the functions made: caller, action and resource. */
  readonly calls: readonly RecordedCall[];
  readonly secrets: { put(name: string, text: string): void };
  readonly events: readonly { bus: string; detailType: string; detail: unknown }[];
  /** The stack's outputs, resolved. */
  readonly outputs: Readonly<Record<string, string>>;
  /** What the operator's tools are given to reach the stand-ins (config:push's endpoints and credential). */
  readonly operator: {
    readonly env: Readonly<Record<string, string>>;
    readonly endpoints: { dynamodb: string; s3: string; kms: string };
  };
  /** Function failures the WebSocket API answered for (an HTTP answer carries its own). */
  readonly socketFailures: readonly LambdaInvocationError[];
  /** Approval runs that failed, and the local Step Functions endpoint's own failures, as it reports them. */
  readonly runFailures: readonly string[];
  /** A request to the HTTP API, routed and authorized as its template says. */
  http(request: { method: string; path: string; headers?: Record<string, string>; body?: string }): Promise<HttpAnswer>;
  /**
   * The agents' user pool, played by a local OpenID provider over HTTPS at the issuer the template's
   * values name; its app clients are added as an operator adds them, and granted the pool's scope.
   */
  readonly agentPool: AgentTokenIssuer & { readonly scope: string };
  /** Resolves a value of the template as the functions' environment is resolved. */
  resolve(value: unknown, where: string): string;
  /** Resolves when no approval run is running any more. */
  settled(): Promise<void>;
  readonly stateMachineArn: string;
  close(): Promise<void>;
}

/** A table as the template defines it, in the form CreateTable takes. */
const tableInput = (name: string, props: Json): CreateTableCommandInput => {
  const indexes = Array.isArray(props.GlobalSecondaryIndexes) ? props.GlobalSecondaryIndexes.filter(isJson) : [];
  const keySchema = (value: unknown) => (Array.isArray(value) ? value.filter(isJson) : []);
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: keySchema(props.KeySchema).map((key) => ({
      AttributeName: String(key.AttributeName),
      KeyType: key.KeyType === 'RANGE' ? 'RANGE' : 'HASH',
    })),
    AttributeDefinitions: keySchema(props.AttributeDefinitions).map((attribute) => ({
      AttributeName: String(attribute.AttributeName),
      AttributeType: attribute.AttributeType === 'N' ? 'N' : attribute.AttributeType === 'B' ? 'B' : 'S',
    })),
    ...(indexes.length === 0
      ? {}
      : {
          GlobalSecondaryIndexes: indexes.map((index) => ({
            IndexName: String(index.IndexName),
            KeySchema: keySchema(index.KeySchema).map((key) => ({
              AttributeName: String(key.AttributeName),
              KeyType: key.KeyType === 'RANGE' ? ('RANGE' as const) : ('HASH' as const),
            })),
            Projection: { ProjectionType: 'ALL' },
          })),
        }),
  };
};

const services: readonly Service[] = ['dynamodb', 'states', 'kms', 's3', 'secretsmanager', 'events'];

/** The SDK's per-service endpoint variables, as an operator's `AWS_ENDPOINT_URL_<SERVICE>`. */
const endpointVariables: Readonly<Record<Service, string>> = {
  dynamodb: 'AWS_ENDPOINT_URL_DYNAMODB',
  states: 'AWS_ENDPOINT_URL_SFN',
  kms: 'AWS_ENDPOINT_URL_KMS',
  s3: 'AWS_ENDPOINT_URL_S3',
  secretsmanager: 'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  events: 'AWS_ENDPOINT_URL_EVENTBRIDGE',
};

/**
 * The agents' user pool (its logical id starts AgentIdentityPool) played by a local OpenID provider
 * issuing Cognito-shaped client-credentials tokens for the scope its resource server declares, over
 * HTTPS with a certificate of its own (aws-jwt-verify fetches keys over HTTPS only) and its keys
 * where Cognito serves them.
 */
const startAgentPool = async (assembly: Assembly, closers: (() => Promise<void>)[]) => {
  const [pool] = ofType(assembly, 'AWS::Cognito::UserPool').filter(([id]) => id.startsWith('AgentIdentityPool'));
  if (pool === undefined) throw new Error("The template declares no agents' user pool (AgentIdentityPool).");
  const [logicalId] = pool;
  const server = ofType(assembly, 'AWS::Cognito::UserPoolResourceServer').find(
    ([, { Properties: props }]) => isJson(props.UserPoolId) && props.UserPoolId.Ref === logicalId,
  )?.[1].Properties;
  const declared = Array.isArray(server?.Scopes) ? server.Scopes.filter(isJson) : [];
  const scopeName = declared[0]?.ScopeName;
  if (server === undefined || typeof scopeName !== 'string')
    throw new Error(`The template declares no resource server scope of the user pool ${logicalId}.`);
  const scope = `${String(server.Identifier)}/${scopeName}`;
  const folder = await temporaryFolder('gateway-agent-pool-');
  closers.push(() => folder.remove());
  const tls = await loopbackCertificate(folder.path);
  const issuer = await startAgentTokenIssuer({
    clients: [],
    scope,
    otherScopes: [`${String(server.Identifier)}/not-the-agent-scope`],
    tls,
    jwksPath: '/.well-known/jwks.json',
  });
  closers.push(() => issuer.close());
  return { pool: { ...issuer, scope }, logicalId, certPath: tls.certPath };
};

export const startDeployedStack = async (assembly: Assembly): Promise<DeployedStack> => {
  const closers: (() => Promise<void>)[] = [];
  const standIn = newLocalAwsCredentials();
  const dynamodb = await startLocalDynamoDb({ dataPath: null, credentials: standIn });
  closers.push(() => dynamodb.close());
  const s3 = await startLocalS3({ credentials: standIn });
  const kms = await startLocalKms({ credentials: standIn });
  const secretsManager = await startLocalSecretsManager({ credentials: standIn });
  const eventBridge = await startLocalEventBridge({ credentials: standIn });
  closers.push(
    () => s3.close(),
    () => kms.close(),
    () => secretsManager.close(),
    () => eventBridge.close(),
  );

  // Keys first: their ARNs are the stand-in's to give.
  const keyArns = new Map<string, string>();
  for (const [logicalId, { Properties: props }] of ofType(assembly, 'AWS::KMS::Key')) {
    const usage = props.KeyUsage;
    keyArns.set(
      logicalId,
      usage === 'SIGN_VERIFY'
        ? kms.createSigningKey()
        : usage === 'GENERATE_VERIFY_MAC'
          ? kms.createHmacKey()
          : kms.createSymmetricKey(),
    );
  }
  const { pool: agentPool, logicalId: agentPoolId, certPath } = await startAgentPool(assembly, closers);
  const webSocketApi = await startWebSocketApi(assembly);
  if (webSocketApi !== null) closers.unshift(() => webSocketApi.close());
  const physical = physicalResources(assembly.template, assembly.stackName, {
    keyArns,
    poolIssuers: new Map([[agentPoolId, agentPool.issuer]]),
    apiOrigins: new Map(webSocketApi === null ? [] : [[webSocketApi.apiId, webSocketApi.origin]]),
  });
  const resolve = resolver(physical, assembly.stackName);
  const nameOf = (logicalId: string) => physical.get(logicalId)?.ref ?? logicalId;
  for (const [logicalId, { Type, Properties }] of Object.entries(assembly.template.Resources)) {
    if (Type === 'AWS::DynamoDB::GlobalTable' || Type === 'AWS::DynamoDB::Table')
      await dynamodb.client.send(new CreateTableCommand(tableInput(nameOf(logicalId), Properties)));
    if (Type === 'AWS::S3::Bucket') s3.createBucket(nameOf(logicalId));
    if (Type === 'AWS::Events::EventBus') eventBridge.createBus(nameOf(logicalId));
  }

  // The state machine, from the definition the template ships, with its substitutions.
  const [machine] = ofType(assembly, 'AWS::StepFunctions::StateMachine');
  if (machine === undefined) throw new Error('The template declares no state machine.');
  const [machineId, { Properties: machineProps }] = machine;
  const location = machineProps.DefinitionS3Location;
  const definitionText = isJson(location)
    ? await readFile(assembly.assetPath(String(location.Key)), 'utf8')
    : resolve(machineProps.DefinitionString, `${machineId}.DefinitionString`);
  const substitutions = isJson(machineProps.DefinitionSubstitutions) ? machineProps.DefinitionSubstitutions : {};
  const definition: unknown = JSON.parse(
    definitionText.replace(/\$\{([A-Za-z0-9_]+)\}/g, (whole, name: string) =>
      name in substitutions ? resolve(substitutions[name], `${machineId}.DefinitionSubstitutions.${name}`) : whole,
    ),
  );
  const tasks = new Map<string, (payload: unknown) => Promise<unknown>>();
  const runFailures: string[] = [];
  const stepFunctions = await startLocalStepFunctions({
    host: '127.0.0.1',
    port: 0,
    stateMachineName: physical.get(machineId)?.attributes.Name ?? machineId,
    definition,
    functions: tasks,
    credentials: standIn,
    onError: (message, error) => runFailures.push(`${message}: ${errorText(error)}`),
  });
  closers.unshift(() => stepFunctions.close());

  // Each function's own credential, and the recording step in front of the stand-ins.
  const lambdas = ofType(assembly, 'AWS::Lambda::Function');
  const callers = new Map(lambdas.map(([logicalId]) => [logicalId, newLocalAwsCredentials()]));
  const proxies = await startRecordingProxies({
    upstreams: {
      dynamodb: dynamodb.endpoint,
      states: stepFunctions.endpoint,
      kms: kms.endpoint,
      s3: s3.endpoint,
      secretsmanager: secretsManager.endpoint,
      events: eventBridge.endpoint,
    },
    standIn,
    callers,
    machineArn: stepFunctions.stateMachineArn,
  });
  closers.unshift(() => proxies.close());

  const functions = new Map<string, LambdaFunction>();
  const byArn = new Map<string, LambdaFunction>();
  for (const [logicalId, { Properties: props }] of lambdas) {
    const where = `${logicalId}.Environment.Variables`;
    const variables =
      isJson(props.Environment) && isJson(props.Environment.Variables) ? props.Environment.Variables : {};
    const declared = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [name, resolve(value, `${where}.${name}`)]),
    );
    const code = isJson(props.Code) ? props.Code : {};
    const name = nameOf(logicalId);
    const credentials = callers.get(logicalId) ?? newLocalAwsCredentials();
    const memoryMiB = Number(props.MemorySize ?? 128);
    const fn = lambdaFunction({
      logicalId,
      functionName: name,
      functionArn: physical.get(logicalId)?.attributes.Arn ?? name,
      taskRoot: assembly.assetPath(String(code.S3Key)),
      handler: String(props.Handler),
      timeoutSeconds: Number(props.Timeout ?? 3),
      memoryMiB,
      environment: {
        ...declared,
        // What the Lambda runtime sets in every function's environment.
        AWS_REGION: region,
        AWS_DEFAULT_REGION: region,
        AWS_LAMBDA_FUNCTION_NAME: name,
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMiB),
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${name}`,
        AWS_LAMBDA_LOG_STREAM_NAME: 'harness',
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
        AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001',
        LAMBDA_TASK_ROOT: assembly.assetPath(String(code.S3Key)),
        LAMBDA_RUNTIME_DIR: '/var/runtime',
        _HANDLER: String(props.Handler),
        TZ: ':UTC',
        // The runtime's trusted certificates: the public ones and the agents' pool stand-in's own.
        NODE_EXTRA_CA_CERTS: certPath,
        LANG: 'en_US.UTF-8',
        NODE_PATH: `${process.cwd()}/node_modules`,
        AWS_ACCESS_KEY_ID: credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        AWS_SESSION_TOKEN: `harness-session-${logicalId}`,
        // Where the SDK finds each service: the recording step in front of the stand-ins.
        ...Object.fromEntries(services.map((service) => [endpointVariables[service], proxies.endpoints[service]])),
      },
    });
    functions.set(logicalId, fn);
    byArn.set(fn.spec.functionArn, fn);
    closers.unshift(() => fn.close());
  }
  // The state machine's tasks invoke functions by the ARN the definition names.
  for (const [arn, fn] of byArn) tasks.set(arn, (payload) => fn.invoke(payload));

  const outputs: Record<string, string> = {};
  const templateOutputs = isJson(assembly.template.Outputs) ? assembly.template.Outputs : {};
  for (const [name, output] of Object.entries(templateOutputs)) {
    if (!isJson(output)) continue;
    try {
      outputs[name] = resolve(output.Value, `Outputs.${name}`);
    } catch {
      // An output naming what the harness does not play (an alarm topic's policy) is left out.
    }
  }

  const routes = httpRoutes(assembly, resolve, byArn);
  webSocketApi?.serve({ resolve, functionsByArn: byArn, callers, record: proxies.record });
  return {
    functions,
    calls: proxies.calls,
    secrets: { put: (name, text) => secretsManager.put(name, text) },
    events: eventBridge.events,
    outputs,
    operator: {
      env: { AWS_ACCESS_KEY_ID: standIn.accessKeyId, AWS_SECRET_ACCESS_KEY: standIn.secretAccessKey },
      endpoints: { dynamodb: dynamodb.endpoint, s3: s3.endpoint, kms: kms.endpoint },
    },
    http: (request) => routes(request),
    socketFailures: webSocketApi?.failures ?? [],
    runFailures,
    agentPool,
    resolve: (value, where) => resolve(value, where),
    settled: () => stepFunctions.settled(),
    stateMachineArn: stepFunctions.stateMachineArn,
    close: async () => {
      for (const close of closers) await close();
    },
  };
};
