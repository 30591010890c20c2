// CDK assertion tests for the customers' sign-in in the stack: by default a Cognito user pool of
// customers (the customer id in a custom attribute only administrators write) and a public
// code-flow client called back at /customer/callback on managed login; or the organization's own
// provider. Either way the console function is told the issuer, the client and the claim.
import { describe, expect, it } from 'vitest';
import { ApproverConsole } from '../../infra/constructs/approver-console.js';
import { CustomerIdentity } from '../../infra/constructs/customer-identity.js';
import { McpApi } from '../../infra/constructs/mcp-api.js';
import { verifies } from '../support/requirements.js';
import {
  asList,
  child,
  environmentOf,
  isObject,
  type JsonObject,
  logicalIdOf,
  nagFindings,
  resourceProperties,
  resourcesOf,
  synthesize,
} from './synthesis.js';

const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });

describe("the customers' sign-in in the default stack", () => {
  const synthesized = synthesize();
  const { stack, template } = synthesized;
  const identity = child(stack, 'CustomerIdentity', CustomerIdentity);
  const consoleFunction = child(stack, 'Console', ApproverConsole).console.function;
  const apiEndpoint = getAtt(logicalIdOf(child(stack, 'AgentApi', McpApi).api), 'ApiEndpoint');

  it(
    verifies(
      'aws.customer-identity',
      "creates the customers' user pool: invited people only, email sign-in, a customer_id attribute, threat protection",
    ),
    () => {
      const pool = resourceProperties(template, logicalIdOf(identity.userPool));
      expect(pool).toMatchObject({
        AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
        UsernameAttributes: ['email'],
        MfaConfiguration: 'OPTIONAL',
        EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
        UserPoolTier: 'PLUS',
        UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
        DeletionProtection: 'ACTIVE',
      });
      expect(asList(pool.Schema)).toContainEqual(
        expect.objectContaining({
          Name: 'customer_id',
          AttributeDataType: 'String',
          StringAttributeConstraints: { MinLength: '1', MaxLength: '256' },
        }),
      );
      // A pool of its own, beside the approvers' and the agents'.
      template.resourceCountIs('AWS::Cognito::UserPool', 3);
      const domain = resourceProperties(template, logicalIdOf(identity.domain));
      expect(JSON.stringify(domain.Domain)).toContain('customers');
      // Managed login: the pages that honour prompt=login, with Cognito's own style for the client.
      expect(domain.ManagedLoginVersion).toBe(2);
      const brandings = [...resourcesOf(template, 'AWS::Cognito::ManagedLoginBranding').values()];
      expect(brandings.map((branding) => branding.Properties)).toEqual([
        {
          UserPoolId: { Ref: logicalIdOf(identity.userPool) },
          ClientId: { Ref: logicalIdOf(identity.client) },
          UseCognitoProvidedValues: true,
        },
      ]);
    },
  );

  it(
    verifies(
      'aws.customer-identity',
      'signs customers in through a public code-flow client back at /customer/callback, which reads the customer id and cannot write it',
    ),
    () => {
      const client = resourceProperties(template, logicalIdOf(identity.client));
      expect(client).toMatchObject({
        UserPoolId: { Ref: logicalIdOf(identity.userPool) },
        AllowedOAuthFlows: ['code'],
        AllowedOAuthFlowsUserPoolClient: true,
        // No aws.cognito.signin.user.admin: the customer's token cannot update their attributes.
        AllowedOAuthScopes: ['openid'],
        GenerateSecret: false,
        SupportedIdentityProviders: ['COGNITO'],
        CallbackURLs: [{ 'Fn::Join': ['', [apiEndpoint, '/customer/callback']] }],
      });
      expect(asList(client.ReadAttributes)).toContain('custom:customer_id');
      // email is required in the pool, and Cognito refuses a client that cannot write a required attribute.
      expect(asList(client.WriteAttributes).sort()).toEqual(['email', 'name']);
    },
  );

  it(
    verifies(
      'aws.customer-identity',
      "gives the console function the customer pool's issuer, its client, the custom:customer_id claim and the openid scope",
    ),
    () => {
      expect(environmentOf(template, logicalIdOf(consoleFunction))).toMatchObject({
        CUSTOMER_OIDC_ISSUER: {
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
        CUSTOMER_OIDC_CLIENT_ID: { Ref: logicalIdOf(identity.client) },
        CUSTOMER_OIDC_ID_CLAIM: 'custom:customer_id',
        CUSTOMER_OIDC_SCOPES: 'openid',
      });
      const outputs = template.toJSON().Outputs as Record<string, JsonObject>;
      expect(outputs.CustomerUserPoolId?.Value).toEqual({ Ref: logicalIdOf(identity.userPool) });
      expect(JSON.stringify(outputs.CustomerSignInDomain?.Value)).toContain(
        `{"Ref":"${logicalIdOf(identity.domain)}"},".auth."`,
      );
    },
  );

  it(verifies('aws.least-privilege', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
    expect(nagFindings(synthesized)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });
});

describe("the customers' sign-in at the organization's own provider, behind a public URL", () => {
  const synthesized = synthesize({
    publicUrl: 'https://gateway.example.com/',
    customerSignIn: { issuer: 'https://customers.example.com/realm', clientId: 'customer-pages' },
  });
  const { stack, template } = synthesized;
  const consoleFunction = child(stack, 'Console', ApproverConsole).console.function;

  it(
    verifies(
      'aws.customer-identity',
      'gives the console the given issuer and client with the customer_id claim, and creates no customers pool',
    ),
    () => {
      expect(stack.node.tryFindChild('CustomerIdentity')).toBeUndefined();
      // The agents' and the approvers' pools only.
      template.resourceCountIs('AWS::Cognito::UserPool', 2);
      template.resourceCountIs('AWS::Cognito::ManagedLoginBranding', 0);
      expect(environmentOf(template, logicalIdOf(consoleFunction))).toMatchObject({
        CUSTOMER_OIDC_ISSUER: 'https://customers.example.com/realm',
        CUSTOMER_OIDC_CLIENT_ID: 'customer-pages',
        CUSTOMER_OIDC_ID_CLAIM: 'customer_id',
        CUSTOMER_OIDC_SCOPES: 'openid',
        PUBLIC_URL: 'https://gateway.example.com/',
      });
      const outputs = template.toJSON().Outputs as Record<string, JsonObject>;
      expect(outputs).not.toHaveProperty('CustomerUserPoolId');
      expect(isObject(outputs.ConsoleUrl) && outputs.ConsoleUrl.Value).toBe('https://gateway.example.com/console');
    },
  );

  it(verifies('aws.least-privilege', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
    expect(nagFindings(synthesized)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });
});

describe("the customers' pool behind a public URL", () => {
  const { stack, template } = synthesize({ publicUrl: 'https://gateway.example.com' });

  it(verifies('aws.customer-identity', 'calls the customer pages back at the public URL'), () => {
    const identity = child(stack, 'CustomerIdentity', CustomerIdentity);
    expect(resourceProperties(template, logicalIdOf(identity.client)).CallbackURLs).toEqual([
      'https://gateway.example.com/customer/callback',
    ]);
  });
});
