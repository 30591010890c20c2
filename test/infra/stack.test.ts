// CDK assertion tests for the gateway stack: its shape (table, functions, API) and its least
// privilege (IAM grants, cdk-nag AwsSolutions). Each App is synthesized once, with esbuild
// bundling skipped ('aws:cdk:bundling-stacks': []) and the cdk-nag pack registered as app.ts does.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  App,
  CfnElement,
  type IPolicyValidationContext,
  type PolicyValidationPluginReport,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { AgentIdentity } from '../../infra/constructs/agent-identity.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { GatewayTable } from '../../infra/constructs/gateway-table.js';
import { McpApi } from '../../infra/constructs/mcp-api.js';
import { GatewayStack, type GatewayStackProps } from '../../infra/gateway-stack.js';
import { configTable, executionsTable, type KeyAttribute } from '../../shared/adapters/dynamodb/tables.js';

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** IAM and CloudFormation accept one value or a list in many places. */
const asList = (value: unknown): unknown[] => {
  if (Array.isArray(value)) return value;
  return value === undefined ? [] : [value];
};

/** The AwsSolutions pack, remembering what it reported each time the synthesis ran it. */
class RecordingAwsSolutionsChecks extends AwsSolutionsChecks {
  readonly reports: PolicyValidationPluginReport[] = [];

  override validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    const report = super.validate(context);
    this.reports.push(report);
    return report;
  }
}

interface Synthesized {
  readonly stack: GatewayStack;
  readonly template: Template;
  readonly nag: RecordingAwsSolutionsChecks;
  /** The parsed validation-report.json of the cloud assembly. */
  readonly validationReport: unknown;
}

const synthesize = (props?: GatewayStackProps): Synthesized => {
  const app = new App({
    context: {
      // No stack needs bundling: NodejsFunction does not run esbuild.
      'aws:cdk:bundling-stacks': [],
      // Keep the assembly and its validation report when findings exist, so the cdk-nag test
      // below names them instead of every test failing on a thrown synthesis.
      '@aws-cdk/core:failSynthOnValidationErrors': false,
    },
  });
  const stack = new GatewayStack(app, 'ApprovalGateway', props);
  const nag = new RecordingAwsSolutionsChecks(app);
  Validations.of(app).addPlugins(nag);
  if (stack.bundlingRequired) throw new Error('Bundling would run: the test app must skip esbuild.');
  const assembly = app.synth();
  const validationReport: unknown = JSON.parse(
    readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8'),
  );
  const template = Template.fromStack(stack);
  // Everything needed is read: do not leave a temporary cloud assembly behind per run.
  rmSync(assembly.directory, { recursive: true, force: true });
  return { stack, template, nag, validationReport };
};

const child = <T extends IConstruct>(scope: IConstruct, id: string, type: abstract new (...args: never[]) => T): T => {
  const found = scope.node.findChild(id);
  if (!(found instanceof type)) throw new Error(`${scope.node.path}/${id} is not a ${type.name}`);
  return found;
};

const logicalIdOf = (construct: IConstruct): string => {
  const cfn = construct.node.defaultChild;
  if (!(cfn instanceof CfnElement)) throw new Error(`${construct.node.path} has no CloudFormation element`);
  return Stack.of(construct).getLogicalId(cfn);
};

const resourcesOf = (template: Template, type: string): Map<string, JsonObject> => {
  const found: Record<string, unknown> = template.findResources(type);
  const resources = new Map<string, JsonObject>();
  for (const [logicalId, resource] of Object.entries(found)) {
    if (!isObject(resource)) throw new Error(`${logicalId} is not an object`);
    resources.set(logicalId, resource);
  }
  return resources;
};

const propertiesOf = (resource: JsonObject | undefined): JsonObject => {
  const properties = resource?.Properties;
  return isObject(properties) ? properties : {};
};

