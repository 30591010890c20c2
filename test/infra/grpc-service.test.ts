// CDK assertion tests for the optional gRPC transport: nothing without the flag; with it, the
// Fargate service of the repo's image, the ALB with its gRPC target group and HTTPS listener,
// autoscaling, the same data grants as the MCP function, and cdk-nag clean. Synthesis stages the
// Docker build context only: no Docker engine is needed.
//
// Long: one assertion block per resource of the service, and the Dockerfile's shape.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { DockerImageAsset } from 'aws-cdk-lib/aws-ecr-assets';
import { describe, expect, it } from 'vitest';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { GrpcService, grpcContainerPort, grpcHealthCheckPath } from '../../infra/constructs/grpc-service.js';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import {
  actionsOf,
  child,
  environmentOf,
  grantsOf,
  isObject,
  type JsonObject,
  logicalIdOf,
  nagFindings,
  propertiesOf,
  resourcesOf,
  statementsForRole,
  synthesize,
} from './synthesis.js';

const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab';
const region = 'eu-west-1';
const serviceTypes = [
  'AWS::ECS::Cluster',
  'AWS::ECS::Service',
  'AWS::ECS::TaskDefinition',
  'AWS::ElasticLoadBalancingV2::LoadBalancer',
  'AWS::ElasticLoadBalancingV2::TargetGroup',
  'AWS::ElasticLoadBalancingV2::Listener',
  'AWS::ApplicationAutoScaling::ScalableTarget',
  'AWS::EC2::VPC',
  'AWS::S3::Bucket',
];

const off = synthesize();
const regional = synthesize({ env: { region } });
const on = synthesize({ env: { region }, grpcService: { certificateArn, domainName: 'grpc.example.com' } });
const { template } = on;
const grpc = child(on.stack, 'Grpc', GrpcService);
const mcp = child(on.stack, 'Mcp', GatewayFunction);

/** The one resource of a type in a template. */
/** The resources of a type, but for the configuration bundles' bucket, which every stack has. */
const ownResourcesOf = (from: Template, type: string) =>
  new Map([...resourcesOf(from, type)].filter(([id]) => !id.startsWith('ConfigBundles')));

const onlyIn = (from: Template, type: string) => {
  const found = [...ownResourcesOf(from, type).entries()];
  expect(found, type).toHaveLength(1);
  const [entry] = found;
  if (entry === undefined) throw new Error(`no ${type}`);
  return { id: entry[0], properties: propertiesOf(entry[1]) };
};
const only = (type: string) => onlyIn(template, type);
const containerIn = (from: Template): JsonObject => {
  const definitions = onlyIn(from, 'AWS::ECS::TaskDefinition').properties.ContainerDefinitions;
  if (!Array.isArray(definitions) || definitions.length !== 1 || !isObject(definitions[0])) {
    throw new Error('the task definition should have one container');
  }
  return definitions[0];
};
const container = () => containerIn(template);
const environmentIn = (from: Template): Record<string, unknown> => {
  const variables = containerIn(from).Environment;
  if (!Array.isArray(variables)) return {};
  return Object.fromEntries(variables.filter(isObject).map((variable) => [String(variable.Name), variable.Value]));
};

describe('the gRPC service, off by default', () => {
  it(verifies('aws.grpc-service', 'adds nothing to the stack without the flag'), () => {
    for (const type of serviceTypes) expect(ownResourcesOf(off.template, type).size, type).toBe(0);
    expect(Object.keys(off.template.toJSON().Resources ?? {}).filter((id) => id.startsWith('Grpc'))).toEqual([]);
    expect(Object.keys(off.template.toJSON().Outputs ?? {}).filter((id) => id.startsWith('Grpc'))).toEqual([]);
    expect(off.stack.node.tryFindChild('Grpc')).toBeUndefined();
  });

  it(verifies('aws.grpc-service', 'only adds its own resources and outputs, changing none of the rest'), () => {
    // The same stack in the same region without the flag, against the stack with it.
    const without: Record<string, unknown> = regional.template.toJSON().Resources ?? {};
    const withService: Record<string, unknown> = template.toJSON().Resources ?? {};
    expect(Object.keys(without).length).toBeGreaterThan(50);
    for (const [id, resource] of Object.entries(without)) expect(withService[id], id).toEqual(resource);
    const added = Object.keys(withService).filter((id) => !(id in without));
    expect(added.filter((id) => !id.startsWith('Grpc'))).toEqual([]);
    expect(added.length).toBeGreaterThan(20);
    const outputs = (from: Template) => Object.keys(from.toJSON().Outputs ?? {});
    expect(outputs(template).filter((id) => !outputs(regional.template).includes(id))).toEqual([
      'GrpcEndpoint',
      'GrpcLoadBalancerDns',
    ]);
  });
});

