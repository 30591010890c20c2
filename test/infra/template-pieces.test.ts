// CDK assertion tests for the deployed stack's template pieces (issue 36): the secrets grant and
// its prefix, links in every function that builds them, the grants each function's calls need,
// the API Gateway account role, the Cognito clients and domains, and the functions' timeouts.
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stackLabel } from '../../infra/constructs/cognito-domain.js';
import { GrpcService } from '../../infra/constructs/grpc-service.js';
import { GatewayStack } from '../../infra/gateway-stack.js';
import { verifies } from '../support/requirements.js';
import {
  asList,
  environmentOf,
  grantsOf,
  isObject,
  type JsonObject,
  logicalIdOf,
  nagFindings,
  propertiesOf,
  resourcesOf,
  synthesize,
} from './synthesis.js';

const region = 'eu-west-1';
const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab';
/** Every optional part on: the gRPC transport (which needs a region) and the default Cognito pools. */
const whole = synthesize({ env: { region }, grpcService: { certificateArn } });
const { template } = whole;
const grpc = whole.stack.node.findChild('Grpc');
if (!(grpc instanceof GrpcService)) throw new Error('the stack has no gRPC service');

/** The logical id of each Lambda function, by the id of its GatewayFunction construct (Mcp, Reconciler, ...). */
const functionIds = (): Map<string, string> => {
  const ids = new Map<string, string>();
  for (const logicalId of resourcesOf(template, 'AWS::Lambda::Function').keys()) {
    const name = /^(?:Approvals|Console)?(\w+?)Function[0-9A-F]{8}$/.exec(logicalId)?.[1];
    if (name === undefined) throw new Error(`unexpected function ${logicalId}`);
    ids.set(name, logicalId);
  }
  return ids;
};

/** The role each function runs as, by the same names, and the gRPC tasks' role as Grpc. */
const roleIds = (): Map<string, string> => {
  const roles = new Map<string, string>();
  for (const [name, functionId] of functionIds()) {
    const role = propertiesOf(resourcesOf(template, 'AWS::Lambda::Function').get(functionId)).Role;
    const roleId = isObject(role) && Array.isArray(role['Fn::GetAtt']) ? String(role['Fn::GetAtt'][0]) : '';
    roles.set(name, roleId);
  }
  roles.set('Grpc', logicalIdOf(grpc.taskRole));
  return roles;
};

const containerEnvironment = (): JsonObject => {
  const [definition] = [...resourcesOf(template, 'AWS::ECS::TaskDefinition').values()].map(propertiesOf);
  const [container] = Array.isArray(definition?.ContainerDefinitions) ? definition.ContainerDefinitions : [];
  const variables = isObject(container) && Array.isArray(container.Environment) ? container.Environment : [];
  return Object.fromEntries(variables.filter(isObject).map((variable) => [String(variable.Name), variable.Value]));
};

describe('secrets the configuration names', () => {
  const readers = ['CallToolSocket', 'Grpc', 'HeldCallSteps', 'Mcp', 'Reconciler'];
  const pattern = {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        `:secretsmanager:${region}:`,
        { Ref: 'AWS::AccountId' },
        ':secret:approval-gateway/ApprovalGateway/*',
      ],
    ],
  };

  it(
    verifies(
      'deploy.secrets-grant',
      'lets exactly the functions that call systems or send webhooks read secrets, under the prefix only',
    ),
    () => {
      const roles = roleIds();
      expect([...roles.keys()].sort()).toEqual([...readers, 'AgentAuthorizer', 'Console', 'ResourceMetadata'].sort());
      for (const [name, roleId] of roles) {
        const expected = readers.includes(name) ? [`secretsmanager:GetSecretValue ${JSON.stringify(pattern)}`] : [];
        expect(grantsOf(template, roleId, 'secretsmanager'), name).toEqual(expected);
      }
      // No other role of the stack (the state machine's, the channel's logging role) reads any.
      const granted = new Set(roles.values());
      for (const roleId of resourcesOf(template, 'AWS::IAM::Role').keys()) {
        if (!granted.has(roleId)) expect(grantsOf(template, roleId, 'secretsmanager'), roleId).toEqual([]);
      }
    },
  );

  it(
    verifies('deploy.secrets-grant', 'tells those functions the prefix, and the operators where to create secrets'),
    () => {
      for (const [name, functionId] of functionIds()) {
        const prefix = environmentOf(template, functionId).SECRETS_PREFIX;
        expect(prefix, name).toEqual(readers.includes(name) ? 'approval-gateway/ApprovalGateway/' : undefined);
      }
      expect(containerEnvironment().SECRETS_PREFIX).toBe('approval-gateway/ApprovalGateway/');
      const outputs: Record<string, unknown> = template.toJSON().Outputs ?? {};
      const output = outputs.SecretsPrefix;
      expect(isObject(output) && output.Value).toBe(`approval-gateway/${Stack.of(whole.stack).stackName}/`);
    },
  );

  it(verifies('deploy.secrets-grant', 'acknowledges the prefix wildcard to cdk-nag with its reason'), () => {
    expect(nagFindings(whole)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });
});

