// The grants the synthesized stack gives that no flow of the harness uses yet, each with its
// reason (a grant without one fails the permission test), and what the Lambda service itself does
// with a role (never the function's code).
const cdkTableGrant = 'CDK grants on a table cover its indexes (index/*) alike; the code uses only some of the pairs';
const sealing = 'sealing secret arguments: the flows here hold no call with a secret argument';
const reconciler = 'the reconciler runs on a schedule; no flow here runs it yet';
const channel = 'the /tool/call-tool WebSocket channel; no flow here runs it yet';
/** Granted actions no flow here uses (by function construct and action), each with its reason. */
export const unusedGrantReasons: Readonly<Record<string, string>> = {
  'ApprovalsHeldCallStepsFunction kms:Decrypt': sealing,
  'ApprovalsHeldCallStepsFunction states:SendTaskSuccess':
    'the steps hand a decision back themselves (a customer step, an expiry); not in these flows',
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
  'CallToolSocketFunction dynamodb:GetItem': channel,
  'CallToolSocketFunction dynamodb:PutItem': channel,
  'CallToolSocketFunction dynamodb:Query': channel,
  'CallToolSocketFunction dynamodb:UpdateItem': channel,
  'CallToolSocketFunction execute-api:ManageConnections': channel,
  'CallToolSocketFunction kms:Decrypt': channel,
  'CallToolSocketFunction kms:GenerateDataKey': channel,
  'CallToolSocketFunction kms:Verify': channel,
  'CallToolSocketFunction s3:GetObjectVersion': channel,
  'CallToolSocketFunction states:StartExecution': channel,
  'CallToolSocketFunction secretsmanager:GetSecretValue': channel,
  'ConsoleFunction dynamodb:GetItem':
    'the console reads a call by its id with a Query; GetItem serves the customer pages, not in these flows',
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
