// The AWS side of the control plane against the local stand-ins (DynamoDB, S3, KMS): config:push
// uploads the bundle, signs it and writes the table's pointer with a conditional write; a function
// instance reads the pointer each refresh, fetches and checks the bundle only when it changes,
// and applies the staleness rule. A bundle whose hash or signature does not match is refused.
//
// Long: the stores' whole life (conditional pushes, refreshes, staleness, refused bundles) against
// stand-ins that every test shares.
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbBundlePointers } from '../../shared/adapters/dynamodb/config-store.js';
import { KmsBundleSignatures } from '../../shared/adapters/kms-bundle-signatures.js';
import { S3BundleObjects } from '../../shared/adapters/s3-bundle-objects.js';
import {
  type BundlePointer,
  type ConfigBundle,
  type ConfigBundleStore,
  encodeBundleObject,
} from '../../shared/control-plane/bundle.js';
import { SignedBundleStore } from '../../shared/control-plane/signed-bundles.js';
import { StoredControlPlane } from '../../shared/control-plane/stored-control-plane.js';
import { type BundleStands, type DeployedStores, freshStores, startBundleStands } from '../support/bundle-stores.js';
import { ManualClock } from '../support/clock.js';
import { type CompiledBundle, compiledBundleOf, withCompiled } from '../support/compiled-bundles.js';
import { verifies } from '../support/requirements.js';
import { adminOnlyConfig } from '../support/snapshots.js';

let stands: BundleStands;
const freshStore = (): Promise<DeployedStores> => freshStores(stands);

const bundleOf = (text: string): Promise<CompiledBundle> => compiledBundleOf(text);

/** The real store, counting how often functions read its pointer and its objects. */
class CountingStore implements ConfigBundleStore {
  reads = 0;
  loads = 0;
  failing = false;
  constructor(private readonly inner: ConfigBundleStore) {}
  deployed() {
    this.reads += 1;
    if (this.failing) return Promise.reject(new Error('table unreachable'));
    return this.inner.deployed();
  }
  load(pointer: BundlePointer) {
    this.loads += 1;
    return this.inner.load(pointer);
  }
  push(bundle: ConfigBundle, expected: string | null) {
    return this.inner.push(bundle, expected);
  }
}

const warnings: string[] = [];
/** What each warning said besides its message (the version, the problems). */
const warningFields: unknown[] = [];
const log = {
  info: () => undefined,
  warn: (message: string, fields?: unknown) => {
    warnings.push(message);
    warningFields.push(fields);
  },
};

/** The pointer the table holds now. */
const pointerOf = async (store: ConfigBundleStore): Promise<BundlePointer> => {
  const deployed = await store.deployed();
  if (deployed?.kind !== 'signed') throw new Error('expected a signed pointer');
  return deployed.pointer;
};

const toolNames = (state: Awaited<ReturnType<StoredControlPlane['current']>>) =>
  state.kind === 'active' ? state.snapshot.catalog.tools.map((tool) => tool.name) : state;

beforeAll(async () => {
  stands = await startBundleStands();
});
afterAll(async () => {
  await stands.close();
});

