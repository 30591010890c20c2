// API Gateway's management API as the gateway uses it, loaded on first use (see on-first-use.ts for why through a module of ours).
export {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