describe("each role's grants, against the calls its code makes", () => {
  /** The state machine's ARN as the template gives it to the functions (the MCP function's, here). */
  const stateMachineArn = () =>
    JSON.stringify(environmentOf(template, functionIds().get('Mcp') ?? '').STATE_MACHINE_ARN);

  it(
    verifies(
      'deploy.grants-match-calls',
      'lets the MCP function end a withdrawn call (tasks/cancel), and the channel and gRPC stream only start runs',
    ),
    () => {
      const arn = stateMachineArn();
      const start = `states:StartExecution ${arn}`;
      const signal = `states:SendTaskSuccess ${arn}`;
      // This state machine's runs, whatever their names: arn:…:execution:<state machine name>:*.
      const describe = `states:DescribeExecution ${arn.replace(/:stateMachine:([\w-]+)"/, ':execution:$1:*"')}`;
      const expected: Record<string, string[]> = {
        Mcp: [signal, start],
        CallToolSocket: [start],
        Grpc: [start],
        HeldCallSteps: [signal],
        Reconciler: [describe, signal, start],
        Console: [signal],
        AgentAuthorizer: [],
        ResourceMetadata: [],
      };
      for (const [name, roleId] of roleIds()) {
        expect(grantsOf(template, roleId, 'states'), name).toEqual((expected[name] ?? ['missing']).sort());
      }
    },
  );
});

describe('links', () => {
  it(
    verifies('deploy.links-absolute', "gives every function that builds links, and the gRPC tasks, the API's own URL"),
    () => {
      const [apiId] = [...resourcesOf(template, 'AWS::ApiGatewayV2::Api').entries()]
        .filter(([, resource]) => propertiesOf(resource).ProtocolType === 'HTTP')
        .map(([logicalId]) => logicalId);
      const endpoint = { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] };
      // The functions that take part in approvals build console and customer links (approval_url).
      const linking = [...functionIds()].filter(
        ([, id]) => environmentOf(template, id).STATE_MACHINE_ARN !== undefined,
      );
      expect(linking.map(([name]) => name).sort()).toEqual(
        ['CallToolSocket', 'Console', 'HeldCallSteps', 'Mcp', 'Reconciler'].sort(),
      );
      for (const [name, id] of linking) expect(environmentOf(template, id).API_URL, name).toEqual(endpoint);
      expect(containerEnvironment().API_URL).toEqual(endpoint);
    },
  );
});

