// The Lambda functions' environment, parsed once when a function first runs, failing with the
// variable's name and what was expected. Nothing else in the deployed code reads process.env.
import * as z from 'zod';

const list = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

/** What every function reads. */
const CommonEnvironment = z.object({
  /** Public base URL (e.g. a custom domain); derived from the request when absent. */
  PUBLIC_URL: z.url().optional(),
  /** Host names accepted on MCP requests; empty accepts the API's own domains only (routed by API Gateway). */
  ALLOWED_HOSTS: list,
  /** Browser origins (host names) accepted on MCP requests. */
  ALLOWED_ORIGINS: list,
  /** OAuth authorization servers advertised in the protected-resource metadata. */
  AUTHORIZATION_SERVERS: list,
});

/** What functions that use the execution store read. */
export const FunctionEnvironment = CommonEnvironment.extend({
  EXECUTIONS_TABLE: z.string().min(1),
  /** Table holding the pointer to the pushed configuration bundle (its version, hash and signature). */
  CONFIG_TABLE: z.string().min(1),
  /** Bucket holding the configuration bundles, an object version per push. */
  CONFIG_BUCKET: z.string().min(1),
  /** Asymmetric KMS key (ECC_NIST_P256) whose signature a bundle must carry, by ARN. */
  CONFIG_SIGNING_KEY_ID: z.string().min(1),
  /** How often a function instance re-reads the configuration, in seconds. */
  CONFIG_REFRESH_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  /** KMS key that encrypts secret argument values at rest. */
  DATA_KEY_ID: z.string().min(1),
  /**
   * Where the configuration's `${secret:NAME}` values are kept: the Secrets Manager secret
   * `<prefix>NAME`. Unset in a function that may read none (its references stay unset).
   */
  SECRETS_PREFIX: z.string().min(1).optional(),
  /** How long a secret's value is used before it is read again, in seconds. */
  SECRETS_MAX_AGE_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
});
export type FunctionEnvironment = z.infer<typeof FunctionEnvironment>;

/** What functions that take part in approvals read (the MCP function starts approval runs too). */
export const ApprovalEnvironment = FunctionEnvironment.extend({
  /** The approval state machine. */
  STATE_MACHINE_ARN: z.string().min(1),
  /** The bus held-call notices are put on; none when unset. */
  EVENT_BUS_NAME: z.string().min(1).optional(),
  /** The API's own base URL, for console links when PUBLIC_URL is not set. */
  API_URL: z.url().optional(),
});
export type ApprovalEnvironment = z.infer<typeof ApprovalEnvironment>;

/** The receipt key: the functions that send approved calls sign with it, the public documents list its public part. */
const receiptKeyVariables = {
  /** Asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY) approval receipts are signed with, by ARN. */
  RECEIPT_KEY_ID: z.string().min(1),
};

/** What the functions that send approved calls read (the held-call steps, the reconciler). */
const SenderEnvironment = ApprovalEnvironment.extend(receiptKeyVariables);
export type SenderEnvironment = z.infer<typeof SenderEnvironment>;

/** What the public documents' function reads (the protected-resource metadata, the receipt keys). */
const PublicDocumentsEnvironment = CommonEnvironment.extend(receiptKeyVariables);

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
export type AgentAuthorizerEnvironment = z.infer<typeof AgentAuthorizerEnvironment>;

/** What the /tool/call-tool WebSocket function reads: the MCP function's, and where connections are answered. */
const ChannelSocketEnvironment = ApprovalEnvironment.extend({
  /** The WebSocket stage's management endpoint (https://<api>.execute-api.<region>.amazonaws.com/<stage>). */
  CONNECTIONS_URL: z.url(),
});
export type ChannelSocketEnvironment = z.infer<typeof ChannelSocketEnvironment>;

/** What the console reads: how approvers sign in, and the key that signs their sessions. */
const ConsoleEnvironment = ApprovalEnvironment.extend({
  /** KMS HMAC key (HMAC_256) that signs console session cookies. */
  SESSION_KEY_ID: z.string().min(1),
  /** The OpenID Connect issuer approvers sign in with (the stack's Cognito user pool by default). */
  OIDC_ISSUER: z.url(),
  /** The console's client id at the issuer (a public client: PKCE, no secret). */
  OIDC_CLIENT_ID: z.string().min(1),
  /** The ID token claim naming the approver. */
  OIDC_ID_CLAIM: z.string().min(1).default('email'),
  /** The ID token claim listing the approver's groups. */
  OIDC_GROUPS_CLAIM: z.string().min(1).default('cognito:groups'),
  OIDC_SCOPES: z.string().min(1).default('openid email profile'),
  /**
   * The provider's logout endpoint when its discovery names none (Cognito's https://<domain>/logout),
   * sent client_id and logout_uri on sign-out; without it, discovery's end_session_endpoint.
   */
  OIDC_LOGOUT_URL: z.url().optional(),
  /**
   * The OpenID Connect issuer customers sign in with to confirm calls made for them (the stack's
   * customer pool by default); without it the customer pages answer 503. Given with its client id.
   */
  CUSTOMER_OIDC_ISSUER: z.url().optional(),
  /** The customer pages' client id at that issuer (a public client: PKCE, no secret). */
  CUSTOMER_OIDC_CLIENT_ID: z.string().min(1).optional(),
  /** The ID token claim holding the customer id agents act for (the Cognito pool's custom attribute). */
  CUSTOMER_OIDC_ID_CLAIM: z.string().min(1).default('custom:customer_id'),
  CUSTOMER_OIDC_SCOPES: z.string().min(1).default('openid'),
}).refine(
  (environment) =>
    (environment.CUSTOMER_OIDC_ISSUER === undefined) === (environment.CUSTOMER_OIDC_CLIENT_ID === undefined),
  {
    message: 'set CUSTOMER_OIDC_ISSUER and CUSTOMER_OIDC_CLIENT_ID together (or neither, leaving customer sign-in off)',
    path: ['CUSTOMER_OIDC_CLIENT_ID'],
  },
);
export type ConsoleEnvironment = z.infer<typeof ConsoleEnvironment>;

