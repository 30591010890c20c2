// A local KMS endpoint over the AWS JSON 1.1 protocol, with KMS's error names, so the SDK behaves
// as against AWS: asymmetric signing keys (ECC_NIST_P256, SIGN_VERIFY: Sign, Verify,
// GetPublicKey), symmetric keys (GenerateDataKey, Decrypt: envelope encryption) and HMAC keys
// (HMAC_256: GenerateMac, VerifyMac). Requests are signed with the endpoint's credential (SigV4,
// checked as the other local endpoints do). Keys are made in memory by createSigningKey,
// createSymmetricKey and createHmacKey; an action can be denied on a key, to see what a principal
// without the grant meets.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
  sign,
  timingSafeEqual,
  verify,
} from 'node:crypto';
import { createServer } from 'node:http';
import * as z from 'zod';
import {
  AwsJsonError,
  awsJsonHandler,
  type LocalAwsCredentials,
  newLocalAwsCredentials,
  parseAwsJson,
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
  createSigningKey(options?: KeyOptions): string;
  /** Makes a symmetric encryption key (data keys, Decrypt). Returns its ARN. */
  createSymmetricKey(options?: KeyOptions): string;
  /** Makes an HMAC_256 key (GenerateMac, VerifyMac). Returns its ARN. */
  createHmacKey(options?: KeyOptions): string;
  close(): Promise<void>;
}

interface KeyOptions {
  /** IAM actions refused on the key. @default none */
  readonly denied?: readonly string[];
}

type LocalKey =
  | { readonly kind: 'sign'; readonly privateKey: KeyObject; readonly publicKey: KeyObject }
  | { readonly kind: 'symmetric'; readonly material: Buffer }
  | { readonly kind: 'hmac'; readonly material: Buffer };

type StoredKey = LocalKey & { readonly id: string; readonly arn: string; readonly denied: ReadonlySet<string> };

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
const EncryptionContext = z.record(z.string(), z.string()).default({});
const GenerateDataKeyRequest = KeyRequest.extend({
  KeySpec: z.enum(['AES_256', 'AES_128']).optional(),
  NumberOfBytes: z.number().int().min(1).max(1024).optional(),
  EncryptionContext,
});
const DecryptRequest = z.object({ CiphertextBlob: base64, KeyId: z.string().min(1).optional(), EncryptionContext });
const MacRequest = KeyRequest.extend({ MacAlgorithm: z.literal('HMAC_SHA_256'), Message: base64 });
const VerifyMacRequest = MacRequest.extend({ Mac: base64 });

/** The encryption context as authenticated data: its pairs in key order, so the order sent does not matter. */
const contextBytes = (context: Record<string, string>): Buffer =>
  Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))));

/** A ciphertext blob: the key's id (36 characters), then AES-256-GCM's nonce, tag and ciphertext. */
const idBytes = 36;
const sealBlob = (key: StoredKey & { kind: 'symmetric' }, plaintext: Buffer, context: Record<string, string>) => {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.material, nonce).setAAD(contextBytes(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from(key.id, 'ascii'), nonce, cipher.getAuthTag(), ciphertext]);
};
const blobKeyId = (blob: Buffer): string => blob.subarray(0, idBytes).toString('ascii');
const openBlob = (key: StoredKey & { kind: 'symmetric' }, blob: Buffer, context: Record<string, string>) => {
  const decipher = createDecipheriv('aes-256-gcm', key.material, blob.subarray(idBytes, idBytes + 12))
    .setAAD(contextBytes(context))
    .setAuthTag(blob.subarray(idBytes + 12, idBytes + 28));
  try {
    return Buffer.concat([decipher.update(blob.subarray(idBytes + 28)), decipher.final()]);
  } catch {
    throw new AwsJsonError('InvalidCiphertextException', 'The ciphertext or its encryption context is not valid.');
  }
};

/** The endpoint's keys, found as KMS finds them (by id or ARN) and refused as it refuses them. */
const keyring = (onCall: LocalKmsOptions['onCall']) => {
  const keys = new Map<string, StoredKey>();
  const keyFor = (keyId: string, action: string): StoredKey => {
    const id = keyId.startsWith('arn:') ? (keyId.split('/').at(-1) ?? '') : keyId;
    const key = keys.get(id);
    if (key === undefined) throw new AwsJsonError('NotFoundException', `Key '${keyId}' does not exist`);
    if (key.denied.has(action)) {
      throw new AwsJsonError(
        'AccessDeniedException',
        `User: local is not authorized to perform: ${action} on resource: ${key.arn} because no identity-based policy allows the ${action} action`,
      );
    }
    onCall?.({ action, resource: key.arn });
    return key;
  };
  /** KMS refuses a key of another usage than the action's. */
  const wrongUsage = (key: StoredKey, action: string) =>
    new AwsJsonError('InvalidKeyUsageException', `${key.arn} cannot be used for ${action}.`);
  return {
    signingKey: (keyId: string, action: string) => {
      const key = keyFor(keyId, action);
      if (key.kind !== 'sign') throw wrongUsage(key, action);
      return key;
    },
    symmetricKey: (keyId: string, action: string) => {
      const key = keyFor(keyId, action);
      if (key.kind !== 'symmetric') throw wrongUsage(key, action);
      return key;
    },
    hmacKey: (keyId: string, action: string) => {
      const key = keyFor(keyId, action);
      if (key.kind !== 'hmac') throw wrongUsage(key, action);
      return key;
    },
    add: (key: LocalKey, { denied = [] }: KeyOptions): string => {
      const id = randomUUID();
      const arn = `arn:aws:kms:${region}:${account}:key/${id}`;
      keys.set(id, { ...key, id, arn, denied: new Set(denied) });
      return arn;
    },
  };
};
type Keyring = ReturnType<typeof keyring>;