describe('Cognito pools that create on first deploy', () => {
  it(verifies('deploy.cognito-first-deploy', "lets every app client write its pool's required attributes"), () => {
    const pools = resourcesOf(template, 'AWS::Cognito::UserPool');
    expect(pools.size).toBe(3);
    const clients = [...resourcesOf(template, 'AWS::Cognito::UserPoolClient').values()].map(propertiesOf);
    expect(clients.length).toBeGreaterThanOrEqual(3);
    for (const client of clients) {
      if (client.WriteAttributes === undefined) continue; // Cognito's default: every writable attribute
      const pool = isObject(client.UserPoolId) ? String(client.UserPoolId.Ref) : '';
      const required = asList(propertiesOf(pools.get(pool)).Schema)
        .filter(isObject)
        .filter((attribute) => attribute.Required === true)
        .map((attribute) => String(attribute.Name));
      for (const name of required) expect(asList(client.WriteAttributes), String(client.ClientName)).toContain(name);
    }
  });

  /** What Cognito accepts as a domain prefix, checked on the prefix with the stack id's group filled in. */
  const acceptable = (prefix: string) =>
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(prefix) && !/aws|amazon|cognito/.test(prefix);
  const names = [
    'ApprovalGateway',
    'A'.repeat(128),
    `Prod-${'Gateway-'.repeat(15)}`,
    'AWS-Approvals',
    'MyAmazonCognitoGateway',
    'awamazons-gateway',
    'aws',
    'Cognito-9',
    '9-lives',
  ];

  it(
    verifies(
      'deploy.cognito-first-deploy',
      'derives domain prefixes Cognito accepts from long, upper-case and reserved names',
    ),
    () => {
      for (const name of names) {
        const label = stackLabel(name);
        for (const purpose of ['agents', 'approvers', 'customers']) {
          const prefix = `${label}-${purpose}-0a1b2c3d`;
          expect(acceptable(prefix), `${name}: ${prefix}`).toBe(true);
        }
      }
      expect(stackLabel('ApprovalGateway')).toBe('approvalgateway');
      expect(stackLabel('AWS-Approvals')).toBe('approvals');
      expect(stackLabel('aws')).toBe('gateway');
    },
  );

  it(
    verifies(
      'deploy.cognito-first-deploy',
      "gives each pool its own prefix, unique per stack by the stack id's first group",
    ),
    () => {
      const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
      const name = 'Amazon-AWS-Cognito-Approval-Gateway-For-The-Finance-Team-Of-A-Very-Long-Name';
      const stack = new GatewayStack(app, name);
      const domains = [...resourcesOf(Template.fromStack(stack), 'AWS::Cognito::UserPoolDomain').values()]
        .map(propertiesOf)
        .map((domain) => domain.Domain);
      // The stack id's first group, read at deploy time: arn:…:stack/<name>/<uuid>.
      const stackIdGroup = {
        'Fn::Select': [
          0,
          { 'Fn::Split': ['-', { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] }] },
        ],
      };
      const byText = (values: unknown[]) => values.map((value) => JSON.stringify(value)).sort();
      expect(byText(domains)).toEqual(
        byText(
          ['agents', 'approvers', 'customers'].map((purpose) => ({
            'Fn::Join': ['-', [`${stackLabel(name)}-${purpose}`, stackIdGroup]],
          })),
        ),
      );
      expect(stackLabel(name)).toBe('approval-gateway-for-the');
    },
  );
});

describe("the functions' timeouts", () => {
  it(
    verifies(
      'deploy.timeout-bounded',
      'stops every function behind API Gateway within its 30 s, and leaves the steps theirs',
    ),
    () => {
      const timeoutOf = (name: string) =>
        propertiesOf(resourcesOf(template, 'AWS::Lambda::Function').get(functionIds().get(name) ?? '')).Timeout;
      for (const name of ['Mcp', 'CallToolSocket', 'Console']) expect(timeoutOf(name), name).toBe(29);
      for (const name of ['HeldCallSteps', 'Reconciler']) expect(timeoutOf(name), name).toBe(300);
    },
  );
});

describe('console sign-out', () => {
  it(
    verifies('deploy.console-sign-out', "registers the console's sign-in page as the approver client's logout URL"),
    () => {
      const clients = [...resourcesOf(template, 'AWS::Cognito::UserPoolClient').values()].map(propertiesOf);
      const consoleClient = clients.find((client) => client.ClientName === 'approver-console');
      const callback = asList(consoleClient?.CallbackURLs)[0];
      expect(JSON.stringify(callback)).toContain('/console/callback');
      expect(asList(consoleClient?.LogoutURLs)).toEqual([
        JSON.parse(JSON.stringify(callback).replace('/console/callback', '/console/sign-in')),
      ]);
      const logout = environmentOf(template, functionIds().get('Console') ?? '').OIDC_LOGOUT_URL;
      const [approverDomain] = [...resourcesOf(template, 'AWS::Cognito::UserPoolDomain').entries()]
        .filter(([, domain]) => JSON.stringify(propertiesOf(domain).Domain).includes('-approvers'))
        .map(([logicalId]) => logicalId);
      expect(logout).toEqual({
        'Fn::Join': ['', ['https://', { Ref: approverDomain }, `.auth.${region}.amazoncognito.com/logout`]],
      });
    },
  );
});
