// CDK assertion tests for the gateway stack: its shape (table, functions, API) and its least
// privilege (IAM grants, cdk-nag AwsSolutions). The staff-approval resources have their own file
// (approvals-stack.test.ts); both synthesize through ./synthesis.ts.
//
// Long: one assertion block per resource and per grant.
import { Match } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import { AgentIdentity } from '../../infra/constructs/agent-identity.js';
import { ApprovalStateMachine } from '../../infra/constructs/approval-state-machine.js';
import { ApproverConsole } from '../../infra/constructs/approver-console.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { GatewayTable } from '../../infra/constructs/gateway-table.js';
import { McpApi } from '../../infra/constructs/mcp-api.js';
import { configTable, executionsTable, type KeyAttribute } from '../../shared/adapters/dynamodb/tables.js';
import { verifies } from '../support/requirements.js';
import {
  actionsOf,
  allStatements,
  asList,
  awsSolutionsReports,
  child,
  describeViolations,
  environmentOf,
  httpAgentAuthorizers,
  isObject,
  logicalIdOf,
  ofApi,
  propertiesOf,
  resourcesOf,
  statementsForRole,
  synthesize,
} from './synthesis.js';

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

const metadataRoutes = [
  'GET /.well-known/oauth-protected-resource',
  'GET /.well-known/oauth-protected-resource/mcp',
  'GET /.well-known/jwks.json',
];
/** The approver console signs approvers in itself (OIDC and a signed session cookie); it serves the customer's pages too. */
const consoleRoutes = ['ANY /console', 'ANY /console/{proxy+}', 'ANY /customer/{proxy+}'];