/** How customers sign in, from the console's environment; null when it names no customer provider. */
export const customerOidcSettings = (environment: ConsoleEnvironment) =>
  environment.CUSTOMER_OIDC_ISSUER === undefined || environment.CUSTOMER_OIDC_CLIENT_ID === undefined
    ? null
    : {
        issuer: environment.CUSTOMER_OIDC_ISSUER,
        clientId: environment.CUSTOMER_OIDC_CLIENT_ID,
        idClaim: environment.CUSTOMER_OIDC_ID_CLAIM,
        scopes: environment.CUSTOMER_OIDC_SCOPES,
      };

/** The console's environment from these variables (tests; the function reads its own once). */
export const parseConsoleEnvironment = (env: Readonly<Record<string, string | undefined>>): ConsoleEnvironment =>
  parseEnvironmentWith(ConsoleEnvironment, env);

const parseEnvironmentWith = <S extends z.ZodType>(
  schema: S,
  env: Readonly<Record<string, string | undefined>>,
): z.infer<S> => {
  // Read once per process: zod's compiled fast path would cost more to build than it saves.
  const parsed = schema.safeParse(env, { jitless: true });
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`The function's environment is invalid: ${problems.join('; ')}`);
};

/** The gRPC container's environment from these variables (tests; the container reads its own once). */
export const parseGrpcEnvironment = (env: Readonly<Record<string, string | undefined>>): GrpcEnvironment =>
  parseEnvironmentWith(GrpcEnvironment, env);

export const parseEnvironment = (env: Readonly<Record<string, string | undefined>>): FunctionEnvironment =>
  parseEnvironmentWith(FunctionEnvironment, env);

/** The process environment, parsed on first use and kept. */
let storeEnvironment: FunctionEnvironment | undefined;
export const processEnvironment = (): FunctionEnvironment => {
  storeEnvironment ??= parseEnvironment(process.env);
  return storeEnvironment;
};
let stepsEnvironment: ApprovalEnvironment | undefined;
export const processApprovalEnvironment = (): ApprovalEnvironment => {
  stepsEnvironment ??= parseEnvironmentWith(ApprovalEnvironment, process.env);
  return stepsEnvironment;
};
let senderEnvironment: SenderEnvironment | undefined;
export const processSenderEnvironment = (): SenderEnvironment => {
  senderEnvironment ??= parseEnvironmentWith(SenderEnvironment, process.env);
  return senderEnvironment;
};
let documentsEnvironment: z.infer<typeof PublicDocumentsEnvironment> | undefined;
export const processPublicDocumentsEnvironment = (): z.infer<typeof PublicDocumentsEnvironment> => {
  documentsEnvironment ??= parseEnvironmentWith(PublicDocumentsEnvironment, process.env);
  return documentsEnvironment;
};
let consoleEnvironment: ConsoleEnvironment | undefined;
export const processConsoleEnvironment = (): ConsoleEnvironment => {
  consoleEnvironment ??= parseEnvironmentWith(ConsoleEnvironment, process.env);
  return consoleEnvironment;
};
let containerEnvironment: GrpcEnvironment | undefined;
export const processGrpcEnvironment = (): GrpcEnvironment => {
  containerEnvironment ??= parseGrpcEnvironment(process.env);
  return containerEnvironment;
};
let authorizerEnvironment: AgentAuthorizerEnvironment | undefined;
export const processAgentAuthorizerEnvironment = (): AgentAuthorizerEnvironment => {
  authorizerEnvironment ??= parseEnvironmentWith(AgentAuthorizerEnvironment, process.env);
  return authorizerEnvironment;
};
let socketEnvironment: ChannelSocketEnvironment | undefined;
export const processChannelSocketEnvironment = (): ChannelSocketEnvironment => {
  socketEnvironment ??= parseEnvironmentWith(ChannelSocketEnvironment, process.env);
  return socketEnvironment;
};

/** Variables the configuration's `${env:NAME}` references are resolved from. */
export const referenceVariables = (): Readonly<Record<string, string | undefined>> => process.env;