/** The statements of the IAM policies attached to a role (by Ref in the policy's Roles). */
const statementsForRole = (template: Template, roleLogicalId: string): JsonObject[] =>
  [...resourcesOf(template, 'AWS::IAM::Policy').values()]
    .map(propertiesOf)
    .filter((policy) => asList(policy.Roles).some((role) => isObject(role) && role.Ref === roleLogicalId))
    .flatMap((policy) => (isObject(policy.PolicyDocument) ? asList(policy.PolicyDocument.Statement) : []))
    .filter(isObject);

const allStatements = (template: Template): JsonObject[] =>
  [...resourcesOf(template, 'AWS::IAM::Policy').values()]
    .map(propertiesOf)
    .flatMap((policy) => (isObject(policy.PolicyDocument) ? asList(policy.PolicyDocument.Statement) : []))
    .filter(isObject);

const actionsOf = (statement: JsonObject): string[] =>
  asList(statement.Action).filter((action): action is string => typeof action === 'string');

const isDynamoDbAction = (action: string): boolean => action.toLowerCase().startsWith('dynamodb:');

const keySchema = (partitionKey: KeyAttribute, sortKey: KeyAttribute | undefined) => [
  { AttributeName: partitionKey.name, KeyType: 'HASH' },
  ...(sortKey === undefined ? [] : [{ AttributeName: sortKey.name, KeyType: 'RANGE' }]),
];

const byName = (left: { AttributeName: string }, right: { AttributeName: string }) =>
  left.AttributeName.localeCompare(right.AttributeName);

/** Every key attribute of the table and its indexes, once, as AttributeDefinitions. */
const expectedAttributeDefinitions = () => {
  const keys = [
    executionsTable.partitionKey,
    executionsTable.sortKey,
    ...executionsTable.globalSecondaryIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
  ];
  const types = new Map(keys.map((key) => [key.name, key.type]));
  return [...types].map(([name, type]) => ({ AttributeName: name, AttributeType: type })).sort(byName);
};

const cognitoIssuer = (userPoolLogicalId: string) => ({
  'Fn::Join': ['', ['https://cognito-idp.', { Ref: 'AWS::Region' }, '.amazonaws.com/', { Ref: userPoolLogicalId }]],
});

const metadataRoutes = ['GET /.well-known/oauth-protected-resource', 'GET /.well-known/oauth-protected-resource/mcp'];

/** The AwsSolutions entries of the assembly's validation report (present only when it found something). */
const awsSolutionsReports = (validationReport: unknown): JsonObject[] =>
  (isObject(validationReport) ? asList(validationReport.pluginReports) : [])
    .filter(isObject)
    .filter((report) => report.pluginName === 'AwsSolutions');

const describeViolations = (violations: readonly unknown[]): string[] =>
  violations.filter(isObject).map((violation) => {
    const where = asList(violation.violatingResources ?? violation.violatingConstructs)
      .filter(isObject)
      .map((resource) => String(resource.constructPath));
    return `${String(violation.ruleName)} (${String(violation.severity)}) at ${where.join(', ')}`;
  });

