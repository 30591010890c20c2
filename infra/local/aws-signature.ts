// The local store and Step Functions endpoints answer only their own runtime's clients: each run
// makes a random credential, the AWS SDK signs every request with it (SigV4, as in AWS), and the
// endpoints check the signature with the SDK's own signer before anything else happens.
import { createHash, createHmac, type Hash, type Hmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, HttpRequest, SourceData } from '@smithy/types';
import type * as z from 'zod';
import { BodyTooLargeError, readRequestBody } from './request-body.js';

export interface LocalAwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** A fresh credential for one run; it is never a real AWS one. */
export const newLocalAwsCredentials = (): LocalAwsCredentials => ({
  accessKeyId: `LOCAL${randomBytes(10).toString('hex').toUpperCase()}`,
  secretAccessKey: randomBytes(30).toString('base64url'),
});

const bytes = (data: SourceData): Buffer =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 (and HMAC-SHA-256, given a key) for the signer, from node:crypto. */
export class Sha256 implements Checksum {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

const authorizationPattern =
  /^AWS4-HMAC-SHA256 Credential=([A-Za-z0-9]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;
const amzDatePattern = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
/** How far a request's signing time may be from now, as AWS allows. */
const maxSkewMs = 15 * 60_000;

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
const headerValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(',') : value;

/** One signer per credential, region and service: it keeps the day's signing key. */
const signers = new WeakMap<LocalAwsCredentials, Map<string, SignatureV4>>();
const signerFor = (credentials: LocalAwsCredentials, region: string, service: string): SignatureV4 => {
  const byScope = signers.get(credentials) ?? new Map<string, SignatureV4>();
  signers.set(credentials, byScope);
  const scope = `${region}/${service}`;
  let signer = byScope.get(scope);
  if (signer === undefined) {
    // Scopes come from requests: a few are kept, not one per caller's whim.
    if (byScope.size >= 8) byScope.clear();
    signer = new SignatureV4({ credentials, region, service, sha256: Sha256, uriEscapePath: true });
    byScope.set(scope, signer);
  }
  return signer;
};

/**
 * Whether the request is signed with the credential: the access key, a signing time within
 * fifteen minutes of now, and the signature over the signed headers and the whole body.
 */
export const isSignedBy = async (
  credentials: LocalAwsCredentials,
  request: Pick<IncomingMessage, 'method' | 'url' | 'headers'>,
  body: Buffer,
  now = Date.now(),
): Promise<boolean> => {
  const presented = authorizationPattern.exec(headerValue(request.headers.authorization) ?? '');
  if (presented === null) return false;
  const [, accessKeyId = '', shortDate, region = '', service = '', signedList = '', signature = ''] = presented;
  if (!timingSafeEqual(digest(accessKeyId), digest(credentials.accessKeyId))) return false;
  const signed = signedList.split(';');
  if (!signed.includes('host') || !signed.includes('x-amz-date')) return false;
  const amzDate = amzDatePattern.exec(headerValue(request.headers['x-amz-date']) ?? '');
  if (amzDate === null || !amzDate[0].startsWith(shortDate ?? '-')) return false;
  const [, year, month, day, hour, minute, second] = amzDate.map(Number);
  const signingDate = new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second));
  if (Math.abs(now - signingDate.getTime()) > maxSkewMs) return false;

  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = headerValue(request.headers[name]);
    if (value === undefined) return false;
    headers[name] = value;
  }
  // The signer trusts a signed payload hash; it must be the body's.
  const bodyHash = createHash('sha256').update(body).digest('hex');
  if (headers['x-amz-content-sha256'] !== undefined && headers['x-amz-content-sha256'] !== bodyHash) return false;
  const url = new URL(request.url ?? '/', 'http://local');
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  const toSign: HttpRequest = {
    method: request.method ?? 'GET',
    protocol: 'http:',
    hostname: url.hostname,
    path: url.pathname,
    query,
    headers,
    body,
  };
  const expected = await signerFor(credentials, region, service).sign(toSign, {
    signingDate,
    signableHeaders: new Set(signed),
  });
  const computed = /Signature=([0-9a-f]{64})$/.exec(String(expected.headers.authorization ?? ''))?.[1] ?? '';
  return computed.length === signature.length && timingSafeEqual(Buffer.from(computed), Buffer.from(signature));
};