describe('the configuration bundle in the bucket, named by the table', () => {
  it(
    verifies('control.stored-configuration', 'is pushed with a conditional write, so a stale push is refused'),
    async () => {
      const { store } = await freshStore();
      const first = await bundleOf(adminOnlyConfig());
      const second = await bundleOf(adminOnlyConfig({ extraTool: true }));
      expect(await store.push(first, null)).toMatchObject({ kind: 'pushed' });
      expect(await store.push(first, null)).toEqual({ kind: 'unchanged' });
      // A push that still believes nothing is deployed loses against the first one.
      expect(await store.push(second, null)).toEqual({ kind: 'conflict', current: first.version });
      expect(await store.push(second, 'some-older-version')).toEqual({ kind: 'conflict', current: first.version });
      expect(await store.push(second, first.version)).toMatchObject({ kind: 'pushed' });
      const loaded = await store.load(await pointerOf(store));
      expect(loaded).toEqual({ ok: true, bundle: second });
    },
  );

  it(
    verifies(
      ['control.stored-configuration', 'aws.config-bundles'],
      'reads the pointer once per refresh interval, and fetches the bundle only when its version changes',
    ),
    async () => {
      const { store, bucket } = await freshStore();
      const counting = new CountingStore(store);
      const clock = new ManualClock();
      const plane = new StoredControlPlane(counting, {}, clock, log, 30_000);
      expect(await plane.current()).toMatchObject({ kind: 'unavailable', reason: 'not_loaded' });

      await store.push(await bundleOf(adminOnlyConfig()), null);
      clock.advance(30_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add']);
      const reads = counting.reads;
      clock.advance(10_000);
      await plane.current();
      await plane.current();
      expect(counting.reads).toBe(reads);
      // The same version, read again: the pointer only.
      clock.advance(20_000);
      await plane.current();
      expect([counting.reads, counting.loads]).toEqual([reads + 1, 1]);
      const gets = () =>
        stands.s3Requests.filter((call) => call.action === 'GetObject' && call.resource.startsWith(`${bucket}/`));
      expect(gets()).toHaveLength(1);

      await store.push(await bundleOf(adminOnlyConfig({ extraTool: true })), (await pointerOf(store)).version);
      clock.advance(30_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add', 'crm.notes.list']);
      expect([counting.reads, counting.loads, gets().length]).toEqual([reads + 2, 2, 2]);
    },
  );

  it(
    verifies(
      ['control.staleness', 'control.stored-configuration'],
      'keeps the last good configuration only until it is stale',
    ),
    async () => {
      const { store } = await freshStore();
      const counting = new CountingStore(store);
      const clock = new ManualClock();
      const plane = new StoredControlPlane(counting, {}, clock, log, 30_000);
      await store.push(await bundleOf(adminOnlyConfig({ staleness: '90s' })), null);
      expect((await plane.current()).kind).toBe('active');

      counting.failing = true;
      clock.advance(60_000);
      expect((await plane.current()).kind).toBe('active');
      expect(warnings.at(-1)).toContain('keeping the last good one');
      clock.advance(31_000);
      expect(await plane.current()).toMatchObject({ kind: 'unavailable', reason: 'stale' });

      counting.failing = false;
      clock.advance(30_000);
      expect((await plane.current()).kind).toBe('active');
    },
  );

  it(
    verifies('control.stored-configuration', 'refuses a broken bundle and keeps serving the last good one'),
    async () => {
      const { store } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      // What the functions read is the compiled snapshot: its configuration data is checked again there.
      const broken = withCompiled(good, (compiled) => ({
        ...compiled,
        version: 'broken-1',
        config: { ...compiled.config, settings: { approval_time: 'soon' } },
      }));
      await store.push({ ...broken, version: 'broken-1' }, good.version);
      clock.advance(1_000);
      const state = await plane.current();
      expect(state.kind === 'active' && state.snapshot.version).toBe(good.version);
      expect(warnings.at(-1)).toContain('not valid here');
    },
  );

  it(
    verifies(
      ['perf.compiled-snapshot', 'control.stored-configuration'],
      'refuses what an older config:push wrote into the table, saying to push again, and keeps the last good one',
    ),
    async () => {
      const { store, tableName } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      // An older config:push wrote the whole bundle into the item, unsigned.
      const older = await bundleOf(adminOnlyConfig({ extraTool: true }));
      await stands.dynamodb.documents.send(
        new PutCommand({ TableName: tableName, Item: { name: 'current', ...older, compiled: older.compiled } }),
      );
      expect(await store.deployed()).toEqual({ kind: 'unsigned', version: older.version });
      clock.advance(1_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add']);
      expect(warnings.at(-1)).toBe(
        'the pushed configuration was pushed by an older config:push, into the table without a signature; run `npm run config:push` again; keeping the last good one',
      );
      // Pushing again writes the same version as a signed pointer, and the functions take it.
      expect(await store.push(older, older.version)).toMatchObject({ kind: 'pushed' });
      expect(await store.push(older, older.version)).toEqual({ kind: 'unchanged' });
      clock.advance(1_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add', 'crm.notes.list']);
    },
  );

  it(
    verifies(
      'aws.config-bundle-signature',
      'refuses an object changed in the bucket (its hash), fetches it no more, and keeps the last good one',
    ),
    async () => {
      const { store, bucket } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      const next = await bundleOf(adminOnlyConfig({ extraTool: true }));
      await store.push(next, good.version);
      const pointer = await pointerOf(store);
      // Someone who may write the bucket puts their own code in the object the table names.
      const tampered = withCompiled(next, (compiled) => ({
        ...compiled,
        tools: compiled.tools.map((tool) => ({ ...tool, validator: `/* theirs */ ${tool.validator}` })),
      }));
      stands.s3.tamper(bucket, pointer.object_key, pointer.object_version, encodeBundleObject(tampered));
      clock.advance(1_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add']);
      expect(warnings.at(-1)).toBe(
        `the pushed configuration is refused: its object ${pointer.object_key} does not match the SHA-256 the table holds; keeping the last good one`,
      );
      const gets = stands.s3Requests.filter((call) => call.action === 'GetObject').length;
      clock.advance(1_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add']);
      expect(stands.s3Requests.filter((call) => call.action === 'GetObject').length).toBe(gets);
    },
  );

  it(
    verifies(
      'aws.config-bundle-signature',
      'refuses a pointer written to the table alone: its own object and hash, signed by another key or not at all',
    ),
    async () => {
      const { store, tableName, bucket } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      const goodPointer = await pointerOf(store);
      // Their own bundle, uploaded and named with its right hash; signed by a key that is not the
      // stack's (one they control), then with the genuine signature of the good bundle.
      const theirs = await bundleOf(adminOnlyConfig({ extraTool: true }));
      const otherKey = new SignedBundleStore(
        new DynamoDbBundlePointers(stands.dynamodb.documents, tableName),
        new S3BundleObjects(stands.s3Client, bucket),
        new KmsBundleSignatures(stands.kmsClient, stands.kms.createSigningKey()),
      );
      expect(await otherKey.push(theirs, good.version)).toMatchObject({ kind: 'pushed' });
      clock.advance(1_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add']);
      expect(warnings.at(-1)).toBe(
        'the pushed configuration is refused: its signature is not the signing key’s; keeping the last good one',
      );
      const theirPointer = await pointerOf(store);
      const before = warnings.length;
      await stands.dynamodb.documents.send(
        new PutCommand({
          TableName: tableName,
          Item: { name: 'current', ...theirPointer, signature: goodPointer.signature },
        }),
      );
      clock.advance(1_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add']);
      expect(warnings.slice(before)).toEqual([
        'the pushed configuration is refused: its signature is not the signing key’s; keeping the last good one',
      ]);
      // And a genuine push is taken.
      expect(
        await store.push(await bundleOf(adminOnlyConfig({ extraTool: true, staleness: '61s' })), theirs.version),
      ).toMatchObject({ kind: 'pushed' });
      clock.advance(1_000);
      expect(toolNames(await plane.current())).toEqual(['crm.notes.add', 'crm.notes.list']);
    },
  );

  it(
    verifies(
      ['perf.ahead-of-time-validators', 'control.stored-configuration'],
      'refuses a bundle whose validator code asks for an unknown module, and keeps the last good one',
    ),
    async () => {
      const { store } = await freshStore();
      const clock = new ManualClock();
      const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      expect((await plane.current()).kind).toBe('active');
      const next = await bundleOf(adminOnlyConfig({ extraTool: true }));
      const tampered = withCompiled(next, (compiled) => ({
        ...compiled,
        tools: compiled.tools.map((tool) => ({ ...tool, validator: `require("fs"); ${tool.validator}` })),
      }));
      await store.push(tampered, good.version);
      clock.advance(1_000);
      const state = await plane.current();
      expect(state.kind === 'active' && state.snapshot.version).toBe(good.version);
      expect(warnings.at(-1)).toContain('not valid here');
      expect(JSON.stringify(warningFields.at(-1))).toContain(
        'the validator of crm.notes.add is refused: its code asks for the module \\"fs\\"',
      );
    },
  );

  it(
    verifies(
      'perf.bundle-checked-while-fetched',
      'asks KMS to verify the signature before the object has arrived, and takes the object only if both hold',
    ),
    async () => {
      const { store, tableName, bucket, keyArn } = await freshStore();
      const good = await bundleOf(adminOnlyConfig());
      await store.push(good, null);
      // The real S3 and KMS adapters, watched: whether KMS was asked when the object's bytes arrived.
      const events: string[] = [];
      const objects = new S3BundleObjects(stands.s3Client, bucket);
      const signatures = new KmsBundleSignatures(stands.kmsClient, keyArn);
      const watched = new SignedBundleStore(
        new DynamoDbBundlePointers(stands.dynamodb.documents, tableName),
        {
          put: (key, bytes) => objects.put(key, bytes),
          get: async (key, version) => {
            const bytes = await objects.get(key, version);
            events.push('object arrived');
            return bytes;
          },
        },
        {
          sign: (message) => signatures.sign(message),
          verify: (message, signature) => {
            events.push('verify asked');
            return signatures.verify(message, signature);
          },
        },
      );
      expect(await watched.load(await pointerOf(store))).toEqual({ ok: true, bundle: good });
      expect(events).toEqual(['verify asked', 'object arrived']);
    },
  );

  it(verifies('control.stored-configuration', 'survives the table going away, then goes stale'), async () => {
    const { store, tableName } = await freshStore();
    const clock = new ManualClock();
    const plane = new StoredControlPlane(store, {}, clock, log, 1_000);
    await store.push(await bundleOf(adminOnlyConfig({ staleness: '5s' })), null);
    expect((await plane.current()).kind).toBe('active');
    await stands.dynamodb.client.send(new DeleteTableCommand({ TableName: tableName }));
    clock.advance(2_000);
    expect((await plane.current()).kind).toBe('active');
    clock.advance(4_000);
    expect(await plane.current()).toMatchObject({ kind: 'unavailable', reason: 'stale' });
  });
});
