// `npm run receipts:verify -- <receipt> [--jwks <url>] [--issuer <url>]`: checks an approval receipt
// as a system receiving it would, with an independent JWT library: the ES256 signature against the
// gateway's published keys (/.well-known/jwks.json), the issuer, exp and iat; then prints its claims.
// Exit 0 valid, 1 invalid (saying why) or not checkable, 2 a wrong command.
import {
  JwtExpiredError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
} from 'aws-jwt-verify/error';
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import * as z from 'zod';
import { defaultPort } from '../infra/local/options.js';
import { errorText } from '../shared/errors.js';
import { jwksPath } from '../shared/receipts/signer.js';
import { readCommandLine } from './command-line.js';

const localGateway = `http://localhost:${defaultPort}`;

const usage = `Usage: npm run receipts:verify -- <receipt> [--jwks <url>] [--issuer <url>]

  receipt         the compact JWS (the Approval-Receipt header, or _meta "approval-gateway/receipt")
  --jwks <url>    the gateway's JWK Set (default <issuer>${jwksPath}, else ${localGateway}${jwksPath})
  --issuer <url>  the gateway's public base URL the receipt must name as iss (default the JWK
                  Set's URL without ${jwksPath})
`;

const options = {
  jwks: { type: 'string' },
  issuer: { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** How far a receipt's iat may be ahead of this machine's clock. */
const clockSkewSeconds = 60;

/** The JWK Set as the gateway publishes it: P-256 signing keys, each named by its kid. */
const JwkSet = z.object({
  keys: z.array(
    z.object({
      kty: z.literal('EC'),
      crv: z.literal('P-256'),
      x: z.string().min(1),
      y: z.string().min(1),
      kid: z.string().min(1),
      alg: z.literal('ES256').optional(),
      use: z.literal('sig').optional(),
    }),
  ),
});

/** Where the keys are and which issuer the receipt must name, from the options given. */
const endpointsOf = (values: { jwks?: string; issuer?: string }): { jwksUrl: string; issuer: string } => {
  const issuer = values.issuer?.replace(/\/+$/, '');
  const jwksUrl = values.jwks ?? `${issuer ?? localGateway}${jwksPath}`;
  return { jwksUrl, issuer: issuer ?? (jwksUrl.endsWith(jwksPath) ? jwksUrl.slice(0, -jwksPath.length) : jwksUrl) };
};

const fetchJwks = async (url: string): Promise<z.infer<typeof JwkSet>> => {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const parsed = JwkSet.safeParse(await response.json());
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${url} is not a JWK Set of P-256 keys (at ${issue?.path.join('.') || '(root)'}: ${issue?.message})`,
    );
  }
  return parsed.data;
};

/** Why a receipt is refused, in a reader's words, from the JWT library's error. */
const whyInvalid = (error: unknown, jwksUrl: string): string => {
  const text = errorText(error);
  if (error instanceof JwtExpiredError) return `expired: ${text}`;
  if (error instanceof JwtInvalidSignatureError)
    return 'bad signature: the receipt was changed, or not signed by this key';
  if (error instanceof KidNotFoundInJwksError || error instanceof JwtWithoutValidKidError) {
    return `unknown key: the receipt's kid is not among the keys at ${jwksUrl}`;
  }
  if (error instanceof JwtInvalidIssuerError) return `wrong issuer: ${text}`;
  if (error instanceof JwtInvalidSignatureAlgorithmError) return `not ES256: ${text}`;
  return `not a valid receipt: ${text}`;
};

/** What the library leaves to the caller: a receipt always says when it was signed and until when it holds. */
const timesProblem = (claims: Readonly<Record<string, unknown>>): string | null => {
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || typeof exp !== 'number') return 'not a valid receipt: it has no iat or no exp';
  if (iat > Date.now() / 1000 + clockSkewSeconds)
    return `not yet valid: signed at ${new Date(iat * 1000).toISOString()}, in the future`;
  if (exp <= iat) return 'not a valid receipt: its exp is not after its iat';
  return null;
};

const run = async (): Promise<number> => {
  const parsed = readCommandLine(options, usage, { positionals: true });
  if ('exit' in parsed) return parsed.exit;
  const [receipt, ...rest] = parsed.positionals;
  if (receipt === undefined || rest.length > 0) {
    process.stderr.write(usage);
    return 2;
  }
  const { jwksUrl, issuer } = endpointsOf(parsed.values);
  let jwks: z.infer<typeof JwkSet>;
  try {
    jwks = await fetchJwks(jwksUrl);
  } catch (error) {
    process.stderr.write(`Cannot check the receipt: the keys could not be read (${errorText(error)}).\n`);
    return 1;
  }
  const verifier = JwtVerifier.create({ issuer, audience: null, jwksUri: jwksUrl });
  verifier.cacheJwks(jwks);
  let claims: Readonly<Record<string, unknown>>;
  try {
    claims = verifier.verifySync(receipt.trim());
  } catch (error) {
    process.stderr.write(`Invalid receipt: ${whyInvalid(error, jwksUrl)}\n`);
    return 1;
  }
  const problem = timesProblem(claims);
  if (problem !== null) {
    process.stderr.write(`Invalid receipt: ${problem}\n`);
    return 1;
  }
  process.stdout.write(
    `Valid receipt, signed by ${issuer} (keys at ${jwksUrl}):\n${JSON.stringify(claims, null, 2)}\n`,
  );
  return 0;
};

process.exitCode = await run().catch((error: unknown) => {
  process.stderr.write(`receipts:verify failed: ${errorText(error)}\n`);
  return 1;
});