/**
 * Puts the signature check in front of a server whose own handler reads the body (dynalite): the
 * body is read and checked first, then handed to that handler as if it were arriving.
 */
export const requireSignedRequests = (server: Server, credentials: LocalAwsCredentials, limitBytes: number): void => {
  const handlers = server.listeners('request');
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    readRequestBody(request, limitBytes)
      .then(async (body) => {
        if (!(await isSignedBy(credentials, request, body))) {
          refuseUnsigned(response);
          return;
        }
        for (const handler of handlers) handler.call(server, request, response);
        if (body.length > 0) request.emit('data', body);
        request.emit('end');
      })
      .catch((error: unknown) => {
        if (error instanceof BodyTooLargeError && !response.headersSent) {
          response.writeHead(413, { connection: 'close' }).end();
          response.once('finish', () => request.destroy());
        } else request.destroy();
      });
  });
};

/** The AWS JSON protocol's answer to a request that is not signed with the run's credential. */
export const refuseUnsigned = (response: ServerResponse): void => {
  const type = 'UnrecognizedClientException';
  response.writeHead(403, {
    'content-type': 'application/x-amz-json-1.0',
    'x-amzn-errortype': type,
    connection: 'close',
  });
  response.end(JSON.stringify({ __type: type, message: 'The request is not signed with this runtime’s credentials.' }));
};

/** A refusal in the AWS JSON protocol: its error type, message and HTTP status. */
export class AwsJsonError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/**
 * The request handler of a local endpoint speaking the AWS JSON protocol: the body read (1 MB at
 * most) and its signature checked first, then the action the `X-Amz-Target` header names (after
 * `targetPrefix`) called with the parsed body; what it returns is the answer, an AwsJsonError
 * thrown is the refusal, anything else a 500.
 */
export const awsJsonHandler =
  (options: {
    readonly credentials: LocalAwsCredentials;
    readonly targetPrefix: string;
    readonly contentType: string;
    /** Names the endpoint in the refusal of an action it does not answer. */
    readonly name: string;
    readonly actions: Readonly<Record<string, (body: unknown) => unknown>>;
    /** Told of a failure that is not a refusal (answered 500). @default nothing */
    readonly onFailure?: (error: unknown) => void;
  }) =>
  (request: IncomingMessage, response: ServerResponse): void => {
    const send = (status: number, body: unknown, errorType?: string) => {
      response.writeHead(status, {
        'content-type': options.contentType,
        ...(errorType === undefined ? {} : { 'x-amzn-errortype': errorType }),
      });
      response.end(JSON.stringify(body));
    };
    (async () => {
      let raw: Buffer;
      try {
        raw = await readRequestBody(request, 1024 * 1024);
      } catch (error) {
        if (error instanceof BodyTooLargeError)
          throw new AwsJsonError('ValidationException', 'The request is larger than 1 MB.', 413);
        throw error;
      }
      if (!(await isSignedBy(options.credentials, request, raw))) {
        refuseUnsigned(response);
        return;
      }
      const target = String(request.headers['x-amz-target'] ?? '');
      const action = target.startsWith(options.targetPrefix)
        ? options.actions[target.slice(options.targetPrefix.length)]
        : undefined;
      if (action === undefined)
        throw new AwsJsonError('UnknownOperationException', `This local ${options.name} does not answer ${target}.`);
      let body: unknown;
      try {
        body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
      } catch {
        throw new AwsJsonError('SerializationException', 'The request body is not JSON.');
      }
      send(200, action(body));
    })().catch((error: unknown) => {
      if (!(error instanceof AwsJsonError)) options.onFailure?.(error);
      const failure =
        error instanceof AwsJsonError ? error : new AwsJsonError('InternalFailure', 'Internal error.', 500);
      if (response.headersSent) response.destroy();
      else send(failure.status, { __type: failure.type, message: failure.message }, failure.type);
    });
  };

/** A request body parsed by its schema, or a ValidationException naming the first problem. */
export const parseAwsJson = <S extends z.ZodType>(schema: S, body: unknown): z.infer<S> => {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new AwsJsonError(
    'ValidationException',
    `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid request'}`,
  );
};
