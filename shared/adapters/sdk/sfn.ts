// Step Functions' SDK as the gateway uses it, loaded on first use (see on-first-use.ts for why through a module of ours).
export {
  DescribeExecutionCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
