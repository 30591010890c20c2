// A local S3 endpoint for configuration bundles: path-style PutObject and GetObject with object
// versions (every bucket versioned, as the stack's is), and CreateBucket, in memory. Requests are
// signed with the endpoint's credential (SigV4, checked as the other local endpoints do); errors
// come back in S3's XML with its codes, so the SDK raises what it raises against AWS.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isSignedBy, type LocalAwsCredentials, newLocalAwsCredentials } from './aws-signature.js';
import { listen } from './net.js';
import { BodyTooLargeError, readRequestBody } from './request-body.js';

export interface LocalS3Options {
  /** Buckets that exist from the start. @default none */
  readonly buckets?: readonly string[];
  /** The credential requests must be signed with. @default a fresh one */
  readonly credentials?: LocalAwsCredentials;
  /** The largest object accepted. @default 64 MiB */
  readonly maxObjectBytes?: number;
  /** Told of every request answered (action, bucket/key, status), for tests that check the calls made. */
  readonly onRequest?: (call: { action: string; resource: string; status: number }) => void;
}

export interface LocalS3 {
  readonly endpoint: string;
  readonly credentials: LocalAwsCredentials;
  createBucket(name: string): void;
  /** Replaces the bytes of a kept object version, as someone with write access to the bucket could. */
  tamper(bucket: string, key: string, versionId: string, bytes: Uint8Array): void;
  close(): Promise<void>;
}

interface ObjectVersion {
  readonly versionId: string;
  bytes: Uint8Array;
  readonly contentType: string;
}

class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (character) => `&#${character.charCodeAt(0)};`);

const sendError = (response: ServerResponse, error: S3Error, resource: string) => {
  response.writeHead(error.status, { 'content-type': 'application/xml' });
  response.end(
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message><Resource>${escapeXml(resource)}</Resource></Error>`,
  );
};

/** The endpoint's objects by bucket, then key, their versions oldest first. */
const objectStore = (initial: readonly string[]) => {
  const buckets = new Map<string, Map<string, ObjectVersion[]>>();
  for (const name of initial) buckets.set(name, new Map());
  const bucketNamed = (name: string) => {
    const bucket = buckets.get(name);
    if (bucket === undefined) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
    return bucket;
  };
  return {
    createBucket: (name: string) => {
      if (!buckets.has(name)) buckets.set(name, new Map());
    },
    putObject: (bucket: string, key: string, body: Buffer, request: IncomingMessage) => {
      const versionId = randomBytes(16).toString('base64url');
      const versions = bucketNamed(bucket).get(key) ?? [];
      versions.push({
        versionId,
        bytes: new Uint8Array(body),
        contentType: String(request.headers['content-type'] ?? 'binary/octet-stream'),
      });
      bucketNamed(bucket).set(key, versions);
      return versionId;
    },
    getObject: (bucket: string, key: string, versionId: string | null): ObjectVersion => {
      const versions = bucketNamed(bucket).get(key) ?? [];
      if (versionId === null) {
        const latest = versions.at(-1);
        if (latest === undefined) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
        return latest;
      }
      const found = versions.find((version) => version.versionId === versionId);
      if (found === undefined) throw new S3Error(404, 'NoSuchVersion', 'The specified version does not exist.');
      return found;
    },
  };
};
type ObjectStore = ReturnType<typeof objectStore>;

/** The body, up to the largest object accepted (S3's EntityTooLarge past it). */
const readObjectBody = async (
  request: IncomingMessage,
  response: ServerResponse,
  maxObjectBytes: number,
): Promise<Buffer> => {
  try {
    return await readRequestBody(request, maxObjectBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      response.setHeader('connection', 'close');
      throw new S3Error(
        400,
        'EntityTooLarge',
        `Your proposed upload exceeds the maximum allowed size (${maxObjectBytes} bytes here).`,
      );
    }
    throw error;
  }
};

/** Answers one request: checks its signature, then runs its action; what it was, for onRequest. */
const answer = async (
  endpoint: {
    readonly objects: ObjectStore;
    readonly credentials: LocalAwsCredentials;
    readonly maxObjectBytes: number;
  },
  request: IncomingMessage,
  response: ServerResponse,
): Promise<{ action: string; resource: string }> => {
  const { objects } = endpoint;
  const url = new URL(request.url ?? '/', 'http://local');
  const [, bucket = '', ...keyParts] = url.pathname.split('/');
  const key = keyParts.map(decodeURIComponent).join('/');
  const resource = key === '' ? bucket : `${bucket}/${key}`;
  const method = request.method ?? 'GET';
  const action =
    method === 'PUT' ? (key === '' ? 'CreateBucket' : 'PutObject') : method === 'GET' ? 'GetObject' : method;
  const body = await readObjectBody(request, response, endpoint.maxObjectBytes);
  if (!(await isSignedBy(endpoint.credentials, request, body))) {
    throw new S3Error(403, 'AccessDenied', 'The request is not signed with this endpoint’s credential.');
  }
  if (action === 'CreateBucket') {
    objects.createBucket(bucket);
    response.writeHead(200, { location: `/${bucket}` }).end();
  } else if (action === 'PutObject' && key !== '') {
    const versionId = objects.putObject(bucket, key, body, request);
    response.writeHead(200, { 'x-amz-version-id': versionId, etag: `"${versionId}"` }).end();
  } else if (action === 'GetObject' && key !== '') {
    const found = objects.getObject(bucket, key, url.searchParams.get('versionId'));
    response
      .writeHead(200, {
        'content-type': found.contentType,
        'content-length': found.bytes.length,
        'x-amz-version-id': found.versionId,
      })
      .end(found.bytes);
  } else throw new S3Error(501, 'NotImplemented', `This local S3 answers PutObject, GetObject and CreateBucket only.`);
  return { action, resource };
};

export const startLocalS3 = async (options: LocalS3Options = {}): Promise<LocalS3> => {
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const objects = objectStore(options.buckets ?? []);
  const endpoint = { objects, credentials, maxObjectBytes: options.maxObjectBytes ?? 64 * 1024 * 1024 };
  const server = createServer((request, response) => {
    answer(endpoint, request, response)
      .then((call) => options.onRequest?.({ ...call, status: response.statusCode }))
      .catch((error: unknown) => {
        const failure =
          error instanceof S3Error ? error : new S3Error(500, 'InternalError', 'We encountered an internal error.');
        if (!response.headersSent) sendError(response, failure, request.url ?? '/');
        else response.destroy();
        options.onRequest?.({ action: request.method ?? '', resource: request.url ?? '/', status: failure.status });
      });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    credentials,
    createBucket: objects.createBucket,
    tamper: (bucket, key, versionId, bytes) => {
      objects.getObject(bucket, key, versionId).bytes = bytes;
    },
    close: () => listening.close(),
  };
};
