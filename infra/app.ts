// The CDK app: `npm run synth` / `cdk deploy`. Context values configure the deployment:
//   -c agentIssuer=<OIDC issuer URL> -c agentAudience=<aud1,aud2> [-c agentClaim=sub]
//   -c approverIssuer=<OIDC issuer URL> -c approverClientId=<public client id>
//     [-c approverIdClaim=email] [-c approverGroupsClaim=groups]
//   [-c approverGroups=finance,legal] [-c publicUrl=https://gateway.example.com]
//   [-c allowedOrigins=app.example.com]
//   -c customerIssuer=<OIDC issuer URL> -c customerClientId=<public client id>
//     [-c customerIdClaim=customer_id] [-c customerScopes=openid]
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
new GatewayStack(app, context('stackName') ?? 'ApprovalGateway', {
  ...(issuer === undefined
    ? {}
    : {
        agentAuthorization: {
          issuer,
          audience: list(context('agentAudience')),
          ...(context('agentClaim') === undefined ? {} : { agentClaim: context('agentClaim') }),
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
});
Tags.of(app).add('application', 'approval-gateway');
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
