// The grants the synthesized stack gives that no flow of the harness uses yet, each with its
// reason (a grant without one fails the permission test), and what the Lambda service itself does
// with a role (never the function's code).
const cdkTableGrant = 'CDK grants on a table cover its indexes (index/*) alike; the code uses only some of the pairs';
const sealing = 'sealing secret arguments: the flows here hold no call with a secret argument';
const reconciler = 'the reconciler runs on a schedule; no flow here runs it yet';
const channelRead =
  'the channel flow here is one direct read; a held call, its status or its cancel sent on the channel reads, queries and updates the records';
const conflict = 'a decision that loses a race reads the record as it is now; the flows here decide each call once';
/** Granted actions no flow here uses (by function construct and action), each with its reason. */
export const unusedGrantReasons: Readonly<Record<string, string>> = {
  'ApprovalsHeldCallStepsFunction kms:Decrypt': sealing,
  'ApprovalsHeldCallStepsFunction states:SendTaskSuccess':
    'the register step hands over a decision taken before the run listened; the flows here decide after it registered',
  'ApprovalsReconcilerFunction dynamodb:GetItem': reconciler,
  'ApprovalsReconcilerFunction dynamodb:Query': reconciler,
  'ApprovalsReconcilerFunction dynamodb:UpdateItem': reconciler,
  'ApprovalsReconcilerFunction kms:Decrypt': reconciler,
  'ApprovalsReconcilerFunction kms:Verify': reconciler,
  'ApprovalsReconcilerFunction s3:GetObjectVersion': reconciler,
  'ApprovalsReconcilerFunction states:SendTaskSuccess': reconciler,
  'ApprovalsReconcilerFunction states:StartExecution': reconciler,
  'ApprovalsReconcilerFunction states:DescribeExecution': reconciler,
  'ApprovalsReconcilerFunction secretsmanager:GetSecretValue': reconciler,
  'ApprovalsReconcilerFunction kms:Sign': reconciler,
  'ApprovalsReconcilerFunction kms:GetPublicKey': reconciler,
  'ApprovalsReconcilerFunction events:PutEvents': reconciler,
  'CallToolSocketFunction dynamodb:GetItem': channelRead,
  'CallToolSocketFunction dynamodb:PutItem': cdkTableGrant,
  'CallToolSocketFunction dynamodb:Query': channelRead,
  'CallToolSocketFunction dynamodb:UpdateItem': channelRead,
  'CallToolSocketFunction kms:Decrypt': sealing,
  'CallToolSocketFunction kms:GenerateDataKey': sealing,
  'CallToolSocketFunction states:StartExecution':
    'a call the channel holds starts its approval run; the channel flow here is a direct read',
  'ConsoleFunction dynamodb:GetItem': conflict,
  'ConsoleFunction events:PutEvents':
    'an approval short of its quorum tells the group on the notice bus; the flows here hold no call asking a quorum',
  'ConsoleFunction dynamodb:Query':
    'the inbox lists open calls (open-by-deadline); these flows open a call page directly',
  'ConsoleFunction kms:GenerateMac':
    'signing a session at sign-in; these flows mint the session the OIDC callback would issue',
  'McpFunction dynamodb:GetItem': cdkTableGrant,
  'McpFunction dynamodb:PutItem': cdkTableGrant,
  'McpFunction dynamodb:Query': cdkTableGrant,
  'McpFunction dynamodb:UpdateItem': cdkTableGrant,
  'McpFunction kms:Decrypt': sealing,
  'McpFunction kms:GenerateDataKey': sealing,
  'McpFunction states:SendTaskSuccess': "tasks/cancel ends a withdrawn call's approval run; no flow here cancels",
};

/** `<function construct> <action>` of an unused-grant line (the logical id without its hash). */
export const reasonKey = (line: string): string => {
  const [logicalId = '', action = ''] = line.split(' ');
  return `${logicalId.replace(/[0-9A-F]{8}$/, '')} ${action}`;
};

/** What the Lambda service itself does with a function's role, never the function's code. */
export const runtimeActions = (action: string) => action.startsWith('logs:') || action.startsWith('xray:');
