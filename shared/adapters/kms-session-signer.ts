// Console sessions signed by a KMS HMAC key: the key never leaves KMS. Verified cookies are
// remembered for a minute per container, so a page view costs at most one KMS call a minute.
// KMS's SDK is loaded on the first signature or check: a page without a session needs neither.
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SessionSigner } from '../sessions/session.js';
import { kms } from './kms-client.js';
import { type ClientSource, clientOf } from './on-first-use.js';

const verifiedTtlMs = 60_000;
const maxRemembered = 1_000;

export class KmsSessionSigner implements SessionSigner {
  private readonly verified = new Map<string, number>();

  constructor(
    private readonly client: ClientSource<KMSClient>,
    private readonly keyId: string,
  ) {}

  async sign(text: string): Promise<string> {
    const [client, { GenerateMacCommand }] = await Promise.all([clientOf(this.client), kms()]);
    const { Mac } = await client.send(
      new GenerateMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: Buffer.from(text) }),
    );
    if (Mac === undefined) throw new Error('KMS returned no MAC.');
    return Buffer.from(Mac).toString('base64url');
  }

  async verify(text: string, mac: string): Promise<boolean> {
    const remembered = `${text}.${mac}`;
    const until = this.verified.get(remembered);
    if (until !== undefined && until > Date.now()) return true;
    try {
      const [client, { VerifyMacCommand }] = await Promise.all([clientOf(this.client), kms()]);
      const { MacValid } = await client.send(
        new VerifyMacCommand({
          KeyId: this.keyId,
          MacAlgorithm: 'HMAC_SHA_256',
          Message: Buffer.from(text),
          Mac: Buffer.from(mac, 'base64url'),
        }),
      );
      if (MacValid !== true) return false;
    } catch (error) {
      // A wrong MAC is an answer, not a failure.
      if (error instanceof Error && error.name === 'KMSInvalidMacException') return false;
      throw error;
    }
    if (this.verified.size >= maxRemembered) this.verified.clear();
    this.verified.set(remembered, Date.now() + verifiedTtlMs);
    return true;
  }
}
