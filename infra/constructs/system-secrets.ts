// Where the organization keeps the secrets its configuration names (`${secret:NAME}`): Secrets
// Manager secrets under a prefix this stack owns. Only the code that calls systems or sends
// webhooks reads them, and only under that prefix; the secrets themselves are the operators' to
// create, so none is a resource of the stack.
import { ArnFormat, type Stack, Validations } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import { nagRegionAndAccount } from './nag-arn.js';

export class SystemSecrets {
  /** The secret id prefix, `approval-gateway/<stack name>/`: a configuration's `${secret:NAME}` is the secret `<prefix>NAME`. */
  readonly prefix: string;
  /** Every secret under the prefix (Secrets Manager appends a random suffix to each secret's ARN). */
  readonly arnPattern: string;
  /** The variable the reading code finds the prefix in. */
  readonly environment: Readonly<Record<'SECRETS_PREFIX', string>>;
  private readonly stack: Stack;

  constructor(stack: Stack) {
    this.stack = stack;
    this.prefix = `approval-gateway/${stack.stackName}/`;
    this.arnPattern = stack.formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${this.prefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.environment = { SECRETS_PREFIX: this.prefix };
  }

  /** secretsmanager:GetSecretValue on the stack's secrets, nothing else (give the grantee `environment` too). */
  grantRead(grantee: IGrantable & IConstruct): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [this.arnPattern] }),
    );
    Validations.of(grantee).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:${nagRegionAndAccount(this.stack)}:secret:${this.prefix}*]`,
      reason:
        "The configuration names secrets the operators create after the deploy (credentials and webhook URLs of their systems), so their names are not known at synthesis: the grant covers only the stack's own prefix, for reading only, and only to the code that calls systems or sends webhooks.",
    });
  }
}