describe('the stack with the default Cognito agent identity', () => {
  const { stack, template, nag, validationReport } = synthesize();
  const tableLogicalId = child(stack, 'Executions', GatewayTable).tableLogicalId;
  const mcp = child(stack, 'Mcp', GatewayFunction);
  const metadata = child(stack, 'ResourceMetadata', GatewayFunction);
  const identity = child(stack, 'AgentIdentity', AgentIdentity);
  const tableArn = { 'Fn::GetAtt': [tableLogicalId, 'Arn'] };
  const configTableLogicalId = child(stack, 'Config', GatewayTable).tableLogicalId;
  const configTableArn = { 'Fn::GetAtt': [configTableLogicalId, 'Arn'] };

  it('[aws.stack-shape] has the executions and configuration tables, keyed by the shared definitions', () => {
    const tables = resourcesOf(template, 'AWS::DynamoDB::GlobalTable');
    expect([...tables.keys()].sort()).toEqual([tableLogicalId, configTableLogicalId].sort());
    expect(propertiesOf(tables.get(configTableLogicalId)).KeySchema).toEqual(
      keySchema(configTable.partitionKey, undefined),
    );
    const properties = propertiesOf(tables.get(tableLogicalId));
    expect(properties.KeySchema).toEqual(keySchema(executionsTable.partitionKey, executionsTable.sortKey));
    const definitions = asList(properties.AttributeDefinitions)
      .filter(isObject)
      .map((definition) => ({
        AttributeName: String(definition.AttributeName),
        AttributeType: definition.AttributeType,
      }))
      .sort(byName);
    expect(definitions).toEqual(expectedAttributeDefinitions());
  });

  it('[aws.stack-shape] has the by-agent index, on-demand billing, point-in-time recovery and the retention TTL', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: executionsTable.globalSecondaryIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: keySchema(index.partitionKey, index.sortKey),
        // The store reads whole records off the index.
        Projection: { ProjectionType: 'ALL' },
      })),
      BillingMode: 'PAY_PER_REQUEST',
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
      TimeToLiveSpecification: { AttributeName: executionsTable.timeToLiveAttribute, Enabled: true },
    });
    expect(executionsTable.globalSecondaryIndexes.map((index) => index.indexName)).toContain('by-agent');
  });

  it('[aws.stack-shape] runs both functions on Node 24, arm64, with active tracing and handler index.handler', () => {
    const functions = resourcesOf(template, 'AWS::Lambda::Function');
    expect([...functions.keys()].sort()).toEqual([logicalIdOf(mcp.function), logicalIdOf(metadata.function)].sort());
    template.allResourcesProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      Handler: 'index.handler',
    });
  });

  it("[aws.stack-shape] has a JWT authorizer trusting the Cognito pool's issuer and its agent clients", () => {
    const clientRefs = identity.clients.map((client) => ({ Ref: logicalIdOf(client) }));
    expect(clientRefs.length).toBeGreaterThan(0);
    const authorizers = resourcesOf(template, 'AWS::ApiGatewayV2::Authorizer');
    expect(authorizers.size).toBe(1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Issuer: cognitoIssuer(logicalIdOf(identity.userPool)), Audience: clientRefs },
    });
  });

  it('[aws.stack-shape] puts the JWT authorizer on POST /mcp and leaves only the metadata routes public', () => {
    const [authorizerId] = [...resourcesOf(template, 'AWS::ApiGatewayV2::Authorizer').keys()];
    const api = child(stack, 'AgentApi', McpApi);
    const routes = [...resourcesOf(template, 'AWS::ApiGatewayV2::Route').values()].map(propertiesOf);
    const route = (key: string) => routes.find((properties) => properties.RouteKey === key);

    expect(route('POST /mcp')).toMatchObject({
      ApiId: { Ref: logicalIdOf(api.api) },
      AuthorizationType: 'JWT',
      AuthorizerId: { Ref: authorizerId },
      AuthorizationScopes: [identity.scope],
    });
    for (const key of metadataRoutes) {
      expect(route(key), key).toMatchObject({ AuthorizationType: 'NONE' });
      expect(route(key)?.AuthorizerId, key).toBeUndefined();
    }
    const otherRoutes = routes.filter((properties) => !metadataRoutes.includes(String(properties.RouteKey)));
    expect(otherRoutes.length).toBeGreaterThan(0);
    for (const properties of otherRoutes) {
      expect(properties, String(properties.RouteKey)).toMatchObject({
        AuthorizationType: 'JWT',
        AuthorizerId: { Ref: authorizerId },
      });
    }
  });

  it('[aws.stack-shape] logs access on the one $default stage', () => {
    const stages = [...resourcesOf(template, 'AWS::ApiGatewayV2::Stage').values()].map(propertiesOf);
    expect(stages).toHaveLength(1);
    const [stage] = stages;
    expect(stage).toMatchObject({ StageName: '$default', AutoDeploy: true });
    const logGroups = [...resourcesOf(template, 'AWS::Logs::LogGroup').keys()];
    const accessLogs = isObject(stage?.AccessLogSettings) ? stage.AccessLogSettings : {};
    expect(logGroups.map((logicalId) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] }))).toContainEqual(
      accessLogs.DestinationArn,
    );
    expect(accessLogs.Format).toEqual(expect.stringContaining('$context.requestId'));
  });

  it("[aws.stack-shape] gives the MCP function the table's name and the Cognito agent claim client_id", () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Approval Gateway MCP endpoint',
      Environment: {
        Variables: Match.objectLike({
          EXECUTIONS_TABLE: { Ref: tableLogicalId },
          AGENT_CLAIM: 'client_id',
          AUTHORIZATION_SERVERS: cognitoIssuer(logicalIdOf(identity.userPool)),
        }),
      },
      Role: { 'Fn::GetAtt': [logicalIdOf(mcp.role), 'Arn'] },
    });
  });

  it('[aws.least-privilege] attaches no managed policy to any role', () => {
    const roles = resourcesOf(template, 'AWS::IAM::Role');
    expect([...roles.keys()].sort()).toEqual([logicalIdOf(mcp.role), logicalIdOf(metadata.role)].sort());
    for (const [logicalId, role] of roles) {
      expect(propertiesOf(role), logicalId).not.toHaveProperty('ManagedPolicyArns');
    }
  });

  it('[aws.least-privilege] grants the MCP function reads of the configuration table and nothing more there', () => {
    const statements = statementsForRole(template, logicalIdOf(mcp.role)).filter((statement) =>
      asList(statement.Resource).some((resource) => JSON.stringify(resource).includes(configTableLogicalId)),
    );
    expect(statements.flatMap(actionsOf)).toEqual(['dynamodb:GetItem']);
    expect(statements.flatMap((statement) => asList(statement.Resource))).toEqual([configTableArn]);
  });

  it('[aws.least-privilege] grants the MCP function DynamoDB actions on the executions table and its indexes only', () => {
    const statements = statementsForRole(template, logicalIdOf(mcp.role));
    const dynamoDb = statements.filter(
      (statement) =>
        actionsOf(statement).some(isDynamoDbAction) &&
        !asList(statement.Resource).some((resource) => JSON.stringify(resource).includes(configTableLogicalId)),
    );
    expect(dynamoDb.length).toBeGreaterThan(0);
    for (const statement of dynamoDb) {
      expect(statement.Effect).toBe('Allow');
      expect(actionsOf(statement).every(isDynamoDbAction)).toBe(true);
      expect(actionsOf(statement).filter((action) => action.includes('*'))).toEqual([]);
      expect(asList(statement.Resource)).toEqual([tableArn, { 'Fn::Join': ['', [tableArn, '/index/*']] }]);
    }
    // Exactly what the execution store calls: get, put, update, query.
    expect(dynamoDb.flatMap(actionsOf).sort()).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    // Nothing anywhere in the stack touches DynamoDB on "*".
    for (const statement of allStatements(template)) {
      if (asList(statement.Resource).includes('*')) {
        expect(actionsOf(statement).filter(isDynamoDbAction)).toEqual([]);
        expect(actionsOf(statement).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      }
    }
  });

  it('[aws.least-privilege] lets only the MCP function use the rotating data key, for data keys and decryption', () => {
    const keyId = logicalIdOf(child(stack, 'DataKey', Key));
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    const onKey = (roleId: string) =>
      statementsForRole(template, roleId).filter((statement) =>
        asList(statement.Resource).some((resource) => JSON.stringify(resource).includes(keyId)),
      );
    expect(onKey(logicalIdOf(mcp.role)).flatMap(actionsOf).sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(onKey(logicalIdOf(metadata.role))).toEqual([]);
    const functions = template.findResources('AWS::Lambda::Function');
    const variables = JSON.stringify(propertiesOf(functions[logicalIdOf(mcp.function)]).Environment);
    expect(variables).toContain(`"DATA_KEY_ID":{"Fn::GetAtt":["${keyId}","Arn"]}`);
  });

  it('[aws.least-privilege] grants the metadata function no DynamoDB action at all, nor names the table', () => {
    const statements = statementsForRole(template, logicalIdOf(metadata.role));
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.flatMap(actionsOf).filter(isDynamoDbAction)).toEqual([]);
    const functionResource = template.findResources('AWS::Lambda::Function');
    const metadataFunction = functionResource[logicalIdOf(metadata.function)];
    const variables = propertiesOf(metadataFunction).Environment;
    expect(JSON.stringify(variables)).not.toContain('EXECUTIONS_TABLE');
  });

  it('[aws.least-privilege] answers no CORS preflight when no browser origin is allowed', () => {
    const api = propertiesOf(resourcesOf(template, 'AWS::ApiGatewayV2::Api').values().next().value);
    expect(api).not.toHaveProperty('CorsConfiguration');
  });

  it('[aws.least-privilege] leaves no unacknowledged cdk-nag AwsSolutions finding', () => {
    // The pack ran on this synthesis (an empty report would otherwise prove nothing) ...
    expect(nag.reports).toHaveLength(1);
    const violations = nag.reports.flatMap((report) => report.violations);
    expect(describeViolations(violations)).toEqual([]);
    expect(nag.reports.every((report) => report.success)).toBe(true);
    // ... and the assembly's validation report, which `cdk synth` fails on, agrees.
    const reported = awsSolutionsReports(validationReport);
    expect(describeViolations(reported.flatMap((report) => asList(report.violations)))).toEqual([]);
    const failed = (isObject(validationReport) ? asList(validationReport.pluginReports) : [])
      .filter(isObject)
      .filter((report) => report.conclusion === 'failure')
      .map((report) => String(report.pluginName));
    expect(failed).toEqual([]);
  });
});

