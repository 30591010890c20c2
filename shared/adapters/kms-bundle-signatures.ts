// Bundle signatures with an asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY): config:push signs
// with kms:Sign, the functions check with kms:Verify, so no key material or verification code of
// ours is involved, and disabling the key stops new bundles from being taken at once.
import type { KMSClient } from '@aws-sdk/client-kms';
import type { BundleSignatures } from '../control-plane/bundle.js';
import { kms } from './kms-client.js';
import { type ClientSource, clientOf } from './on-first-use.js';

const algorithm = 'ECDSA_SHA_256';

export class KmsBundleSignatures implements BundleSignatures {
  constructor(
    private readonly client: ClientSource<KMSClient>,
    private readonly keyId: string,
  ) {}

  async sign(message: Uint8Array): Promise<Uint8Array> {
    const [client, { SignCommand }] = await Promise.all([clientOf(this.client), kms()]);
    const { Signature } = await client.send(
      new SignCommand({ KeyId: this.keyId, Message: message, MessageType: 'RAW', SigningAlgorithm: algorithm }),
    );
    if (Signature === undefined) throw new Error('KMS returned no signature.');
    return Signature;
  }

  async verify(message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    const [client, { VerifyCommand }] = await Promise.all([clientOf(this.client), kms()]);
    try {
      const { SignatureValid } = await client.send(
        new VerifyCommand({
          KeyId: this.keyId,
          Message: message,
          MessageType: 'RAW',
          Signature: signature,
          SigningAlgorithm: algorithm,
        }),
      );
      return SignatureValid === true;
    } catch (error) {
      // KMS answers a signature that does not verify with this error, not with SignatureValid false.
      if (error instanceof Error && error.name === 'KMSInvalidSignatureException') return false;
      throw error;
    }
  }
}
