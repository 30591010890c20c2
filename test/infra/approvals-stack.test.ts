// CDK assertion tests for the staff-approval lifecycle in the stack: the state machine built from
// the repo's ASL, the approval run, reconciler and console functions, the console routes, the notice
// bus, the approvers' sign-in, and the grants each function gets for the calls its code makes.
//
// Long: one assertion block per approval resource and per grant.
import { readFileSync } from 'node:fs';
import { Stack } from 'aws-cdk-lib';
import { CfnUserPoolGroup } from 'aws-cdk-lib/aws-cognito';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Key } from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import { ApprovalStateMachine } from '../../infra/constructs/approval-state-machine.js';
import { ApproverConsole } from '../../infra/constructs/approver-console.js';
import { ApproverIdentity } from '../../infra/constructs/approver-identity.js';
import { ConfigBundles } from '../../infra/constructs/config-bundles.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { GatewayTable } from '../../infra/constructs/gateway-table.js';
import { McpApi } from '../../infra/constructs/mcp-api.js';
import { ReceiptKey } from '../../infra/constructs/receipt-key.js';
import { approvalDefinition, approvalDefinitionPath } from '../../infra/state-machine/definition.js';
import { verifies } from '../support/requirements.js';
import {
  actionsOf,
  allStatements,
  asList,
  child,
  environmentOf,
  grantsOf,
  isObject,
  type JsonObject,
  logicalIdOf,
  nagFindings,
  propertiesOf,
  resourceProperties,
  resourcesOf,
  type Synthesized,
  statementsForRole,
  synthesize,
} from './synthesis.js';

const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });
const grant = (action: string, resource: unknown) => `${action} ${JSON.stringify(resource)}`;
const consoleRouteKeys = ['ANY /console', 'ANY /console/{proxy+}', 'ANY /customer/{proxy+}'];

/** The stack's constructs and logical ids the approval tests talk about. */
const partsOf = ({ stack, template }: Synthesized) => {
  const approvals = child(stack, 'Approvals', ApprovalStateMachine);
  const approverConsole = child(stack, 'Console', ApproverConsole);
  const api = child(stack, 'AgentApi', McpApi);
  const functions = {
    mcp: child(stack, 'Mcp', GatewayFunction),
    metadata: child(stack, 'ResourceMetadata', GatewayFunction),
    steps: approvals.steps,
    reconciler: approvals.reconciler,
    console: approverConsole.console,
  };
  const stateMachineId = logicalIdOf(approvals.stateMachine);
  const tableId = child(stack, 'Executions', GatewayTable).tableLogicalId;
  return {
    approvals,
    approverConsole,
    api,
    functions,
    stateMachineId,
    stateMachineRoleId: logicalIdOf(approvals.stateMachine.role),
    /** The ARN every function is given and granted on, resolved as the template has it. */
    stateMachineArn: Stack.of(approvals).resolve(approvals.stateMachineArn) as unknown,
    stateMachine: resourceProperties(template, stateMachineId),
    tableArn: getAtt(tableId),
    openIndexArn: { 'Fn::Join': ['', [getAtt(tableId), '/index/open-by-deadline']] },
    agentIndexArn: { 'Fn::Join': ['', [getAtt(tableId), '/index/by-agent']] },
    configTableArn: getAtt(child(stack, 'Config', GatewayTable).tableLogicalId),
    dataKeyArn: getAtt(logicalIdOf(child(stack, 'DataKey', Key))),
    signingKeyArn: getAtt(logicalIdOf(child(stack, 'ConfigBundles', ConfigBundles).signingKey)),
    receiptKeyArn: getAtt(logicalIdOf(child(stack, 'ReceiptKey', ReceiptKey).key)),
    sessionKeyArn: getAtt(logicalIdOf(approverConsole.sessionKey)),
    busId: logicalIdOf(child(stack, 'Notices', EventBus)),
    apiEndpoint: getAtt(logicalIdOf(api.api), 'ApiEndpoint'),
  };
};

const routesOf = (synthesized: Synthesized) =>
  new Map(
    [...resourcesOf(synthesized.template, 'AWS::ApiGatewayV2::Route').values()]
      .map(propertiesOf)
      .map((route) => [String(route.RouteKey), route]),
  );

