// Raw requests to the local AWS endpoints (the store, Step Functions): signed with a credential as
// the SDK would sign them, or sent as any other local process could, to show what each gets.
import { SignatureV4 } from '@smithy/signature-v4';
import { type LocalAwsCredentials, Sha256 } from '../../infra/local/aws-signature.js';

export interface AwsJsonCall {
  /** e.g. `DynamoDB_20120810.Scan` or `AWSStepFunctions.SendTaskSuccess`. */
  readonly target: string;
  readonly body: string;
  readonly service: 'dynamodb' | 'states';
  readonly contentType?: string;
}

const headersFor = (endpoint: string, call: AwsJsonCall): Record<string, string> => ({
  host: new URL(endpoint).host,
  'content-type': call.contentType ?? 'application/x-amz-json-1.0',
  'x-amz-target': call.target,
});

/** The headers the SDK would send for this call, signed with `credentials` (SigV4, region `local`). */
export const signedAwsHeaders = async (
  endpoint: string,
  credentials: LocalAwsCredentials,
  call: AwsJsonCall,
): Promise<Record<string, string>> => {
  const url = new URL(endpoint);
  const signer = new SignatureV4({ credentials, region: 'local', service: call.service, sha256: Sha256 });
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: '/',
    query: {},
    headers: headersFor(endpoint, call),
    body: call.body,
  });
  // fetch sets Host itself (to the same value).
  const { host: _host, ...headers } = signed.headers;
  return headers;
};

/** The request signed with `credentials`. */
export const signedAwsCall = async (endpoint: string, credentials: LocalAwsCredentials, call: AwsJsonCall) =>
  fetch(endpoint, { method: 'POST', headers: await signedAwsHeaders(endpoint, credentials, call), body: call.body });

/** The request with whatever headers a caller chooses (none, or a forged signature). */
export const unsignedAwsCall = (endpoint: string, call: AwsJsonCall, extraHeaders: Record<string, string> = {}) => {
  const { host: _host, ...headers } = headersFor(endpoint, call);
  return fetch(endpoint, { method: 'POST', headers: { ...headers, ...extraHeaders }, body: call.body });
};
