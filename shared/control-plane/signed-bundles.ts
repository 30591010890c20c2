// The deployed bundle kept as AWS keeps it: an object per push in a versioned bucket, and a small
// pointer in the configuration table naming that object version, its SHA-256 and the signing
// key's signature. config:push uploads, signs, then writes the pointer conditionally (two pushes
// cannot silently overwrite each other). A function loads an object only when the pointer's
// version changes, and takes it only if its bytes match the hash and the signature is the key's:
// whoever may write the table but not sign cannot make the functions load their code.
import { createHash } from 'node:crypto';
import {
  type BundleObjects,
  type BundlePointer,
  type BundlePointerTable,
  type BundleRead,
  type BundleSignatures,
  bundleSignedMessage,
  type ConfigBundle,
  type ConfigBundleStore,
  type DeployedBundle,
  decodeBundleObject,
  encodeBundleObject,
  type PushResult,
  versionOf,
} from './bundle.js';

/** Where a version's object lives in the bucket (the functions may read this prefix only). */
export const bundleObjectPrefix = 'bundles/';
const objectKeyOf = (version: string) => `${bundleObjectPrefix}${version}.json.gz`;

export class SignedBundleStore implements ConfigBundleStore {
  constructor(
    private readonly pointers: BundlePointerTable,
    private readonly objects: BundleObjects,
    private readonly signatures: BundleSignatures,
    private readonly now: () => Date = () => new Date(),
  ) {}

  deployed(): Promise<DeployedBundle | undefined> {
    return this.pointers.read();
  }

  async load(pointer: BundlePointer): Promise<BundleRead> {
    // The key signs the pointer's version and hash, not the object: the signature is checked while
    // the object is fetched (a fresh function's first call waits one round trip, not two), and
    // the object is taken only if both hold, its hash first.
    const [bytes, signed] = await Promise.all([
      this.objects.get(pointer.object_key, pointer.object_version),
      this.signatures.verify(bundleSignedMessage(pointer), Buffer.from(pointer.signature, 'base64')),
    ]);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (sha256 !== pointer.sha256) {
      return { ok: false, reason: `its object ${pointer.object_key} does not match the SHA-256 the table holds` };
    }
    if (!signed) return { ok: false, reason: 'its signature is not the signing key’s' };
    // Decoded only once it is known to be what config:push signed.
    const read = decodeBundleObject(bytes);
    if (read.ok && read.bundle.version !== pointer.version) {
      return { ok: false, reason: `its object holds version ${read.bundle.version}, not ${pointer.version}` };
    }
    return read;
  }

  async push(
    bundle: ConfigBundle,
    expectedVersion: string | null,
    options: { readonly replaceSameVersion?: boolean } = {},
  ): Promise<PushResult> {
    const deployed = await this.pointers.read();
    // A version an older config:push wrote whole into the table is pushed again, as a pointer.
    const same = deployed?.kind === 'signed' && deployed.pointer.version === bundle.version;
    if (same && options.replaceSameVersion !== true) return { kind: 'unchanged' };
    const bytes = encodeBundleObject(bundle);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const signature = await this.signatures.sign(bundleSignedMessage({ version: bundle.version, sha256 }));
    const key = objectKeyOf(bundle.version);
    const { versionId } = await this.objects.put(key, bytes);
    const pointer: BundlePointer = {
      version: bundle.version,
      object_key: key,
      object_version: versionId,
      sha256,
      signature: Buffer.from(signature).toString('base64'),
      pushed_at: this.now().toISOString(),
    };
    if (await this.pointers.write(pointer, expectedVersion)) return { kind: 'pushed', objectBytes: bytes.length };
    // The object version uploaded stays in the bucket, named by nothing: harmless, and kept like the others.
    const current = await this.pointers.read();
    return { kind: 'conflict', current: current === undefined ? null : versionOf(current) };
  }
}