/** The Lambda function an HTTP API route's integration invokes. */
const routeTarget = (synthesized: Synthesized, route: JsonObject | undefined): unknown => {
  const target = JSON.stringify(route?.Target ?? null);
  const integrations = resourcesOf(synthesized.template, 'AWS::ApiGatewayV2::Integration');
  const matching = [...integrations.keys()].filter((logicalId) => target.includes(`"Ref":"${logicalId}"`));
  expect(matching).toHaveLength(1);
  return propertiesOf(integrations.get(matching[0] ?? '')).IntegrationUri;
};

describe('the approval lifecycle in the default stack', () => {
  const synthesized = synthesize();
  const { template, jsonAssets } = synthesized;
  const parts = partsOf(synthesized);
  const { approvals, functions, stateMachine, stateMachineArn } = parts;
  const roleId = (name: keyof typeof functions) => logicalIdOf(functions[name].role);
  const functionId = (name: keyof typeof functions) => logicalIdOf(functions[name].function);

  /** The state machine's ASL as Step Functions will read it, placeholders filled with markers. */
  const synthesizedDefinition = () => {
    const location = isObject(stateMachine.DefinitionS3Location) ? stateMachine.DefinitionS3Location : {};
    const text = jsonAssets.get(String(location.Key));
    if (text === undefined) throw new Error(`No staged asset ${String(location.Key)} holds the definition`);
    const substitutions = isObject(stateMachine.DefinitionSubstitutions) ? stateMachine.DefinitionSubstitutions : {};
    const filled = text.replace(/\$\{(\w+)\}/g, (whole, name: string) =>
      name in substitutions ? `<<${name}>>` : whole,
    );
    return { text, filled, substitutions };
  };
  const states = (): Record<string, JsonObject> => {
    const definition: unknown = JSON.parse(synthesizedDefinition().filled);
    if (!isObject(definition) || !isObject(definition.States)) throw new Error('The definition has no States');
    const result: Record<string, JsonObject> = {};
    for (const [name, state] of Object.entries(definition.States)) if (isObject(state)) result[name] = state;
    return result;
  };

  it(
    verifies(
      'aws.state-machine',
      "runs one Standard state machine built from the repo's ASL, filled with the partition and the held-call steps function",
    ),
    () => {
      template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
      expect(stateMachine.StateMachineType).toBe('STANDARD');
      const { text, filled, substitutions } = synthesizedDefinition();
      // The very file the local runtime runs, shipped as it is ...
      expect(text).toBe(readFileSync(approvalDefinitionPath, 'utf8'));
      // ... with every placeholder substituted, by exactly these values.
      expect(substitutions).toEqual({
        Partition: { Ref: 'AWS::Partition' },
        HeldCallStepsFunction: getAtt(functionId('steps')),
      });
      expect(filled).not.toMatch(/\$\{\w+\}/);
      expect(JSON.parse(filled)).toEqual(
        approvalDefinition({ Partition: '<<Partition>>', HeldCallStepsFunction: '<<HeldCallStepsFunction>>' }),
      );
      const tasks = Object.values(states()).filter((state) => state.Type === 'Task');
      expect(tasks.length).toBeGreaterThan(0);
      for (const task of tasks) {
        expect(String(task.Resource)).toMatch(/^arn:<<Partition>>:states:::lambda:invoke(\.waitForTaskToken)?$/);
        expect(isObject(task.Parameters) ? task.Parameters.FunctionName : undefined).toBe('<<HeldCallStepsFunction>>');
      }
    },
  );

  it(
    verifies(
      'aws.state-machine',
      'waits in AwaitDecision for the remaining approval time and leads States.Timeout to Expire',
    ),
    () => {
      const { AwaitDecision: awaitDecision, Expire: expire } = states();
      expect(awaitDecision?.Resource).toBe('arn:<<Partition>>:states:::lambda:invoke.waitForTaskToken');
      // The approval run input is {Payload: {execution_id, agent_id, timeout_seconds}} (StepFunctionsApprovalRuns).
      expect(awaitDecision?.TimeoutSecondsPath).toBe('$.Payload.timeout_seconds');
      expect(awaitDecision).not.toHaveProperty('TimeoutSeconds');
      const catches = asList(awaitDecision?.Catch).filter(isObject);
      expect(catches.filter((entry) => asList(entry.ErrorEquals).includes('States.Timeout'))).toEqual([
        expect.objectContaining({ ErrorEquals: ['States.Timeout'], Next: 'Expire' }),
      ]);
      expect(
        isObject(expire?.Parameters) && isObject(expire.Parameters.Payload) && expire.Parameters.Payload.action,
      ).toBe('expire');
    },
  );

  it(
    verifies(
      'aws.state-machine',
      'logs every transition to its own log group, without execution data, and traces with X-Ray',
    ),
    () => {
      expect(stateMachine.LoggingConfiguration).toEqual({
        Level: 'ALL',
        IncludeExecutionData: false,
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: getAtt(logicalIdOf(approvals.logGroup)) } }],
      });
      expect(stateMachine.TracingConfiguration).toEqual({ Enabled: true });
      const logGroup = resourceProperties(template, logicalIdOf(approvals.logGroup));
      expect(logGroup.LogGroupName).toBe(`/aws/vendedlogs/states/${String(stateMachine.StateMachineName)}`);
      expect(logGroup.RetentionInDays).toEqual(expect.any(Number));
    },
  );

  it(verifies('aws.state-machine', 'names the state machine the ARN every function is given'), () => {
    expect(JSON.stringify(stateMachineArn)).toContain(`:stateMachine:${String(stateMachine.StateMachineName)}"`);
    expect(JSON.stringify(stateMachineArn)).not.toContain(parts.stateMachineId);
    for (const name of ['mcp', 'steps', 'reconciler', 'console'] as const) {
      expect(environmentOf(template, functionId(name)).STATE_MACHINE_ARN, name).toEqual(stateMachineArn);
    }
    expect(environmentOf(template, functionId('metadata'))).not.toHaveProperty('STATE_MACHINE_ARN');
  });

  it(
    verifies(
      'aws.approval-resources',
      'has the approval run, reconciler and console functions, with the API URL for console links',
    ),
    () => {
      for (const name of ['steps', 'reconciler', 'console'] as const) {
        const environment = environmentOf(template, functionId(name));
        expect(environment, name).toMatchObject({
          EXECUTIONS_TABLE: { Ref: expect.any(String) },
          CONFIG_TABLE: { Ref: expect.any(String) },
          DATA_KEY_ID: parts.dataKeyArn,
          API_URL: parts.apiEndpoint,
        });
      }
      expect(resourceProperties(template, functionId('steps')).Handler).toBe('index.handler');
      // An approved call is sent within one task or pass: well beyond the MCP function's 30 s.
      expect(resourceProperties(template, functionId('steps')).Timeout).toBe(300);
      expect(resourceProperties(template, functionId('reconciler')).Timeout).toBe(300);
    },
  );

  it(
    verifies(
      'aws.least-privilege',
      'lets the state machine invoke exactly the held-call steps function, and nothing else invoke it',
    ),
    () => {
      const lambda = grantsOf(template, parts.stateMachineRoleId, 'lambda');
      expect(lambda).toEqual([grant('lambda:InvokeFunction', getAtt(functionId('steps')))]);
      const others = statementsForRole(template, parts.stateMachineRoleId).filter(
        (statement) => !actionsOf(statement).some((action) => action.startsWith('lambda:')),
      );
      for (const statement of others) {
        expect(asList(statement.Resource)).toEqual(['*']);
        expect(actionsOf(statement).every((action) => /^(logs|xray):/.test(action))).toBe(true);
      }
      for (const name of Object.keys(functions) as (keyof typeof functions)[]) {
        expect(grantsOf(template, roleId(name), 'lambda'), name).toEqual([]);
      }
    },
  );

  it(
    verifies(
      'aws.least-privilege',
      'grants Step Functions calls on the approval state machine only, as each function makes them',
    ),
    () => {
      const states = (name: keyof typeof functions) => grantsOf(template, roleId(name), 'states');
      // tasks/cancel tells a withdrawn call's approval run to end.
      expect(states('mcp')).toEqual(
        [grant('states:SendTaskSuccess', stateMachineArn), grant('states:StartExecution', stateMachineArn)].sort(),
      );
      expect(states('steps')).toEqual([grant('states:SendTaskSuccess', stateMachineArn)]);
      // Every run of this state machine: arn:…:execution:<state machine name>:*.
      const runs: unknown = JSON.parse(
        JSON.stringify(stateMachineArn).replace(/:stateMachine:([\w-]+)"/, ':execution:$1:*"'),
      );
      expect(states('reconciler')).toEqual(
        [
          grant('states:DescribeExecution', runs),
          grant('states:SendTaskSuccess', stateMachineArn),
          grant('states:StartExecution', stateMachineArn),
        ].sort(),
      );
      expect(states('console')).toEqual([grant('states:SendTaskSuccess', stateMachineArn)]);
      expect(states('metadata')).toEqual([]);
    },
  );

  it(verifies('aws.least-privilege', 'grants each approval function exactly the DynamoDB calls its code makes'), () => {
    const dynamodb = (name: keyof typeof functions) => grantsOf(template, roleId(name), 'dynamodb');
    const byKey = [grant('dynamodb:GetItem', parts.tableArn), grant('dynamodb:UpdateItem', parts.tableArn)];
    const readConfig = grant('dynamodb:GetItem', parts.configTableArn);
    const listOpen = grant('dynamodb:Query', parts.openIndexArn);
    expect(dynamodb('steps')).toEqual([...byKey, readConfig].sort());
    expect(dynamodb('reconciler')).toEqual([...byKey, readConfig, listOpen].sort());
    // The console finds a call by id alone (a query on the table), lists the agent's recent calls
    // beside a held one, and never reads the configuration.
    expect(dynamodb('console')).toEqual(
      [
        ...byKey,
        grant('dynamodb:Query', parts.tableArn),
        listOpen,
        grant('dynamodb:Query', parts.agentIndexArn),
      ].sort(),
    );
  });

  it(
    verifies(
      'aws.least-privilege',
      'lets the approval run and reconciler only decrypt with the data key and sign receipts, and the console only MAC with its session key',
    ),
    () => {
      const kms = (name: keyof typeof functions) => grantsOf(template, roleId(name), 'kms');
      // Each that loads the configuration also verifies its signature (config-bundles.test.ts).
      const verify = grant('kms:Verify', parts.signingKeyArn);
      expect(kms('mcp')).toEqual(
        [grant('kms:Decrypt', parts.dataKeyArn), grant('kms:GenerateDataKey', parts.dataKeyArn), verify].sort(),
      );
      // Both send approved calls, so both sign their receipts (receipt-key.test.ts).
      const sign = grant('kms:Sign', parts.receiptKeyArn);
      const publicKey = grant('kms:GetPublicKey', parts.receiptKeyArn);
      expect(kms('steps')).toEqual([grant('kms:Decrypt', parts.dataKeyArn), sign, publicKey, verify].sort());
      expect(kms('reconciler')).toEqual([grant('kms:Decrypt', parts.dataKeyArn), sign, publicKey, verify].sort());
      expect(kms('console')).toEqual(
        [grant('kms:GenerateMac', parts.sessionKeyArn), grant('kms:VerifyMac', parts.sessionKeyArn)].sort(),
      );
      expect(kms('metadata')).toEqual([publicKey]);
      expect(grantsOf(template, parts.stateMachineRoleId, 'kms')).toEqual([]);
    },
  );

  it(
    verifies(
      ['aws.least-privilege', 'escalation.where-it-runs', 'quorum.notices-count'],
      'lets only the functions that notify (the held-call steps, the reconciler for escalations, the console for approvals short of a quorum) put events, on the notice bus',
    ),
    () => {
      const busArn = getAtt(parts.busId);
      const notifying: readonly string[] = ['steps', 'reconciler', 'console'];
      for (const name of Object.keys(functions) as (keyof typeof functions)[]) {
        const expected = notifying.includes(name) ? [grant('events:PutEvents', busArn)] : [];
        expect(grantsOf(template, roleId(name), 'events'), name).toEqual(expected);
      }
      for (const name of ['steps', 'reconciler', 'console'] as const) {
        expect(environmentOf(template, functionId(name)).EVENT_BUS_NAME).toEqual({ Ref: parts.busId });
      }
    },
  );

  it(verifies('aws.least-privilege', 'grants no Step Functions, EventBridge, KMS or Lambda action on "*"'), () => {
    for (const statement of allStatements(template)) {
      if (!asList(statement.Resource).includes('*')) continue;
      expect(actionsOf(statement).filter((action) => /^(states|events|kms|lambda):/.test(action))).toEqual([]);
    }
  });

  it(verifies('aws.approval-resources', 'signs console sessions with a KMS HMAC key named in its environment'), () => {
    const key = resourceProperties(template, logicalIdOf(parts.approverConsole.sessionKey));
    expect(key).toMatchObject({ KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' });
    expect(environmentOf(template, functionId('console')).SESSION_KEY_ID).toEqual(parts.sessionKeyArn);
  });

  it(
    verifies(
      'aws.approval-resources',
      'routes ANY /console, /console/{proxy+} and /customer/{proxy+} to the console function without an authorizer; /mcp keeps the agent authorizer',
    ),
    () => {
      const routes = routesOf(synthesized);
      for (const key of consoleRouteKeys) {
        const route = routes.get(key);
        expect(route, key).toMatchObject({ AuthorizationType: 'NONE' });
        expect(route?.AuthorizerId, key).toBeUndefined();
        expect(routeTarget(synthesized, route), key).toEqual(getAtt(functionId('console')));
      }
      for (const key of ['POST /mcp', 'GET /mcp', 'DELETE /mcp']) {
        expect(routes.get(key), key).toMatchObject({
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: expect.any(String) },
        });
        expect(routeTarget(synthesized, routes.get(key)), key).toEqual(getAtt(functionId('mcp')));
      }
    },
  );

  it(
    verifies(
      'aws.approval-resources',
      'runs the reconciler every minute from a schedule rule, without retrying a failed pass',
    ),
    () => {
      const rules = [...resourcesOf(template, 'AWS::Events::Rule').values()].map(propertiesOf);
      expect(rules).toEqual([
        expect.objectContaining({
          ScheduleExpression: 'rate(1 minute)',
          State: 'ENABLED',
          Targets: [expect.objectContaining({ Arn: getAtt(functionId('reconciler')) })],
        }),
      ]);
      const permissions = [...resourcesOf(template, 'AWS::Lambda::Permission').values()]
        .map(propertiesOf)
        .filter((permission) => permission.Principal === 'events.amazonaws.com');
      expect(permissions).toEqual([
        expect.objectContaining({
          Action: 'lambda:InvokeFunction',
          FunctionName: getAtt(functionId('reconciler')),
          SourceArn: getAtt(logicalIdOf(approvals.schedule)),
        }),
      ]);
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: functionId('reconciler') },
        MaximumRetryAttempts: 0,
      });
    },
  );

  it(
    verifies(
      'aws.approval-resources',
      "creates the approvers' user pool: invited people only, email sign-in, an authenticator app required",
    ),
    () => {
      const identity = child(synthesized.stack, 'ApproverIdentity', ApproverIdentity);
      const pool = resourceProperties(template, logicalIdOf(identity.userPool));
      expect(pool).toMatchObject({
        AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
        UsernameAttributes: ['email'],
        MfaConfiguration: 'ON',
        EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
        UserPoolTier: 'PLUS',
        UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
      });
      const domain = resourceProperties(template, logicalIdOf(identity.domain));
      expect(JSON.stringify(domain.Domain)).toContain('approvers');
      template.resourceCountIs('AWS::Cognito::UserPoolGroup', 0);
    },
  );

  it(
    verifies(
      'aws.approval-resources',
      'signs the console in as a public code-flow client of that pool, back at /console/callback',
    ),
    () => {
      const identity = child(synthesized.stack, 'ApproverIdentity', ApproverIdentity);
      const client = resourceProperties(template, logicalIdOf(identity.client));
      expect(client).toMatchObject({
        UserPoolId: { Ref: logicalIdOf(identity.userPool) },
        AllowedOAuthFlows: ['code'],
        AllowedOAuthFlowsUserPoolClient: true,
        AllowedOAuthScopes: ['openid', 'email', 'profile'],
        GenerateSecret: false,
        SupportedIdentityProviders: ['COGNITO'],
        CallbackURLs: [{ 'Fn::Join': ['', [parts.apiEndpoint, '/console/callback']] }],
      });
      expect(environmentOf(template, functionId('console'))).toMatchObject({
        OIDC_ISSUER: {
          'Fn::Join': [
            '',
            [
              'https://cognito-idp.',
              { Ref: 'AWS::Region' },
              '.amazonaws.com/',
              { Ref: logicalIdOf(identity.userPool) },
            ],
          ],
        },
        OIDC_CLIENT_ID: { Ref: logicalIdOf(identity.client) },
        OIDC_ID_CLAIM: 'email',
        OIDC_GROUPS_CLAIM: 'cognito:groups',
      });
    },
  );

  it(
    verifies(
      'aws.approval-resources',
      "outputs the console URL, the notice bus, and the approvers' pool and sign-in domain",
    ),
    () => {
      const identity = child(synthesized.stack, 'ApproverIdentity', ApproverIdentity);
      const outputs = template.toJSON().Outputs as Record<string, JsonObject>;
      expect(outputs.ConsoleUrl?.Value).toEqual({ 'Fn::Join': ['', [parts.apiEndpoint, '/console']] });
      expect(outputs.NoticeBusName?.Value).toEqual({ Ref: parts.busId });
      expect(outputs.ApproverUserPoolId?.Value).toEqual({ Ref: logicalIdOf(identity.userPool) });
      expect(JSON.stringify(outputs.ApproverSignInDomain?.Value)).toContain(
        `{"Ref":"${logicalIdOf(identity.domain)}"},".auth."`,
      );
    },
  );
});

