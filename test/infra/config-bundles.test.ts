// CDK assertion tests for where the deployed configuration lives: the bundles bucket, the signing
// key, the variables naming them, and grants that let the functions read bundles and verify
// signatures, and nothing more.
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ApprovalStateMachine } from '../../infra/constructs/approval-state-machine.js';
import { ApproverConsole } from '../../infra/constructs/approver-console.js';
import { ConfigBundles } from '../../infra/constructs/config-bundles.js';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { ReceiptKey } from '../../infra/constructs/receipt-key.js';
import { verifies } from '../support/requirements.js';
import {
  actionsOf,
  allStatements,
  asList,
  child,
  environmentOf,
  logicalIdOf,
  resourceProperties,
  statementsForRole,
  synthesize,
} from './synthesis.js';

describe('the configuration bundles in the stack', () => {
  const { stack, template } = synthesize();
  const bundles = child(stack, 'ConfigBundles', ConfigBundles);
  const bucketId = logicalIdOf(bundles.bucket);
  const keyId = logicalIdOf(bundles.signingKey);
  const receiptKeyId = logicalIdOf(child(stack, 'ReceiptKey', ReceiptKey).key);
  const approvals = child(stack, 'Approvals', ApprovalStateMachine);
  const loaders = {
    Mcp: child(stack, 'Mcp', GatewayFunction),
    CallToolSocket: child(stack, 'CallToolSocket', GatewayFunction),
    HeldCallSteps: approvals.steps,
    Reconciler: approvals.reconciler,
  };
  const others = {
    ResourceMetadata: child(stack, 'ResourceMetadata', GatewayFunction),
    AgentAuthorizer: child(stack, 'AgentAuthorizer', GatewayFunction),
    Console: child(stack, 'Console', ApproverConsole).console,
  };
  const naming = (id: string) => (statement: Record<string, unknown>) =>
    asList(statement.Resource).some((resource) => JSON.stringify(resource).includes(`"${id}"`));

  it(
    verifies(
      'aws.config-bundle-grants',
      'has a versioned, encrypted, private, SSL-only bucket and a P-256 signing key, both retained',
    ),
    () => {
      expect(resourceProperties(template, bucketId)).toMatchObject({
        VersioningConfiguration: { Status: 'Enabled' },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      });
      const resources = template.toJSON().Resources as Record<string, Record<string, unknown>>;
      expect(resources[bucketId]?.DeletionPolicy).toBe('Retain');
      expect(resources[keyId]?.DeletionPolicy).toBe('Retain');
      expect(resourceProperties(template, keyId)).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    },
  );

  it(
    verifies(
      'aws.config-bundle-grants',
      'lets the functions that load the configuration read bundle object versions and verify signatures, nothing more',
    ),
    () => {
      for (const [name, fn] of Object.entries(loaders)) {
        expect(environmentOf(template, logicalIdOf(fn.function)), name).toMatchObject({
          CONFIG_BUCKET: { Ref: bucketId },
          CONFIG_SIGNING_KEY_ID: { 'Fn::GetAtt': [keyId, 'Arn'] },
        });
        const statements = statementsForRole(template, logicalIdOf(fn.role));
        const onBucket = statements.filter(naming(bucketId));
        expect(onBucket.flatMap(actionsOf).sort(), name).toEqual(['s3:GetObjectVersion']);
        expect(
          onBucket.flatMap((statement) => asList(statement.Resource)),
          name,
        ).toEqual([{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/bundles/*']] }]);
        const onKey = statements.filter(naming(keyId));
        expect(onKey.flatMap(actionsOf), name).toEqual(['kms:Verify']);
        expect(
          onKey.flatMap((statement) => asList(statement.Resource)),
          name,
        ).toEqual([{ 'Fn::GetAtt': [keyId, 'Arn'] }]);
      }
      for (const [name, fn] of Object.entries(others)) {
        const statements = statementsForRole(template, logicalIdOf(fn.role));
        expect(statements.filter(naming(bucketId)), name).toEqual([]);
        expect(statements.filter(naming(keyId)), name).toEqual([]);
      }
      // Nothing in the stack signs bundles: only the pushing principal, outside it, may. (The
      // receipt key, another key, is signed with by the functions sending approved calls.)
      const signing = allStatements(template).filter(
        (statement) =>
          !naming(receiptKeyId)(statement) &&
          actionsOf(statement).some((action) => ['kms:Sign', 'kms:*', 's3:PutObject', 's3:*'].includes(action)),
      );
      expect(signing.filter((statement) => statement.Effect === 'Allow' && statement.Principal === undefined)).toEqual(
        [],
      );
    },
  );

  it(
    verifies('aws.config-bundle-grants', 'outputs the bucket and the key, and the push command that names them'),
    () => {
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
      expect(outputs.ConfigBucket?.Value).toEqual({ Ref: bucketId });
      expect(outputs.ConfigSigningKeyArn?.Value).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      expect(outputs.ConfigTable?.Description).toContain(
        'npm run config:push -- --table <this> --bucket <ConfigBucket> --key <ConfigSigningKeyArn>',
      );
    },
  );
});