describe('the gRPC service, with grpc=true', () => {
  it(
    verifies('aws.grpc-service', 'runs an ARM64 Fargate service of the Dockerfile image, Container Insights on'),
    () => {
      template.hasResourceProperties('AWS::ECS::Cluster', {
        ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }],
      });
      const task = only('AWS::ECS::TaskDefinition').properties;
      expect(task).toMatchObject({
        RequiresCompatibilities: ['FARGATE'],
        NetworkMode: 'awsvpc',
        Cpu: '256',
        Memory: '512',
        RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      });
      expect(container()).toMatchObject({
        Essential: true,
        ReadonlyRootFilesystem: true,
        PortMappings: [{ ContainerPort: grpcContainerPort, Protocol: 'tcp', AppProtocol: 'grpc' }],
        LogConfiguration: { LogDriver: 'awslogs' },
      });
      // The image is the repo's Docker build context, staged by synthesis and built by a deploy.
      const assets = grpc.node.findAll().filter((node): node is DockerImageAsset => node instanceof DockerImageAsset);
      expect(assets).toHaveLength(1);
      expect(JSON.stringify(container().Image)).toContain(`container-assets-`);
      expect(JSON.stringify(container().Image)).toContain(assets[0]?.assetHash);
      template.hasResourceProperties('AWS::ECS::Service', {
        LaunchType: 'FARGATE',
        DesiredCount: 1,
        DeploymentConfiguration: Match.objectLike({ DeploymentCircuitBreaker: { Enable: true, Rollback: true } }),
        NetworkConfiguration: { AwsvpcConfiguration: Match.objectLike({ AssignPublicIp: 'DISABLED' }) },
        LoadBalancers: [Match.objectLike({ ContainerName: 'Gateway', ContainerPort: grpcContainerPort })],
      });
    },
  );

  it(verifies('aws.grpc-service', "gives the container the MCP function's environment and the token checks"), () => {
    const environment = environmentIn(template);
    const mcpEnvironment = environmentOf(template, logicalIdOf(mcp.function));
    const { POWERTOOLS_SERVICE_NAME: _name, ...shared } = mcpEnvironment;
    expect(environment).toMatchObject(shared);
    expect(Object.keys(shared)).toEqual(
      expect.arrayContaining(['EXECUTIONS_TABLE', 'CONFIG_TABLE', 'DATA_KEY_ID', 'STATE_MACHINE_ARN']),
    );
    const pool = { Ref: logicalIdOf(on.stack.node.findChild('AgentIdentity').node.findChild('Pool')) };
    const cognito = ['https://cognito-idp.', { Ref: 'AWS::Region' }, '.amazonaws.com/', pool];
    const issuer = { 'Fn::Join': ['', cognito] };
    expect(environment).toMatchObject({
      POWERTOOLS_SERVICE_NAME: 'grpc',
      GRPC_PORT: String(grpcContainerPort),
      AGENT_CLAIM: 'client_id',
      AGENT_JWT_ISSUER: issuer,
      AGENT_JWT_SCOPES: 'approval-gateway/invoke',
      AGENT_JWKS_URI: { 'Fn::Join': ['', [...cognito, '/.well-known/jwks.json']] },
    });
    // The same token check as the agent authorizer's: every variable of it, alike.
    const authorizer = on.stack.node.findChild('AgentAuthorizer');
    if (!(authorizer instanceof GatewayFunction)) throw new Error('no agent authorizer');
    const { POWERTOOLS_SERVICE_NAME: _authorizer, ...tokenCheck } = environmentOf(
      template,
      logicalIdOf(authorizer.function),
    );
    expect(environment).toMatchObject(tokenCheck);
    expect(environment.AGENT_JWT_AUDIENCE).toBe('');
    expect(environment.API_URL).toBeDefined();
  });

  it(verifies('aws.grpc-service', 'passes an outside issuer on, and finds its keys by discovery'), () => {
    const outside = synthesize({
      env: { region },
      agentAuthorization: {
        issuer: 'https://login.example.com/',
        audience: ['gateway', 'gateway-2'],
        agentClaim: 'azp',
      },
      grpcService: { certificateArn },
    });
    const variables = environmentIn(outside.template);
    expect(variables).toMatchObject({
      AGENT_JWT_ISSUER: 'https://login.example.com/',
      AGENT_JWT_AUDIENCE: 'gateway,gateway-2',
      AGENT_JWT_SCOPES: '',
      AGENT_CLAIM: 'azp',
    });
    expect(variables).not.toHaveProperty('AGENT_JWKS_URI');
    expect(nagFindings(outside)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });

  it(
    verifies('aws.grpc-target-group', 'targets the tasks with protocol version GRPC and the gRPC health check'),
    () => {
      const targets = only('AWS::ElasticLoadBalancingV2::TargetGroup').properties;
      expect(targets).toMatchObject({
        Protocol: 'HTTP',
        ProtocolVersion: 'GRPC',
        Port: grpcContainerPort,
        TargetType: 'ip',
        HealthCheckEnabled: true,
        HealthCheckProtocol: 'HTTP',
        HealthCheckPath: '/grpc.health.v1.Health/Check',
        Matcher: { GrpcCode: '0' },
      });
      expect(grpcHealthCheckPath).toBe('/grpc.health.v1.Health/Check');
    },
  );

  it(verifies('aws.grpc-service', 'listens on HTTPS 443 only, with the certificate given, and logs access'), () => {
    const listener = only('AWS::ElasticLoadBalancingV2::Listener').properties;
    expect(listener).toMatchObject({
      Port: 443,
      Protocol: 'HTTPS',
      Certificates: [{ CertificateArn: certificateArn }],
      SslPolicy: 'ELBSecurityPolicy-TLS13-1-2-2021-06',
      DefaultActions: [
        { Type: 'forward', TargetGroupArn: { Ref: only('AWS::ElasticLoadBalancingV2::TargetGroup').id } },
      ],
    });
    const balancer = only('AWS::ElasticLoadBalancingV2::LoadBalancer').properties;
    expect(balancer).toMatchObject({ Scheme: 'internet-facing', Type: 'application' });
    expect(balancer.LoadBalancerAttributes).toEqual(
      expect.arrayContaining([
        { Key: 'access_logs.s3.enabled', Value: 'true' },
        { Key: 'access_logs.s3.bucket', Value: { Ref: only('AWS::S3::Bucket').id } },
        { Key: 'routing.http2.enabled', Value: 'true' },
        { Key: 'idle_timeout.timeout_seconds', Value: '3600' },
      ]),
    );
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: Match.objectLike({ BlockPublicAcls: true, RestrictPublicBuckets: true }),
    });
    expect(template.toJSON().Outputs?.GrpcEndpoint?.Value).toBe('grpc.example.com:443');
  });

  it(
    verifies(
      'aws.grpc-service',
      'lets the world reach the load balancer on 443 and only the load balancer reach the tasks',
    ),
    () => {
      const groups = resourcesOf(template, 'AWS::EC2::SecurityGroup');
      const balancerGroup = logicalIdOf(grpc.loadBalancer.connections.securityGroups[0] ?? grpc);
      const serviceGroup = logicalIdOf(grpc.service.connections.securityGroups[0] ?? grpc);
      expect(propertiesOf(groups.get(balancerGroup)).SecurityGroupIngress).toEqual([
        expect.objectContaining({ CidrIp: '0.0.0.0/0', FromPort: 443, ToPort: 443, IpProtocol: 'tcp' }),
      ]);
      expect(propertiesOf(groups.get(serviceGroup)).SecurityGroupIngress).toBeUndefined();
      const ingress = [...resourcesOf(template, 'AWS::EC2::SecurityGroupIngress').values()].map(propertiesOf);
      expect(ingress).toEqual([
        expect.objectContaining({
          GroupId: { 'Fn::GetAtt': [serviceGroup, 'GroupId'] },
          SourceSecurityGroupId: { 'Fn::GetAtt': [balancerGroup, 'GroupId'] },
          FromPort: grpcContainerPort,
          ToPort: grpcContainerPort,
        }),
      ]);
    },
  );

  it(verifies('aws.grpc-service', 'scales between 1 and 4 tasks on requests per target and CPU'), () => {
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 1,
      MaxCapacity: 4,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    const metrics = [...resourcesOf(template, 'AWS::ApplicationAutoScaling::ScalingPolicy').values()]
      .map(propertiesOf)
      .map((policy) => policy.TargetTrackingScalingPolicyConfiguration)
      .filter(isObject)
      .map((configuration) => configuration.PredefinedMetricSpecification)
      .filter(isObject)
      .map((metric) => metric.PredefinedMetricType)
      .sort();
    expect(metrics).toEqual(['ALBRequestCountPerTarget', 'ECSServiceAverageCPUUtilization']);
  });

  it(verifies('aws.grpc-grants', "grants the tasks' role exactly what the MCP function's role has on the data"), () => {
    const taskRole = logicalIdOf(grpc.taskRole);
    const mcpRole = logicalIdOf(mcp.role);
    for (const service of ['dynamodb', 'kms', 's3', 'secretsmanager']) {
      expect(grantsOf(template, taskRole, service), service).toEqual(grantsOf(template, mcpRole, service));
      expect(grantsOf(template, taskRole, service).length, service).toBeGreaterThan(0);
    }
    // The stream serves tools/call but not tasks/cancel: it starts approval runs and never signals one.
    const states = grantsOf(template, taskRole, 'states');
    expect(states).toEqual(grantsOf(template, mcpRole, 'states').filter((grant) => grant.includes('StartExecution')));
    expect(states).toHaveLength(1);
    // Four actions on the table and on its indexes, and GetItem on the config table.
    expect(grantsOf(template, taskRole, 'dynamodb')).toHaveLength(9);
    // ... and nothing else: no logs, no X-Ray, no other service.
    const services = statementsForRole(template, taskRole)
      .flatMap(actionsOf)
      .map((action) => action.split(':')[0]);
    expect([...new Set(services)].sort()).toEqual(['dynamodb', 'kms', 's3', 'secretsmanager', 'states']);
  });

  it(verifies('aws.grpc-service', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
    expect(nagFindings(on)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });

  it(verifies('aws.grpc-service', 'refuses a bad certificate, a stack without a region and bad task counts'), () => {
    expect(() => synthesize({ env: { region }, grpcService: { certificateArn: 'my-cert' } })).toThrow(
      /certificateArn must be an ACM certificate ARN.*got "my-cert"/,
    );
    expect(() => synthesize({ grpcService: { certificateArn } })).toThrow(/needs a region/);
    expect(() => synthesize({ env: { region }, grpcService: { certificateArn, minTasks: 3, maxTasks: 2 } })).toThrow(
      /maxTasks must be a whole number of at least 3 \(got 2\)/,
    );
  });

  it(verifies('aws.grpc-service', 'stops app.ts with a clear error when grpc=true has no certificate'), async () => {
    const run = promisify(execFile);
    const failure = await run(process.execPath, ['--import', 'tsx', projectPath('infra/app.ts')], {
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ grpc: 'true' }) },
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isObject(failure) ? String(failure.stderr) : 'it did not fail').toContain(
      'grpc=true needs -c grpcCertificateArn=<ACM certificate ARN>',
    );
  });
});