describe("the approval lifecycle with the organization's own approver sign-in", () => {
  const synthesized = synthesize({
    approverSignIn: { issuer: 'https://login.example.com/tenant', clientId: 'gateway-console' },
    publicUrl: 'https://gateway.example.com',
  });
  const { template, stack } = synthesized;
  const parts = partsOf(synthesized);

  it(
    verifies('aws.approval-resources', 'gives the console the given issuer and client, and creates no approvers pool'),
    () => {
      expect(stack.node.tryFindChild('ApproverIdentity')).toBeUndefined();
      expect(environmentOf(template, logicalIdOf(parts.functions.console.function))).toMatchObject({
        OIDC_ISSUER: 'https://login.example.com/tenant',
        OIDC_CLIENT_ID: 'gateway-console',
        OIDC_ID_CLAIM: 'email',
        OIDC_GROUPS_CLAIM: 'groups',
        PUBLIC_URL: 'https://gateway.example.com',
      });
      const outputs = template.toJSON().Outputs as Record<string, JsonObject>;
      expect(outputs.ConsoleUrl?.Value).toBe('https://gateway.example.com/console');
      expect(outputs).not.toHaveProperty('ApproverUserPoolId');
    },
  );

  it(verifies('aws.least-privilege', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
    expect(nagFindings(synthesized)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });
});

describe('the approval lifecycle behind a public URL, with approver groups', () => {
  const synthesized = synthesize({ publicUrl: 'https://gateway.example.com', approverGroups: ['finance', 'legal'] });
  const { template, stack } = synthesized;

  it(
    verifies(
      'aws.approval-resources',
      'creates the named approver groups and calls the console back at the public URL',
    ),
    () => {
      const identity = child(stack, 'ApproverIdentity', ApproverIdentity);
      const groups = identity.node.children.filter((node) => node instanceof CfnUserPoolGroup);
      expect(groups.map((group) => resourceProperties(template, logicalIdOf(group)))).toEqual([
        expect.objectContaining({ GroupName: 'finance', UserPoolId: { Ref: logicalIdOf(identity.userPool) } }),
        expect.objectContaining({ GroupName: 'legal', UserPoolId: { Ref: logicalIdOf(identity.userPool) } }),
      ]);
      template.resourceCountIs('AWS::Cognito::UserPoolGroup', 2);
      expect(resourceProperties(template, logicalIdOf(identity.client)).CallbackURLs).toEqual([
        'https://gateway.example.com/console/callback',
      ]);
    },
  );

  it(verifies('aws.least-privilege', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
    expect(nagFindings(synthesized)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });
});
