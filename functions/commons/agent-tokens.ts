// How a front that no API Gateway JWT authorizer covers checks agents' tokens itself (the gRPC
// container, the /tool/call-tool WebSocket authorizer): one reading of the token variables, so the
// two check exactly what the HTTP API's authorizer checks for /mcp.
import { jwtAgentAuthenticator } from '../../shared/adapters/jwt-agent-authenticator.js';

export interface AgentTokenEnvironment {
  readonly AGENT_JWT_ISSUER: string;
  readonly AGENT_JWT_AUDIENCE: readonly string[];
  readonly AGENT_JWT_SCOPES: readonly string[];
  readonly AGENT_JWKS_URI?: string | undefined;
  readonly AGENT_CLAIM: string;
  readonly GROUPS_CLAIM: string;
  readonly CUSTOMER_CLAIM: string;
}

export const agentTokenAuthenticator = (environment: AgentTokenEnvironment) =>
  jwtAgentAuthenticator({
    issuer: environment.AGENT_JWT_ISSUER,
    audience: [...environment.AGENT_JWT_AUDIENCE],
    requiredScopes: [...environment.AGENT_JWT_SCOPES],
    claimNames: {
      agent: environment.AGENT_CLAIM,
      groups: environment.GROUPS_CLAIM,
      customer: environment.CUSTOMER_CLAIM,
    },
    ...(environment.AGENT_JWKS_URI === undefined ? {} : { jwksUri: environment.AGENT_JWKS_URI }),
  });
