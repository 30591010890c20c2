// The environments of the fronts that check agents' tokens themselves: the agent authorizer, and
// the gRPC container as API Gateway's JWT authorizer does for the MCP function (environment.ts has
// what every function reads).
import * as z from 'zod';
import {
  ApprovalEnvironment,
  CommonEnvironment,
  list,
  parseEnvironmentWith,
  processEnvironmentOf,
} from './environment.js';

/** How the fronts that check agents' tokens (the agent authorizer, the gRPC container) check them. */
const agentTokenVariables = {
  /** The OpenID Connect issuer of agents' tokens (their `iss`). */
  AGENT_JWT_ISSUER: z.url(),
  /** Accepted audiences (or Cognito app client ids), comma-separated; none checked when empty (then give scopes). */
  AGENT_JWT_AUDIENCE: list,
  /** Scopes of which a token must carry one, comma-separated; none required when empty. */
  AGENT_JWT_SCOPES: list,
  /** The issuer's key set; found by OpenID discovery when absent. */
  AGENT_JWKS_URI: z.url().optional(),
  /** The claim naming the caller: the subject the configuration's `agents:` entries list. */
  AGENT_CLAIM: z.string().min(1).default('sub'),
  /** The claim an unlisted agent's groups are read from; none read when empty. */
  GROUPS_CLAIM: z.string().default(''),
  /** The claim an unlisted agent's customer is read from; none read when empty. */
  CUSTOMER_CLAIM: z.string().default(''),
};
/** An audience, a scope, or both: without either, any token of the issuer would do. */
const bindsTokens = (environment: { AGENT_JWT_AUDIENCE: readonly string[]; AGENT_JWT_SCOPES: readonly string[] }) =>
  environment.AGENT_JWT_AUDIENCE.length > 0 || environment.AGENT_JWT_SCOPES.length > 0;
const bindsTokensIssue = {
  message: 'give an audience (AGENT_JWT_AUDIENCE) or a required scope (AGENT_JWT_SCOPES), or both',
  path: ['AGENT_JWT_AUDIENCE'],
};

/**
 * What the gRPC container reads (infra/container/grpc-main.ts): what the MCP function reads, and
 * how it checks agents' tokens itself, as API Gateway's JWT authorizer does for the function.
 */
const GrpcEnvironment = ApprovalEnvironment.extend({
  /** The port the gRPC server listens on, in plain HTTP/2 (the load balancer terminates TLS). */
  GRPC_PORT: z.coerce.number().int().min(1).max(65535).default(50051),
  ...agentTokenVariables,
}).refine(bindsTokens, bindsTokensIssue);
export type GrpcEnvironment = z.infer<typeof GrpcEnvironment>;

/** What the agent authorizer reads: the token checks, and the claims naming the caller. */
const AgentAuthorizerEnvironment = CommonEnvironment.extend(agentTokenVariables).refine(bindsTokens, bindsTokensIssue);

/** The gRPC container's environment from these variables (tests; the container reads its own once). */
export const parseGrpcEnvironment = (env: Readonly<Record<string, string | undefined>>): GrpcEnvironment =>
  parseEnvironmentWith(GrpcEnvironment, env);

export const processGrpcEnvironment = processEnvironmentOf(GrpcEnvironment);
export const processAgentAuthorizerEnvironment = processEnvironmentOf(AgentAuthorizerEnvironment);
