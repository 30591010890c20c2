// The Lambda functions' environment, parsed once when a function first runs, failing with the
// variable's name and what was expected. Nothing else in the deployed code reads process.env.
// The console's and the token-checking fronts' environments have modules of their own
// (console-environment.ts, token-environments.ts), so the other functions do not build their
// schemas when they load.
import * as z from 'zod';

export const list = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

/** What every function reads. */
export const CommonEnvironment = z.object({
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

/** What the /tool/call-tool WebSocket function reads: the MCP function's, and where connections are answered. */
const ChannelSocketEnvironment = ApprovalEnvironment.extend({
  /** The WebSocket stage's management endpoint (https://<api>.execute-api.<region>.amazonaws.com/<stage>). */
  CONNECTIONS_URL: z.url(),
});

export const parseEnvironmentWith = <S extends z.ZodType>(
  schema: S,
  env: Readonly<Record<string, string | undefined>>,
): z.infer<S> => {
  // Read once per process: zod's compiled fast path would cost more to build than it saves.
  const parsed = schema.safeParse(env, { jitless: true });
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`The function's environment is invalid: ${problems.join('; ')}`);
};

export const parseEnvironment = (env: Readonly<Record<string, string | undefined>>): FunctionEnvironment =>
  parseEnvironmentWith(FunctionEnvironment, env);

/** The process environment read with this schema on first use, and kept: each function's reader. */
export const processEnvironmentOf = <S extends z.ZodType>(schema: S): (() => z.infer<S>) => {
  let parsed: z.infer<S> | undefined;
  return () => {
    parsed ??= parseEnvironmentWith(schema, process.env);
    return parsed;
  };
};

export const processEnvironment = processEnvironmentOf(FunctionEnvironment);
export const processApprovalEnvironment = processEnvironmentOf(ApprovalEnvironment);
export const processSenderEnvironment = processEnvironmentOf(SenderEnvironment);
export const processPublicDocumentsEnvironment = processEnvironmentOf(PublicDocumentsEnvironment);
export const processChannelSocketEnvironment = processEnvironmentOf(ChannelSocketEnvironment);

/** Variables the configuration's `${env:NAME}` references are resolved from. */
export const referenceVariables = (): Readonly<Record<string, string | undefined>> => process.env;
