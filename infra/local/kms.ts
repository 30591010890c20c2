// A local KMS endpoint for asymmetric signing keys (ECC_NIST_P256, SIGN_VERIFY): Sign, Verify
// and GetPublicKey over the AWS JSON 1.1 protocol, with KMS's error names, so the SDK behaves as
// against AWS. Requests are signed with the endpoint's credential (SigV4, checked as the other
// local endpoints do). Keys are made in memory by createSigningKey; an action can be denied on a
// key, to see what a principal without the grant meets.
import { createPublicKey, generateKeyPairSync, type KeyObject, randomUUID, sign, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as z from 'zod';
import {
  BodyTooLargeError,
  isSignedBy,
  type LocalAwsCredentials,
  newLocalAwsCredentials,
  readRequestBody,
  refuseUnsigned,
} from './aws-signature.js';
import { listen } from './net.js';

export interface LocalKmsOptions {
  /** The credential requests must be signed with. @default a fresh one */
  readonly credentials?: LocalAwsCredentials;
  /** Told of every call answered (action as IAM names it, key ARN), for tests that check the calls made. */
  readonly onCall?: (call: { action: string; resource: string }) => void;
}

export interface LocalKms {
  readonly endpoint: string;
  readonly credentials: LocalAwsCredentials;
  /** Makes a signing key; `denied` lists IAM actions (`kms:Sign`) refused on it. Returns its ARN. */
  createSigningKey(options?: { readonly denied?: readonly string[] }): string;
  close(): Promise<void>;
}

interface SigningKey {
  readonly arn: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly denied: ReadonlySet<string>;
}

class KmsError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const region = 'local';
const account = '000000000000';
const algorithm = 'ECDSA_SHA_256';

const base64 = z.base64().min(1);
const KeyRequest = z.object({ KeyId: z.string().min(1) });
const SignRequest = KeyRequest.extend({
  Message: base64,
  MessageType: z.enum(['RAW', 'DIGEST']).default('RAW'),
  SigningAlgorithm: z.string(),
});
const VerifyRequest = SignRequest.extend({ Signature: base64 });

const sendJson = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
};

export const startLocalKms = async (options: LocalKmsOptions = {}): Promise<LocalKms> => {
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const keys = new Map<string, SigningKey>();

  const keyFor = (keyId: string, action: string): SigningKey => {
    const id = keyId.startsWith('arn:') ? (keyId.split('/').at(-1) ?? '') : keyId;
    const key = keys.get(id);
    if (key === undefined) throw new KmsError(400, 'NotFoundException', `Key '${keyId}' does not exist`);
    if (key.denied.has(action)) {
      throw new KmsError(
        400,
        'AccessDeniedException',
        `User: local is not authorized to perform: ${action} on resource: ${key.arn} because no identity-based policy allows the ${action} action`,
      );
    }
    options.onCall?.({ action, resource: key.arn });
    return key;
  };

  /** The message as signed: RAW messages are hashed with SHA-256; this endpoint takes no precomputed digest. */
  const messageOf = (request: z.infer<typeof SignRequest>): Buffer => {
    if (request.SigningAlgorithm !== algorithm) {
      throw new KmsError(400, 'InvalidKeyUsageException', `This key signs with ${algorithm} only.`);
    }
    if (request.MessageType === 'DIGEST') {
      throw new KmsError(400, 'ValidationException', 'This local KMS signs RAW messages only.');
    }
    const message = Buffer.from(request.Message, 'base64');
    if (message.length > 4096) throw new KmsError(400, 'ValidationException', 'A RAW message is at most 4096 bytes.');
    return message;
  };

  const actions: Record<string, (body: unknown) => unknown> = {
    Sign: (body) => {
      const request = parse(SignRequest, body);
      const key = keyFor(request.KeyId, 'kms:Sign');
      const signature = sign('sha256', messageOf(request), key.privateKey);
      return { KeyId: key.arn, Signature: signature.toString('base64'), SigningAlgorithm: algorithm };
    },
    Verify: (body) => {
      const request = parse(VerifyRequest, body);
      const key = keyFor(request.KeyId, 'kms:Verify');
      if (!verify('sha256', messageOf(request), key.publicKey, Buffer.from(request.Signature, 'base64'))) {
        throw new KmsError(400, 'KMSInvalidSignatureException', 'The signature is not valid.');
      }
      return { KeyId: key.arn, SignatureValid: true, SigningAlgorithm: algorithm };
    },
    GetPublicKey: (body) => {
      const key = keyFor(parse(KeyRequest, body).KeyId, 'kms:GetPublicKey');
      return {
        KeyId: key.arn,
        KeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        PublicKey: key.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
        SigningAlgorithms: [algorithm],
      };
    },
  };

  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    let raw: Buffer;
    try {
      raw = await readRequestBody(request, 1024 * 1024);
    } catch (error) {
      if (error instanceof BodyTooLargeError)
        throw new KmsError(413, 'ValidationException', 'The request is larger than 1 MB.');
      throw error;
    }
    if (!(await isSignedBy(credentials, request, raw))) {
      refuseUnsigned(response);
      return;
    }
    const target = String(request.headers['x-amz-target'] ?? '');
    const action = target.startsWith('TrentService.') ? actions[target.slice('TrentService.'.length)] : undefined;
    if (action === undefined)
      throw new KmsError(400, 'UnknownOperationException', `This local KMS does not answer ${target}.`);
    let body: unknown;
    try {
      body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
    } catch {
      throw new KmsError(400, 'SerializationException', 'The request body is not JSON.');
    }
    sendJson(response, 200, action(body));
  };

  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      const failure = error instanceof KmsError ? error : new KmsError(500, 'KMSInternalException', 'Internal error.');
      if (!response.headersSent) sendJson(response, failure.status, { __type: failure.type, message: failure.message });
      else response.destroy();
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    credentials,
    createSigningKey: ({ denied = [] } = {}) => {
      const id = randomUUID();
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const arn = `arn:aws:kms:${region}:${account}:key/${id}`;
      keys.set(id, { arn, privateKey, publicKey: createPublicKey(privateKey), denied: new Set(denied) });
      return arn;
    },
    close: () => listening.close(),
  };
};

const parse = <S extends z.ZodType>(schema: S, body: unknown): z.infer<S> => {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new KmsError(
    400,
    'ValidationException',
    `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid request'}`,
  );
};
