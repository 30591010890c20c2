// Where the deployed configuration lives: a bucket of bundles (an object version per push:
// encrypted, versioned, private, SSL only, kept when the stack goes) and the asymmetric KMS key
// config:push signs each bundle with. The functions that load the configuration may read the
// bundles and verify signatures, nothing else; only the pushing principal may sign.
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Grant, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { bundleObjectPrefix } from '../../shared/control-plane/signed-bundles.js';

export class ConfigBundles extends Construct {
  readonly bucket: Bucket;
  readonly signingKey: Key;
  private readonly bucketLogicalId: string;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      versioned: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const cfn = this.bucket.node.defaultChild;
    if (!(cfn instanceof CfnBucket)) throw new Error('Bucket no longer synthesizes an AWS::S3::Bucket.');
    this.bucketLogicalId = Stack.of(this).getLogicalId(cfn);
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Only config:push writes this bucket, and each write is an object version the configuration table names with its hash and a KMS signature (kms:Sign is in CloudTrail); a second bucket of access logs would record nothing more.',
    });
    this.signingKey = new Key(this, 'SigningKey', {
      description: 'Approval Gateway: signs configuration bundles (config:push signs, the functions verify)',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** What loading the configuration needs: the bundles' object versions, and checking their signatures. */
  grantLoad(role: IRole): void {
    // The exact object versions the table names (GetObjectVersion), under the bundles' prefix only:
    // no listing, no bucket settings.
    Grant.addToPrincipal({
      grantee: role,
      actions: ['s3:GetObjectVersion'],
      resourceArns: [this.bucket.arnForObjects(`${bundleObjectPrefix}*`)],
    });
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.bucketLogicalId}.Arn>/${bundleObjectPrefix}*]`,
      reason:
        'Bundle objects are named by version at each push; the grant covers the bundles prefix only, read by the exact object version the table names.',
    });
    this.signingKey.grant(role, 'kms:Verify');
  }
}
