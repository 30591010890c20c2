// Envelope encryption with KMS: a data key from GenerateDataKey encrypts the text locally
// (AES-256-GCM); the data key travels encrypted beside it and is opened with Decrypt. A data key
// is reused for a few minutes, so a busy function does not call KMS for every execution.
import type { KMSClient } from '@aws-sdk/client-kms';
import type { Sealer } from '../sealing.js';
import { openWithKey, Sealed, sealWithKey } from './aes-sealer.js';
import { kms } from './kms-client.js';
import { type ClientSource, clientOf } from './on-first-use.js';

const reuseMs = 5 * 60_000;

export class KmsSealer implements Sealer {
  private current: { plaintext: Buffer; encrypted: string; until: number } | null = null;
  private readonly opened = new Map<string, Buffer>();

  constructor(
    private readonly client: ClientSource<KMSClient>,
    private readonly keyId: string,
    private readonly now: () => number = Date.now,
  ) {}

  private async dataKey() {
    if (this.current !== null && this.current.until > this.now()) return this.current;
    const [client, { GenerateDataKeyCommand }] = await Promise.all([clientOf(this.client), kms()]);
    const { Plaintext, CiphertextBlob } = await client.send(
      new GenerateDataKeyCommand({
        KeyId: this.keyId,
        KeySpec: 'AES_256',
        EncryptionContext: { purpose: 'execution-arguments' },
      }),
    );
    if (Plaintext === undefined || CiphertextBlob === undefined) throw new Error('KMS returned no data key.');
    this.current = {
      plaintext: Buffer.from(Plaintext),
      encrypted: Buffer.from(CiphertextBlob).toString('base64'),
      until: this.now() + reuseMs,
    };
    return this.current;
  }

  async seal(plaintext: string, context: string): Promise<string> {
    const key = await this.dataKey();
    return JSON.stringify({ ...sealWithKey(key.plaintext, plaintext, context), edk: key.encrypted });
  }

  async open(sealed: string, context: string): Promise<string> {
    const parsed = Sealed.parse(JSON.parse(sealed));
    if (parsed.edk === undefined) throw new Error('The sealed value carries no data key.');
    let key = this.opened.get(parsed.edk);
    if (key === undefined) {
      const [client, { DecryptCommand }] = await Promise.all([clientOf(this.client), kms()]);
      const { Plaintext } = await client.send(
        new DecryptCommand({
          CiphertextBlob: Buffer.from(parsed.edk, 'base64'),
          KeyId: this.keyId,
          EncryptionContext: { purpose: 'execution-arguments' },
        }),
      );
      if (Plaintext === undefined) throw new Error('KMS could not open the data key.');
      key = Buffer.from(Plaintext);
      this.opened.set(parsed.edk, key);
    }
    return openWithKey(key, parsed, context);
  }
}