describe('the stack with the default Cognito agent identity', () => {
  const { stack, template, nag, validationReport } = synthesize();
  const approvals = child(stack, 'Approvals', ApprovalStateMachine);
  const approverConsole = child(stack, 'Console', ApproverConsole).console;
  /** Every function of the stack: the agents' four, and the approval lifecycle's three. */
  const functions = [
    child(stack, 'Mcp', GatewayFunction),
    child(stack, 'ResourceMetadata', GatewayFunction),
    child(stack, 'CallToolSocket', GatewayFunction),
    child(stack, 'AgentAuthorizer', GatewayFunction),
    approvals.steps,
    approvals.reconciler,
    approverConsole,
  ];
  const tableLogicalId = child(stack, 'Executions', GatewayTable).tableLogicalId;
  const mcp = child(stack, 'Mcp', GatewayFunction);
  const metadata = child(stack, 'ResourceMetadata', GatewayFunction);
  const identity = child(stack, 'AgentIdentity', AgentIdentity);
  const tableArn = { 'Fn::GetAtt': [tableLogicalId, 'Arn'] };
  const configTableLogicalId = child(stack, 'Config', GatewayTable).tableLogicalId;
  const configTableArn = { 'Fn::GetAtt': [configTableLogicalId, 'Arn'] };

  it(
    verifies('aws.stack-shape', 'has the executions and configuration tables, keyed by the shared definitions'),
    () => {
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
    },
  );

  it(
    verifies(
      'aws.stack-shape',
      'has the by-agent index, on-demand billing, point-in-time recovery and the retention TTL',
    ),
    () => {
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
    },
  );

  it(
    verifies(
      'ops.retention',
      'expires final calls through TTL on retain_until, and keeps 35 days of point-in-time recovery on both tables',
    ),
    () => {
      const tables = resourcesOf(template, 'AWS::DynamoDB::GlobalTable');
      const executions = propertiesOf(tables.get(tableLogicalId));
      // The attribute the store writes on a final call, by name: a rename on either side fails here.
      expect(executions.TimeToLiveSpecification).toEqual({ AttributeName: 'retain_until', Enabled: true });
      expect(propertiesOf(tables.get(configTableLogicalId)).TimeToLiveSpecification).toBeUndefined();
      for (const logicalId of [tableLogicalId, configTableLogicalId]) {
        const replicas = asList(propertiesOf(tables.get(logicalId)).Replicas).filter(isObject);
        expect(replicas).toHaveLength(1);
        expect(replicas[0]?.PointInTimeRecoverySpecification).toEqual({
          PointInTimeRecoveryEnabled: true,
          RecoveryPeriodInDays: 35,
        });
      }
    },
  );

  it(
    verifies('aws.stack-shape', 'runs every function on Node 24, arm64, with active tracing and handler index.handler'),
    () => {
      const resources = resourcesOf(template, 'AWS::Lambda::Function');
      expect([...resources.keys()].sort()).toEqual(functions.map((fn) => logicalIdOf(fn.function)).sort());
      template.allResourcesProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        Handler: 'index.handler',
      });
    },
  );

  const agentAuthorizer = child(stack, 'AgentAuthorizer', GatewayFunction);

  it(
    verifies(
      ['aws.stack-shape', 'agents.any-app-client'],
      "fixes no audience at synth: the agent authorizer trusts the pool's issuer and the agent scope, not the clients known now",
    ),
    () => {
      expect(identity.clients.length).toBeGreaterThan(0);
      expect(httpAgentAuthorizers(template).size).toBe(1);
      template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Authorizer', { AuthorizerType: 'JWT' }, 0);
      template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
        AuthorizerType: 'REQUEST',
        AuthorizerPayloadFormatVersion: '2.0',
        EnableSimpleResponses: true,
        IdentitySource: ['$request.header.Authorization'],
        AuthorizerResultTtlInSeconds: 300,
      });
      const [authorizer] = [...httpAgentAuthorizers(template).values()].map(propertiesOf);
      expect(JSON.stringify(authorizer?.AuthorizerUri)).toContain(logicalIdOf(agentAuthorizer.function));
      const variables = environmentOf(template, logicalIdOf(agentAuthorizer.function));
      expect(variables).toMatchObject({
        AGENT_JWT_ISSUER: cognitoIssuer(logicalIdOf(identity.userPool)),
        AGENT_JWT_AUDIENCE: '',
        AGENT_JWT_SCOPES: identity.scope,
        AGENT_CLAIM: 'client_id',
        GROUPS_CLAIM: '',
        CUSTOMER_CLAIM: '',
      });
      // No client id of the pool reaches the token check: one created later is as good.
      const clientIds = identity.clients.map((client) => logicalIdOf(client));
      for (const clientId of clientIds) expect(JSON.stringify(variables)).not.toContain(clientId);
    },
  );

  it(
    verifies(
      'aws.stack-shape',
      'puts the agent authorizer on POST /mcp and leaves only the metadata, receipt keys and console routes public',
    ),
    () => {
      const [authorizerId] = [...httpAgentAuthorizers(template).keys()];
      const api = child(stack, 'AgentApi', McpApi);
      const routes = ofApi(template, 'AWS::ApiGatewayV2::Route', logicalIdOf(api.api));
      const route = (key: string) => routes.find((properties) => properties.RouteKey === key);

      expect(route('POST /mcp')).toMatchObject({
        ApiId: { Ref: logicalIdOf(api.api) },
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
      for (const key of metadataRoutes) {
        expect(route(key), key).toMatchObject({ AuthorizationType: 'NONE' });
        expect(route(key)?.AuthorizerId, key).toBeUndefined();
      }
      const publicRoutes = [...metadataRoutes, ...consoleRoutes];
      for (const key of consoleRoutes) {
        expect(route(key), key).toMatchObject({ AuthorizationType: 'NONE' });
        expect(route(key)?.AuthorizerId, key).toBeUndefined();
      }
      const otherRoutes = routes.filter((properties) => !publicRoutes.includes(String(properties.RouteKey)));
      expect(otherRoutes.length).toBeGreaterThan(0);
      for (const properties of otherRoutes) {
        expect(properties, String(properties.RouteKey)).toMatchObject({
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
        });
      }
    },
  );

  it(verifies('aws.stack-shape', 'logs access on the one $default stage'), () => {
    const stages = ofApi(template, 'AWS::ApiGatewayV2::Stage', logicalIdOf(child(stack, 'AgentApi', McpApi).api));
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

  it(verifies('aws.stack-shape', "gives the MCP function the table's name and the issuer it advertises"), () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'Approval Gateway MCP endpoint',
      Environment: {
        Variables: Match.objectLike({
          EXECUTIONS_TABLE: { Ref: tableLogicalId },
          AUTHORIZATION_SERVERS: cognitoIssuer(logicalIdOf(identity.userPool)),
        }),
      },
      Role: { 'Fn::GetAtt': [logicalIdOf(mcp.role), 'Arn'] },
    });
  });

  it(verifies('aws.least-privilege', 'attaches no managed policy to any role'), () => {
    const roles = resourcesOf(template, 'AWS::IAM::Role');
    expect([...roles.keys()].sort()).toEqual(
      [...functions.map((fn) => logicalIdOf(fn.role)), logicalIdOf(approvals.stateMachine.role)].sort(),
    );
    for (const [logicalId, role] of roles) {
      expect(propertiesOf(role), logicalId).not.toHaveProperty('ManagedPolicyArns');
    }
  });

  it(
    verifies('aws.least-privilege', 'grants the MCP function reads of the configuration table and nothing more there'),
    () => {
      const statements = statementsForRole(template, logicalIdOf(mcp.role)).filter((statement) =>
        asList(statement.Resource).some((resource) => JSON.stringify(resource).includes(configTableLogicalId)),
      );
      expect(statements.flatMap(actionsOf)).toEqual(['dynamodb:GetItem']);
      expect(statements.flatMap((statement) => asList(statement.Resource))).toEqual([configTableArn]);
    },
  );

  it(
    verifies(
      'aws.least-privilege',
      'grants the MCP function DynamoDB actions on the executions table and its indexes only',
    ),
    () => {
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
      // Nothing anywhere in the stack touches DynamoDB on "*": only X-Ray and, for the state
      // machine, log delivery are granted there (neither accepts a narrower resource).
      for (const statement of allStatements(template)) {
        if (asList(statement.Resource).includes('*')) {
          expect(actionsOf(statement).filter(isDynamoDbAction)).toEqual([]);
          expect(actionsOf(statement).every((action) => /^(xray|logs):/.test(action))).toBe(true);
        }
      }
      for (const fn of functions) {
        const wildcard = statementsForRole(template, logicalIdOf(fn.role)).filter((statement) =>
          asList(statement.Resource).includes('*'),
        );
        expect(wildcard.flatMap(actionsOf).sort(), fn.node.path).toEqual([
          'xray:PutTelemetryRecords',
          'xray:PutTraceSegments',
        ]);
      }
    },
  );

  it(
    verifies(
      'aws.least-privilege',
      'lets only the MCP function use the rotating data key, for data keys and decryption',
    ),
    () => {
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
    },
  );

  it(
    verifies('aws.least-privilege', 'grants the metadata function no DynamoDB action at all, nor names the table'),
    () => {
      const statements = statementsForRole(template, logicalIdOf(metadata.role));
      expect(statements.length).toBeGreaterThan(0);
      expect(statements.flatMap(actionsOf).filter(isDynamoDbAction)).toEqual([]);
      const functionResource = template.findResources('AWS::Lambda::Function');
      const metadataFunction = functionResource[logicalIdOf(metadata.function)];
      const variables = propertiesOf(metadataFunction).Environment;
      expect(JSON.stringify(variables)).not.toContain('EXECUTIONS_TABLE');
    },
  );

  it(verifies('aws.least-privilege', 'answers no CORS preflight when no browser origin is allowed'), () => {
    const api = propertiesOf(resourcesOf(template, 'AWS::ApiGatewayV2::Api').values().next().value);
    expect(api).not.toHaveProperty('CorsConfiguration');
  });

  it(verifies('aws.least-privilege', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
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
    // Approvers and customers sign in at the organization's provider too, so no pool is created for anyone.
    approverSignIn: { issuer, clientId: 'approver-console' },
    customerSignIn: { issuer, clientId: 'customer-pages' },
  });

  it(verifies('aws.least-privilege', 'answers CORS preflights for the allowed browser origins only'), () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: { AllowOrigins: ['https://app.example.com'] },
    });
    const mcpRoute = [...resourcesOf(template, 'AWS::ApiGatewayV2::Route').values()]
      .map(propertiesOf)
      .find((properties) => properties.RouteKey === 'POST /mcp');
    expect(mcpRoute).not.toHaveProperty('AuthorizationScopes');
  });
  const mcp = child(stack, 'Mcp', GatewayFunction);

  it(
    verifies(
      ['aws.stack-shape', 'agents.any-app-client'],
      'checks the given issuer and audience in the agent authorizer, and has no Cognito pool',
    ),
    () => {
      expect(httpAgentAuthorizers(template).size).toBe(1);
      const authorizer = child(stack, 'AgentAuthorizer', GatewayFunction);
      expect(environmentOf(template, logicalIdOf(authorizer.function))).toMatchObject({
        AGENT_JWT_ISSUER: issuer,
        AGENT_JWT_AUDIENCE: 'gateway',
        AGENT_JWT_SCOPES: '',
        AGENT_CLAIM: 'sub',
        GROUPS_CLAIM: '',
        CUSTOMER_CLAIM: '',
      });
      template.resourceCountIs('AWS::Cognito::UserPool', 0);
      expect(stack.node.tryFindChild('AgentIdentity')).toBeUndefined();
      expect(stack.node.tryFindChild('ApproverIdentity')).toBeUndefined();
      expect(stack.node.tryFindChild('CustomerIdentity')).toBeUndefined();
    },
  );

  it(verifies('aws.stack-shape', 'still protects POST /mcp with the agent authorizer'), () => {
    const [authorizerId] = [...httpAgentAuthorizers(template).keys()];
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'POST /mcp',
      AuthorizationType: 'CUSTOM',
      AuthorizerId: { Ref: authorizerId },
    });
  });

  it(verifies('aws.stack-shape', 'advertises the given issuer'), () => {
    const tableLogicalId = child(stack, 'Executions', GatewayTable).tableLogicalId;
    template.hasResourceProperties('AWS::Lambda::Function', {
      Role: { 'Fn::GetAtt': [logicalIdOf(mcp.role), 'Arn'] },
      Environment: {
        Variables: Match.objectLike({
          EXECUTIONS_TABLE: { Ref: tableLogicalId },
          AUTHORIZATION_SERVERS: issuer,
        }),
      },
    });
  });

  it(verifies('aws.least-privilege', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
    expect(nag.reports).toHaveLength(1);
    expect(describeViolations(nag.reports.flatMap((report) => report.violations))).toEqual([]);
    const reported = awsSolutionsReports(validationReport);
    expect(describeViolations(reported.flatMap((report) => asList(report.violations)))).toEqual([]);
  });
});
