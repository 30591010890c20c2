// The CDK app: `npm run synth` / `cdk deploy`. Context values configure the deployment:
//   -c agentIssuer=<OIDC issuer URL> -c agentAudience=<aud1,aud2> and/or -c agentScopes=<scope1,scope2>
//     [-c agentClaim=sub] [-c agentGroupsClaim=groups] [-c agentCustomerClaim=customer_id]
//     (the groups and customer claims are read only for agents the configuration does not list)
//   -c approverIssuer=<OIDC issuer URL> -c approverClientId=<public client id>
//     [-c approverIdClaim=email] [-c approverGroupsClaim=groups]
//   [-c approverGroups=finance,legal] [-c publicUrl=https://gateway.example.com]
//   [-c allowedOrigins=app.example.com]
//   -c customerIssuer=<OIDC issuer URL> -c customerClientId=<public client id>
//     [-c customerIdClaim=customer_id] [-c customerScopes=openid]
//   [-c grpc=true -c grpcCertificateArn=<ACM certificate ARN> [-c grpcDomainName=grpc.example.com]
//     [-c grpcMinTasks=1] [-c grpcMaxTasks=4]]  (the gRPC transport on Fargate; needs a region)
//   [-c apiGatewayLoggingRole=true]  (set the account's API Gateway CloudWatch role: WebSocket access logs)
//   [-c alarmEmails=ops@example.com,oncall@example.com]  (alarm notices by email)
//   [-c approverEmails=finance@example.com]  (every held-call notice by email)
// Without agentIssuer the stack creates a Cognito user pool whose app clients are the agents;
// without approverIssuer, a Cognito user pool of approvers (approverGroups are created in it);
// without customerIssuer, a Cognito user pool of customers (custom:customer_id names each).
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { GatewayStack } from './gateway-stack.js';

const app = new App();
const context = (name: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(name);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};
const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const issuer = context('agentIssuer');
const approverIssuer = context('approverIssuer');
const approverClientId = context('approverClientId');
if ((approverIssuer === undefined) !== (approverClientId === undefined)) {
  throw new Error('Give approverIssuer and approverClientId together (or neither, for the Cognito pool).');
}
const customerIssuer = context('customerIssuer');
const customerClientId = context('customerClientId');
if ((customerIssuer === undefined) !== (customerClientId === undefined)) {
  throw new Error('Give customerIssuer and customerClientId together (or neither, for the Cognito pool).');
}
/** A yes/no context value: true from `-c name=true` or cdk.json's `true`, false otherwise. */
const flag = (name: string): boolean => {
  const value: unknown = app.node.tryGetContext(name);
  return value === true || value === 'true';
};
const grpc = flag('grpc');
const grpcCertificateArn = context('grpcCertificateArn');
if (grpc && grpcCertificateArn === undefined) {
  throw new Error(
    'grpc=true needs -c grpcCertificateArn=<ACM certificate ARN>: an Application Load Balancer serves gRPC over HTTPS only.',
  );
}
const wholeNumber = (name: string): number | undefined => {
  const value = context(name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be a whole number (got "${value}").`);
  return Number(value);
};
/** A list of email addresses, each checked for its form (SNS refuses a malformed one only at deploy). */
const emails = (name: string): string[] => {
  const addresses = list(context(name));
  const malformed = addresses.filter((address) => !/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/.test(address));
  if (malformed.length > 0) {
    throw new Error(`${name} must be email addresses separated by commas (got "${malformed.join('", "')}").`);
  }
  return addresses;
};
const grpcMinTasks = wholeNumber('grpcMinTasks');
const grpcMaxTasks = wholeNumber('grpcMaxTasks');
new GatewayStack(app, context('stackName') ?? 'ApprovalGateway', {
  setApiGatewayLoggingRole: flag('apiGatewayLoggingRole'),
  alarmEmails: emails('alarmEmails'),
  approverEmails: emails('approverEmails'),
  // The gRPC load balancer's access logs need a concrete region; the HTTP-only stack stays agnostic.
  ...(grpc ? { env: { region: process.env.CDK_DEFAULT_REGION } } : {}),
  ...(issuer === undefined
    ? {}
    : {
        agentAuthorization: {
          issuer,
          audience: list(context('agentAudience')),
          requiredScopes: list(context('agentScopes')),
          ...(context('agentClaim') === undefined ? {} : { agentClaim: context('agentClaim') }),
          ...(context('agentGroupsClaim') === undefined ? {} : { groupsClaim: context('agentGroupsClaim') }),
          ...(context('agentCustomerClaim') === undefined ? {} : { customerClaim: context('agentCustomerClaim') }),
        },
      }),
  ...(approverIssuer === undefined || approverClientId === undefined
    ? {}
    : {
        approverSignIn: {
          issuer: approverIssuer,
          clientId: approverClientId,
          ...(context('approverIdClaim') === undefined ? {} : { idClaim: context('approverIdClaim') }),
          ...(context('approverGroupsClaim') === undefined ? {} : { groupsClaim: context('approverGroupsClaim') }),
        },
      }),
  approverGroups: list(context('approverGroups')),
  ...(customerIssuer === undefined || customerClientId === undefined
    ? {}
    : {
        customerSignIn: {
          issuer: customerIssuer,
          clientId: customerClientId,
          ...(context('customerIdClaim') === undefined ? {} : { idClaim: context('customerIdClaim') }),
          ...(context('customerScopes') === undefined ? {} : { scopes: context('customerScopes') }),
        },
      }),
  ...(context('publicUrl') === undefined ? {} : { publicUrl: context('publicUrl') }),
  allowedOrigins: list(context('allowedOrigins')),
  ...(!grpc || grpcCertificateArn === undefined
    ? {}
    : {
        grpcService: {
          certificateArn: grpcCertificateArn,
          ...(context('grpcDomainName') === undefined ? {} : { domainName: context('grpcDomainName') }),
          ...(grpcMinTasks === undefined ? {} : { minTasks: grpcMinTasks }),
          ...(grpcMaxTasks === undefined ? {} : { maxTasks: grpcMaxTasks }),
        },
      }),
});
Tags.of(app).add('application', 'approval-gateway');
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