const macOf = (key: StoredKey & { kind: 'hmac' }, message: string) =>
  createHmac('sha256', key.material).update(Buffer.from(message, 'base64')).digest();

/** The message as signed: RAW messages are hashed with SHA-256; this endpoint takes no precomputed digest. */
const messageOf = (request: z.infer<typeof SignRequest>): Buffer => {
  if (request.SigningAlgorithm !== algorithm) {
    throw new AwsJsonError('InvalidKeyUsageException', `This key signs with ${algorithm} only.`);
  }
  if (request.MessageType === 'DIGEST') {
    throw new AwsJsonError('ValidationException', 'This local KMS signs RAW messages only.');
  }
  const message = Buffer.from(request.Message, 'base64');
  if (message.length > 4096) throw new AwsJsonError('ValidationException', 'A RAW message is at most 4096 bytes.');
  return message;
};

/** The actions this endpoint answers, by the name in X-Amz-Target. */
const kmsActions = (keys: Keyring): Record<string, (body: unknown) => unknown> => ({
  Sign: (body) => {
    const request = parseAwsJson(SignRequest, body);
    const key = keys.signingKey(request.KeyId, 'kms:Sign');
    const signature = sign('sha256', messageOf(request), key.privateKey);
    return { KeyId: key.arn, Signature: signature.toString('base64'), SigningAlgorithm: algorithm };
  },
  Verify: (body) => {
    const request = parseAwsJson(VerifyRequest, body);
    const key = keys.signingKey(request.KeyId, 'kms:Verify');
    if (!verify('sha256', messageOf(request), key.publicKey, Buffer.from(request.Signature, 'base64'))) {
      throw new AwsJsonError('KMSInvalidSignatureException', 'The signature is not valid.');
    }
    return { KeyId: key.arn, SignatureValid: true, SigningAlgorithm: algorithm };
  },
  GetPublicKey: (body) => {
    const key = keys.signingKey(parseAwsJson(KeyRequest, body).KeyId, 'kms:GetPublicKey');
    return {
      KeyId: key.arn,
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      PublicKey: key.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      SigningAlgorithms: [algorithm],
    };
  },
  GenerateDataKey: (body) => {
    const request = parseAwsJson(GenerateDataKeyRequest, body);
    const key = keys.symmetricKey(request.KeyId, 'kms:GenerateDataKey');
    const plaintext = randomBytes(request.NumberOfBytes ?? (request.KeySpec === 'AES_128' ? 16 : 32));
    const blob = sealBlob(key, plaintext, request.EncryptionContext);
    return { KeyId: key.arn, Plaintext: plaintext.toString('base64'), CiphertextBlob: blob.toString('base64') };
  },
  Decrypt: (body) => {
    const request = parseAwsJson(DecryptRequest, body);
    const blob = Buffer.from(request.CiphertextBlob, 'base64');
    const key = keys.symmetricKey(request.KeyId ?? blobKeyId(blob), 'kms:Decrypt');
    if (blobKeyId(blob) !== key.id) {
      throw new AwsJsonError('IncorrectKeyException', 'The ciphertext was not encrypted with this key.');
    }
    const plaintext = openBlob(key, blob, request.EncryptionContext);
    return { KeyId: key.arn, Plaintext: plaintext.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
  },
  GenerateMac: (body) => {
    const request = parseAwsJson(MacRequest, body);
    const key = keys.hmacKey(request.KeyId, 'kms:GenerateMac');
    return { KeyId: key.arn, Mac: macOf(key, request.Message).toString('base64'), MacAlgorithm: 'HMAC_SHA_256' };
  },
  VerifyMac: (body) => {
    const request = parseAwsJson(VerifyMacRequest, body);
    const key = keys.hmacKey(request.KeyId, 'kms:VerifyMac');
    const presented = Buffer.from(request.Mac, 'base64');
    const expected = macOf(key, request.Message);
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw new AwsJsonError('KMSInvalidMacException', 'The MAC is not valid for this message and key.');
    }
    return { KeyId: key.arn, MacValid: true, MacAlgorithm: 'HMAC_SHA_256' };
  },
});

export const startLocalKms = async (options: LocalKmsOptions = {}): Promise<LocalKms> => {
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const keys = keyring(options.onCall);
  const server = createServer(
    awsJsonHandler({
      credentials,
      targetPrefix: 'TrentService.',
      contentType: 'application/x-amz-json-1.1',
      name: 'KMS',
      actions: kmsActions(keys),
    }),
  );
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    credentials,
    createSigningKey: (keyOptions = {}) => {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      return keys.add({ kind: 'sign', privateKey, publicKey: createPublicKey(privateKey) }, keyOptions);
    },
    createSymmetricKey: (keyOptions = {}) => keys.add({ kind: 'symmetric', material: randomBytes(32) }, keyOptions),
    createHmacKey: (keyOptions = {}) => keys.add({ kind: 'hmac', material: randomBytes(32) }, keyOptions),
    close: () => listening.close(),
  };
};
