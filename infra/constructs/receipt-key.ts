// The key approval receipts are signed with: a KMS asymmetric key (ECC_NIST_P256, SIGN_VERIFY), so
// the private part never leaves KMS. Its key policy names each function that may use it: the
// functions that send approved calls may sign, the public documents' function may read the public
// key, and the account administers the key without using it (no IAM policy alone can sign).
import { RemovalPolicy } from 'aws-cdk-lib';
import { AccountRootPrincipal, Grant, type IRole, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export class ReceiptKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Approval Gateway: signs approval receipts (the functions sending approved calls sign)',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      // The key policy is exactly this one, plus the statements below: the account's root may
      // administer the key (its policy, its state, its deletion) but not sign with it.
      policy: new PolicyDocument(),
      admins: [new AccountRootPrincipal()],
      // Receipts already given out stay checkable against the published key until they expire.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /**
   * Signing receipts: kms:Sign for this role, in the key policy and the role's own, and the public
   * key, which names the key (its thumbprint) in every receipt's header (read once per container).
   */
  grantSign(role: IRole): void {
    this.allow(role, ['kms:Sign', 'kms:GetPublicKey']);
  }

  /** Publishing the public key (the JWK Set): kms:GetPublicKey for this role, never kms:Sign. */
  grantPublicKey(role: IRole): void {
    this.allow(role, ['kms:GetPublicKey']);
  }

  private allow(role: IRole, actions: string[]): void {
    // The key policy names the role itself: without the account's blanket trust, a grant in the
    // role's policy alone would not let it use the key.
    this.key.addToResourcePolicy(new PolicyStatement({ principals: [role], actions, resources: ['*'] }));
    Grant.addToPrincipal({ grantee: role, actions, resourceArns: [this.key.keyArn] });
  }
}
