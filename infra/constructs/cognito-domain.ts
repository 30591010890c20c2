// The Cognito domain prefixes of the stack's user pools (their sign-in pages and token endpoint).
// Cognito takes 1 to 63 lowercase letters, digits and hyphens (not at either end), refuses any
// prefix containing aws, amazon or cognito, and wants each prefix unique in its region across every
// account: a stack name may break the first two, and two stacks of one name would break the last.
import { Aws, Fn, type Stack } from 'aws-cdk-lib';

const reservedWord = /aws|amazon|cognito/;
const reservedWords = new RegExp(reservedWord.source, 'g');
/** The stack's name in a prefix, at most this long: with a purpose and the stack's id it stays within 63. */
const stackLabelMaxLength = 24;

/** The stack's name as a prefix may hold it: lowercase words, no reserved word, short. */
export const stackLabel = (stackName: string): string => {
  let label = stackName.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  // Removing a word can join letters into another ("awamazons" → "aws"): repeat until none is left.
  while (reservedWord.test(label)) label = label.replace(reservedWords, '-');
  label = label.replace(/-+/g, '-').replace(/^-|-$/g, '').slice(0, stackLabelMaxLength).replace(/-$/, '');
  return label.length === 0 ? 'gateway' : label;
};

/**
 * `<stack label>-<purpose>-<8 hex digits of the stack's id>`: the stack id's first group (its
 * UUID's) is drawn when the stack is created and kept for its life, so two stacks of one name (in
 * any account) get different prefixes, and no account number is shown on public sign-in pages.
 */
export const cognitoDomainPrefix = (stack: Stack, purpose: 'agents' | 'approvers' | 'customers'): string =>
  Fn.join('-', [
    stackLabel(stack.stackName),
    purpose,
    Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID)))),
  ]);
