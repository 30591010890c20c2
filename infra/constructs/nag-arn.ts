// How cdk-nag spells an ARN's region and account in a finding id, for acknowledgements that name
// one exact resource pattern rather than the whole rule.
import { type Stack, Token } from 'aws-cdk-lib';

/** The stack's region and account as cdk-nag writes them: the value, or the pseudo parameter. */
export const nagRegionAndAccount = (stack: Stack): string =>
  [
    Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region,
    Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account,
  ].join(':');
