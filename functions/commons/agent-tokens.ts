// How the fronts that check agents' tokens themselves (the agent authorizer of the HTTP and
// WebSocket APIs, the gRPC container) read the token variables: one reading, so all of them accept
// exactly the same tokens and find the same caller in them.
import { jwtAgentAuthenticator } from '../../shared/adapters/jwt-agent-authenticator.js';

export interface AgentTokenEnvironment {
  readonly AGENT_JWT_ISSUER: string;
  readonly AGENT_JWT_AUDIENCE: readonly string[];
  readonly AGENT_JWT_SCOPES: readonly string[];
  readonly AGENT_JWKS_URI?: string | undefined;
  readonly AGENT_CLAIM: string;
  /** Empty: an unlisted agent's groups are not read from its token. */
  readonly GROUPS_CLAIM: string;
  /** Empty: an unlisted agent's customer is not read from its token. */
  readonly CUSTOMER_CLAIM: string;
}

export const agentTokenAuthenticator = (environment: AgentTokenEnvironment) =>
  jwtAgentAuthenticator({
    issuer: environment.AGENT_JWT_ISSUER,
    audience: [...environment.AGENT_JWT_AUDIENCE],
    requiredScopes: [...environment.AGENT_JWT_SCOPES],
    claimNames: {
      agent: environment.AGENT_CLAIM,
      groups: environment.GROUPS_CLAIM === '' ? null : environment.GROUPS_CLAIM,
      customer: environment.CUSTOMER_CLAIM === '' ? null : environment.CUSTOMER_CLAIM,
    },
    ...(environment.AGENT_JWKS_URI === undefined ? {} : { jwksUri: environment.AGENT_JWKS_URI }),
  });