describe('the image', () => {
  const dockerfile = readFileSync(projectPath('Dockerfile'), 'utf8');
  const ignored = readFileSync(projectPath('.dockerignore'), 'utf8');

  it(
    verifies('aws.grpc-service', 'is built from the repo by its Dockerfile: Node 24, one bundle, non-root, port 50051'),
    () => {
      expect(dockerfile).toMatch(/^FROM .*node:24-bookworm-slim AS build$/m);
      expect(dockerfile).toMatch(/^FROM node:24-bookworm-slim$/m);
      expect(dockerfile).toContain('RUN npm ci');
      expect(dockerfile).toContain('node_modules/.bin/esbuild infra/container/grpc-main.ts');
      expect(dockerfile).toContain('--outfile=dist/grpc-main.mjs');
      expect(dockerfile).toContain('cp node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm_bg.wasm dist/');
      expect(dockerfile).toMatch(/^USER node$/m);
      expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${grpcContainerPort}$`, 'm'));
      expect(dockerfile).toMatch(/^CMD \["node", "dist\/grpc-main\.mjs"\]$/m);
      // The build context keeps what the build reads and nothing else.
      expect(ignored.split('\n')).toEqual(
        expect.arrayContaining(['*', '!package.json', '!package-lock.json', '!shared/', '!functions/', '!infra/']),
      );
    },
  );
});
