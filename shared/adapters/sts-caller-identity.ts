// Who the AWS credentials in use belong to, as STS says (GetCallerIdentity needs no permission):
// the identity an operator's settlement of an unknown outcome records against a deployed table.
import { GetCallerIdentityCommand, type STSClient } from '@aws-sdk/client-sts';

/** The caller's ARN: a user, or an assumed role's session. */
export const awsCallerArn = async (client: STSClient): Promise<string> => {
  const { Arn } = await client.send(new GetCallerIdentityCommand({}));
  if (Arn === undefined || Arn === '') throw new Error('STS answered no ARN for the caller.');
  return Arn;
};
