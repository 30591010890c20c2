// Bundle objects in S3: each push a new object version in a versioned bucket, read back by the
// exact version the configuration table names (a later upload under the same key changes nothing).
import type { S3Client } from '@aws-sdk/client-s3';
import type { BundleObjects } from '../control-plane/bundle.js';
import { type ClientSource, clientOf, onFirstUse } from './on-first-use.js';

/** S3's SDK module, loaded when a bundle is first read (the pointer read at each refresh needs only DynamoDB). */
const s3 = onFirstUse(() => import('./sdk/s3.js'));

/** The default client, in the function's own region, made on first use. */
export const defaultS3Client = onFirstUse(async () => new (await s3()).S3Client({}));

export class S3BundleObjects implements BundleObjects {
  constructor(
    private readonly client: ClientSource<S3Client>,
    private readonly bucket: string,
  ) {}

  async put(key: string, bytes: Uint8Array): Promise<{ versionId: string }> {
    const [client, { PutObjectCommand }] = await Promise.all([clientOf(this.client), s3()]);
    const { VersionId } = await client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: 'application/gzip' }),
    );
    // Without versions a later push would change what the table's pointer names.
    if (VersionId === undefined || VersionId === 'null') {
      throw new UnversionedBucketError(`The bucket ${this.bucket} does not keep object versions; turn versioning on.`);
    }
    return { versionId: VersionId };
  }

  async get(key: string, versionId: string): Promise<Uint8Array> {
    const [client, { GetObjectCommand }] = await Promise.all([clientOf(this.client), s3()]);
    const { Body } = await client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, VersionId: versionId }));
    if (Body === undefined) throw new Error(`S3 returned no body for ${key}.`);
    return Body.transformToByteArray();
  }
}

class UnversionedBucketError extends Error {
  override readonly name = 'UnversionedBucketError';
}