describe('the stack with an explicit OIDC issuer', () => {
  const issuer = 'https://issuer.example.com';
  const { stack, template, nag, validationReport } = synthesize({
    agentAuthorization: { issuer, audience: ['gateway'] },
    allowedOrigins: ['app.example.com'],
  });

  it('[aws.least-privilege] answers CORS preflights for the allowed browser origins only', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: { AllowOrigins: ['https://app.example.com'] },
    });
    const mcpRoute = [...resourcesOf(template, 'AWS::ApiGatewayV2::Route').values()]
      .map(propertiesOf)
      .find((properties) => properties.RouteKey === 'POST /mcp');
    expect(mcpRoute).not.toHaveProperty('AuthorizationScopes');
  });
  const mcp = child(stack, 'Mcp', GatewayFunction);

  it('[aws.stack-shape] has a JWT authorizer trusting the given issuer and audience, and no Cognito pool', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      JwtConfiguration: { Issuer: issuer, Audience: ['gateway'] },
    });
    template.resourceCountIs('AWS::Cognito::UserPool', 0);
    expect(stack.node.tryFindChild('AgentIdentity')).toBeUndefined();
  });

  it('[aws.stack-shape] still protects POST /mcp with the JWT authorizer', () => {
    const [authorizerId] = [...resourcesOf(template, 'AWS::ApiGatewayV2::Authorizer').keys()];
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'POST /mcp',
      AuthorizationType: 'JWT',
      AuthorizerId: { Ref: authorizerId },
    });
  });

  it('[aws.stack-shape] names the agent by the sub claim and advertises the given issuer', () => {
    const tableLogicalId = child(stack, 'Executions', GatewayTable).tableLogicalId;
    template.hasResourceProperties('AWS::Lambda::Function', {
      Role: { 'Fn::GetAtt': [logicalIdOf(mcp.role), 'Arn'] },
      Environment: {
        Variables: Match.objectLike({
          EXECUTIONS_TABLE: { Ref: tableLogicalId },
          AGENT_CLAIM: 'sub',
          AUTHORIZATION_SERVERS: issuer,
        }),
      },
    });
  });

  it('[aws.least-privilege] leaves no unacknowledged cdk-nag AwsSolutions finding', () => {
    expect(nag.reports).toHaveLength(1);
    expect(describeViolations(nag.reports.flatMap((report) => report.violations))).toEqual([]);
    const reported = awsSolutionsReports(validationReport);
    expect(describeViolations(reported.flatMap((report) => asList(report.violations)))).toEqual([]);
  });
});
