// CDK assertion tests for the receipt key: a KMS P-256 signing key whose key policy lets only the
// functions that send approved calls sign and only the public documents' function read the public
// key, the account administering it without using it; and the public route serving its JWK Set.
import { describe, expect, it } from 'vitest';
import { ApprovalStateMachine } from '../../infra/constructs/approval-state-machine.js';
import { ApproverConsole } from '../../infra/constructs/approver-console.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { McpApi } from '../../infra/constructs/mcp-api.js';
import { ReceiptKey } from '../../infra/constructs/receipt-key.js';
import { verifies } from '../support/requirements.js';
import {
  actionsOf,
  allStatements,
  asList,
  child,
  environmentOf,
  isObject,
  logicalIdOf,
  nagFindings,
  ofApi,
  resourceProperties,
  statementsForRole,
  synthesize,
} from './synthesis.js';

describe('the receipt key in the stack', () => {
  const synthesized = synthesize();
  const { stack, template } = synthesized;
  const keyId = logicalIdOf(child(stack, 'ReceiptKey', ReceiptKey).key);
  const approvals = child(stack, 'Approvals', ApprovalStateMachine);
  const metadata = child(stack, 'ResourceMetadata', GatewayFunction);
  const signers = { HeldCallSteps: approvals.steps, Reconciler: approvals.reconciler };
  const others = {
    Mcp: child(stack, 'Mcp', GatewayFunction),
    CallToolSocket: child(stack, 'CallToolSocket', GatewayFunction),
    AgentAuthorizer: child(stack, 'AgentAuthorizer', GatewayFunction),
    Console: child(stack, 'Console', ApproverConsole).console,
  };
  const roleArn = (fn: GatewayFunction) => ({ 'Fn::GetAtt': [logicalIdOf(fn.role), 'Arn'] });
  const namingKey = (statement: Record<string, unknown>) =>
    asList(statement.Resource).some((resource) => JSON.stringify(resource).includes(`"${keyId}"`));
  const keyPolicy = () => {
    const policy = resourceProperties(template, keyId).KeyPolicy;
    return isObject(policy) ? asList(policy.Statement).filter(isObject) : [];
  };

  it(
    verifies('receipt-key.key-policy', 'is a retained ECC_NIST_P256 signing key that the account may not sign with'),
    () => {
      expect(resourceProperties(template, keyId)).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
      const resources = template.toJSON().Resources as Record<string, Record<string, unknown>>;
      expect(resources[keyId]?.DeletionPolicy).toBe('Retain');
      const root = keyPolicy().filter((statement) => JSON.stringify(statement.Principal).includes(':root'));
      expect(root).toHaveLength(1);
      // Administration only: no kms:*, no signing, no cryptographic use at all.
      const rootActions = root.flatMap(actionsOf);
      expect(rootActions).toEqual(expect.arrayContaining(['kms:Put*', 'kms:ScheduleKeyDeletion']));
      for (const action of ['kms:*', 'kms:Sign', 'kms:Verify', 'kms:Sign*']) expect(rootActions).not.toContain(action);
    },
  );

  it(
    verifies(
      'receipt-key.key-policy',
      'lets only the held-call steps and the reconciler sign (and read the key id they sign under), and the public documents read the public key',
    ),
    () => {
      const byAction = (action: string) =>
        keyPolicy()
          .filter((statement) => statement.Effect === 'Allow' && actionsOf(statement).includes(action))
          .flatMap((statement) => (isObject(statement.Principal) ? asList(statement.Principal.AWS) : []));
      expect(byAction('kms:Sign')).toEqual(expect.arrayContaining(Object.values(signers).map((fn) => roleArn(fn))));
      expect(byAction('kms:Sign')).toHaveLength(2);
      // The signers read the public key too: a receipt's header names the key by its thumbprint.
      expect(byAction('kms:GetPublicKey')).toEqual(
        expect.arrayContaining([roleArn(metadata), ...Object.values(signers).map((fn) => roleArn(fn))]),
      );
      expect(byAction('kms:GetPublicKey')).toHaveLength(3);
      // The roles' own policies say the same, on this key only.
      for (const [name, fn] of Object.entries(signers)) {
        const onKey = statementsForRole(template, logicalIdOf(fn.role)).filter(namingKey);
        expect(onKey.flatMap(actionsOf), name).toEqual(['kms:Sign', 'kms:GetPublicKey']);
        expect(environmentOf(template, logicalIdOf(fn.function)).RECEIPT_KEY_ID, name).toEqual({
          'Fn::GetAtt': [keyId, 'Arn'],
        });
      }
      const onKey = statementsForRole(template, logicalIdOf(metadata.role)).filter(namingKey);
      expect(onKey.flatMap(actionsOf)).toEqual(['kms:GetPublicKey']);
      for (const [name, fn] of Object.entries(others)) {
        expect(statementsForRole(template, logicalIdOf(fn.role)).filter(namingKey), name).toEqual([]);
        expect(environmentOf(template, logicalIdOf(fn.function)).RECEIPT_KEY_ID, name).toBeUndefined();
      }
      // No statement anywhere signs with a wildcard resource.
      const anySign = allStatements(template).filter(
        (statement) =>
          actionsOf(statement).some((action) => ['kms:Sign', 'kms:*'].includes(action)) &&
          asList(statement.Resource).includes('*'),
      );
      expect(anySign).toEqual([]);
    },
  );

  it(
    verifies('receipt-key.jwks', 'serves GET /.well-known/jwks.json without a token, by the metadata function'),
    () => {
      const api = child(stack, 'AgentApi', McpApi);
      const routes = ofApi(template, 'AWS::ApiGatewayV2::Route', logicalIdOf(api.api));
      const jwks = routes.find((route) => route.RouteKey === 'GET /.well-known/jwks.json');
      const metadataRoute = routes.find((route) => route.RouteKey === 'GET /.well-known/oauth-protected-resource');
      expect(jwks).toMatchObject({ AuthorizationType: 'NONE' });
      expect(jwks?.Target).toEqual(metadataRoute?.Target);
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(outputs.ReceiptKeyArn?.Value).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      expect(JSON.stringify(outputs.ReceiptKeysUrl?.Value)).toContain('/.well-known/jwks.json');
    },
  );

  it(verifies('receipt-key.key-policy', 'leaves no unacknowledged cdk-nag AwsSolutions finding'), () => {
    expect(nagFindings(synthesized)).toEqual({ runs: 1, reported: [], recorded: [], failedPlugins: [] });
  });
});
