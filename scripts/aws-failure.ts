// An AWS call that failed, said for people: what was being done, and why AWS (or the local
// endpoint) refused, from the SDK error's name; never a stack trace.

/** A failure of one step of a command, with what the step was doing. */
export class StepFailure extends Error {
  override readonly name = 'StepFailure';
  constructor(
    readonly step: string,
    override readonly cause: unknown,
  ) {
    super(`could not ${step}`);
  }
}

/** Runs one step, naming it in what it throws. */
export const step = <T>(what: string, run: () => Promise<T>): Promise<T> =>
  run().catch((error: unknown) => {
    throw new StepFailure(what, error);
  });

const fieldOf = (error: unknown, field: string): unknown =>
  typeof error === 'object' && error !== null && field in error ? Reflect.get(error, field) : undefined;

const missing = new Set(['ResourceNotFoundException', 'NoSuchBucket', 'NotFoundException', 'NoSuchKey']);
const refused = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'InvalidAccessKeyId',
  'InvalidClientTokenId',
  'ExpiredToken',
  'ExpiredTokenException',
]);
const unreachable = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', 'EHOSTUNREACH']);

/** Why the call failed, in one sentence (without the step). */
export const describeAwsError = (error: unknown): string => {
  const name = String(fieldOf(error, 'name') ?? '');
  const message = String(fieldOf(error, 'message') ?? error).split('\n')[0] ?? '';
  const status = fieldOf(fieldOf(error, '$metadata'), 'httpStatusCode');
  const code = String(fieldOf(error, 'code') ?? '');
  if (missing.has(name)) return `it does not exist (check the name and the region): ${message}`;
  if (refused.has(name) || status === 403) return `AWS refused the credential or its permissions: ${message}`;
  if (name === 'EntityTooLarge' || status === 413) return `the request is too large for the endpoint: ${message}`;
  if (name === 'DisabledException' || name === 'KMSInvalidStateException')
    return `the key cannot be used now: ${message}`;
  if (name === 'CredentialsProviderError') {
    return 'no AWS credentials were found: sign in (aws sso login, or AWS_PROFILE / AWS_ACCESS_KEY_ID) and try again';
  }
  if (unreachable.has(code) || unreachable.has(name)) return `the endpoint cannot be reached (${code || name})`;
  if (name === 'UnversionedBucketError') return message;
  return `${name || 'error'}: ${message}`;
};
