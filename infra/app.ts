// The CDK app: `npm run synth` / `cdk deploy`. Context values configure the deployment:
//   -c agentIssuer=<OIDC issuer URL> -c agentAudience=<aud1,aud2> [-c agentClaim=sub]
//   [-c publicUrl=https://gateway.example.com] [-c allowedOrigins=app.example.com]
// Without agentIssuer the stack creates a Cognito user pool whose app clients are the agents.
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
  ...(context('publicUrl') === undefined ? {} : { publicUrl: context('publicUrl') }),
  allowedOrigins: list(context('allowedOrigins')),
});
Tags.of(app).add('application', 'approval-gateway');
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
