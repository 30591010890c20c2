// The deployed configuration: the configuration text with every file it names, and the snapshot
// config:push compiled from them, as one bundle that `config:push` writes and the functions read
// (so AWS needs no file system). The bundle is an object in a bucket (size is no limit there);
// the configuration table holds a small signed pointer to it. The functions load the compiled
// snapshot only; the raw text stays for people and for config:check.
import { gunzipSync, gzipSync } from 'node:zlib';
import * as z from 'zod';
import { McpPins } from '../catalog/mcp-pins.js';
import { isJsonObject, type JsonObject } from '../catalog/tool.js';
import type { HumanStep } from '../policy/human-step.js';
import { formStyles } from '../wire/form-body.js';

/** A tool as discovered from an MCP server (ToolServerToolSpec), as the bundle carries it. */
const BundledToolSpec = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  access: z.enum(['read', 'write']).nullable(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  configPath: z.array(z.union([z.string(), z.number()])),
  source: z.string(),
});

/** An MCP server's catalog, discovered by `config:push` (the functions never discover). */
export const BundledMcpCatalog = z.object({
  url: z.string(),
  fetchedAt: z.number(),
  specs: z.array(BundledToolSpec),
  leftOut: z.array(z.object({ name: z.string(), reason: z.string() })),
  /** What the operator accepted of its tools (mcp-pins.ts); the next push holds changes against it. */
  pins: McpPins.optional(),
});
export type BundledMcpCatalog = z.infer<typeof BundledMcpCatalog>;

/** A JSON object kept as it was read (a schema's keys, whatever they are, are not copied). */
const JsonObjectValue = z.custom<JsonObject>(isJsonObject, 'expected a JSON object');

/** A catalog tool as data (CatalogTool), with the code of its arguments validator. */
const CompiledTool = z.object({
  name: z.string().min(1),
  systemKey: z.string().min(1),
  operationId: z.string(),
  title: z.string(),
  description: z.string(),
  inputSchema: JsonObjectValue,
  annotations: z.object({
    title: z.string().optional(),
    readOnlyHint: z.boolean(),
    destructiveHint: z.boolean(),
    idempotentHint: z.boolean(),
    openWorldHint: z.boolean(),
  }),
  access: z.enum(['read', 'write']),
  target: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('http'),
      method: z.string(),
      path: z.string(),
      fields: z
        .array(
          z.object({
            field: z.string(),
            in: z.enum(['path', 'query', 'header', 'body', 'whole-body', 'form']),
            name: z.string(),
            encoding: z.object({ style: z.enum(formStyles), explode: z.boolean() }).optional(),
          }),
        )
        .readonly(),
    }),
    z.object({ kind: z.literal('tool-server'), name: z.string() }),
  ]),
  responseSchema: JsonObjectValue.nullable(),
  /** ajv's standalone code (a CommonJS module) validating `validationSchema(inputSchema)`. */
  validator: z.string().min(1),
});
export type CompiledTool = z.infer<typeof CompiledTool>;

/**
 * The forms the functions read; a bundle compiled in another form is pushed again. Form 3 is a
 * bundle whose policies ask more of a staff approval than one approver (a quorum, an escalation, a
 * fresh or strong sign-in): a gateway that reads only form 2 would drop what it does not know and
 * let one approver run the call, so it refuses form 3 instead. Without those, a bundle is form 2,
 * which gateways before and after read alike.
 */
const compiledSnapshotFormats = [2, 3] as const;

/** The form a bundle with these policies is written in (see compiledSnapshotFormats). */
export const compiledSnapshotFormatOf = (
  policies: readonly Pick<HumanStep, 'quorum' | 'escalation' | 'reauth_ms' | 'acr'>[],
): 2 | 3 =>
  policies.some(
    (policy) => policy.quorum > 1 || policy.escalation !== null || policy.reauth_ms !== null || policy.acr !== null,
  )
    ? 3
    : 2;

const isReadableFormat = (format: unknown): boolean => compiledSnapshotFormats.some((known) => known === format);

/** Everything a snapshot is made of, read and built by config:push, nothing left to parse. */
export const CompiledSnapshot = z.object({
  format: z.union([z.literal(2), z.literal(3)]),
  /** The snapshot's content version, the bundle's own. */
  version: z.string().min(1),
  /** The configuration file's content as data, `${env:NAME}` references as written. */
  config: JsonObjectValue,
  /** The line of each `${env:NAME}` reference in the file, by its path (`agents[0].token`), for messages. */
  reference_lines: z.record(z.string(), z.number().int().positive()),
  tools: z.array(CompiledTool),
  /** Turned-off tools: policies may name them, nobody is offered them. */
  disabled: z.array(CompiledTool),
  /** The policy files' texts, in the configuration's order. */
  policies: z.array(z.object({ path: z.string(), text: z.string() })),
  /** The same policies as config:push parsed and validated them against this catalog, by Cedar id. */
  policy_set: z.object({
    texts: z.record(z.string(), z.string()),
    policies: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        file: z.string(),
        line: z.number().int(),
        effect: z.enum(['permit', 'forbid']),
        approvals: z.array(z.enum(['staff', 'customer'])),
        approvers: z.string().nullable(),
        // Bundles pushed before these annotations hold none of them.
        quorum: z.number().int().min(1).default(1),
        escalation: z.object({ after_ms: z.number().int().positive(), group: z.string() }).nullable().default(null),
        reauth_ms: z.number().int().positive().nullable().default(null),
        acr: z.array(z.string()).readonly().nullable().default(null),
      }),
    ),
    argumentsRead: z.union([z.literal('all'), z.array(z.string())]),
  }),
  /**
   * Cedar's answers for every call of a listed agent to a tool whose calls all get the same one
   * (known-decisions.ts), and the Cedar release that gave them; absent from older bundles.
   */
  known_decisions: z
    .object({
      cedar: z.string(),
      agents: z
        .array(
          z.object({
            id: z.string(),
            groups: z.array(z.string()).readonly(),
            customer: z.string().nullable(),
            answers: z.record(
              z.string(),
              z.object({ decision: z.enum(['allow', 'deny']), reason: z.array(z.string()).readonly() }),
            ),
          }),
        )
        .readonly(),
    })
    .optional(),
  warnings: z.array(z.object({ file: z.string(), path: z.string(), line: z.number().nullable(), message: z.string() })),
});
export type CompiledSnapshot = z.infer<typeof CompiledSnapshot>;

/** The compiled snapshot as the table stores it: gzip of its JSON, as the plain bytes the table gives back. */
export const encodeCompiledSnapshot = (compiled: CompiledSnapshot) =>
  new Uint8Array(gzipSync(JSON.stringify(compiled)));

/** The most a compiled snapshot may unpack to (GitHub's description, 1,221 tools, makes 19 MB); more is a gzip bomb. */
export const maxCompiledSnapshotBytes = 64 * 1024 * 1024;

export type CompiledSnapshotRead = { ok: true; compiled: CompiledSnapshot } | { ok: false; reason: string };

export const decodeCompiledSnapshot = (bytes: Uint8Array): CompiledSnapshotRead => {
  let data: unknown;
  try {
    data = JSON.parse(gunzipSync(bytes, { maxOutputLength: maxCompiledSnapshotBytes }).toString('utf8'));
  } catch {
    return { ok: false, reason: 'its compiled snapshot cannot be read' };
  }
  if (isJsonObject(data) && !isReadableFormat(data.format)) {
    return {
      ok: false,
      reason: `its compiled snapshot is in form ${JSON.stringify(data.format)}, and this gateway reads forms ${compiledSnapshotFormats.join(' and ')}`,
    };
  }
  // Parsed once per configuration: zod's compiled fast path would cost more to build than it saves.
  const parsed = CompiledSnapshot.safeParse(data, { jitless: true });
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    return {
      ok: false,
      reason: `its compiled snapshot is not well formed (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''})`,
    };
  }
  return { ok: true, compiled: parsed.data };
};

export const ConfigBundle = z.object({
  /** Content version of the snapshot the bundle builds (see loadSnapshot). */
  version: z.string().min(1),
  /** The configuration file's name, for messages. */
  config_file: z.string().min(1),
  config_text: z.string(),
  /** Files the configuration names, by their path relative to it. */
  files: z.record(z.string(), z.string()),
  pushed_at: z.iso.datetime(),
  /** The tools each MCP system's server offered at push time, by system key (part of the version). */
  mcp_catalogs: z.record(z.string(), BundledMcpCatalog).optional(),
  /** The compiled snapshot (encodeCompiledSnapshot: gzip of its JSON), what the functions load. */
  compiled: z.instanceof(Uint8Array),
});
export type ConfigBundle = z.infer<typeof ConfigBundle>;

/**
 * The bundle as its object holds it: the compiled snapshot's bytes in base64, the whole gzipped.
 * The base64 is not checked by pattern (over megabytes that takes a second): the object is taken
 * only once its hash and signature match, and a damaged snapshot fails to unpack.
 */
const BundleObject = ConfigBundle.extend({ compiled: z.string() });

export const encodeBundleObject = (bundle: ConfigBundle): Uint8Array =>
  new Uint8Array(gzipSync(JSON.stringify({ ...bundle, compiled: Buffer.from(bundle.compiled).toString('base64') })));

/** The most a bundle object may unpack to (GitHub's description makes 16 MB: its 13 MB text, the snapshot gzipped). */
const maxBundleObjectBytes = 128 * 1024 * 1024;

export type BundleRead = { ok: true; bundle: ConfigBundle } | { ok: false; reason: string };

export const decodeBundleObject = (bytes: Uint8Array): BundleRead => {
  let data: unknown;
  try {
    data = JSON.parse(gunzipSync(bytes, { maxOutputLength: maxBundleObjectBytes }).toString('utf8'));
  } catch {
    return { ok: false, reason: 'its object cannot be read' };
  }
  // Read once per configuration: zod's compiled fast path would cost more to build than it saves.
  const parsed = BundleObject.safeParse(data, { jitless: true });
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    return {
      ok: false,
      reason: `its object is not well formed (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''})`,
    };
  }
  return {
    ok: true,
    bundle: { ...parsed.data, compiled: new Uint8Array(Buffer.from(parsed.data.compiled, 'base64')) },
  };
};

/**
 * What the configuration table holds: the deployed version and where its bundle is (an object
 * version in the bundles bucket), the SHA-256 of that object and the signing key's signature
 * over it (bundleSignedMessage), so a write to the table alone cannot make the functions run code.
 */
export const BundlePointer = z.object({
  version: z.string().min(1),
  object_key: z.string().min(1),
  object_version: z.string().min(1),
  /** SHA-256 of the object's bytes, in hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The signing key's signature over bundleSignedMessage(version, sha256), in base64. */
  signature: z.base64().min(1),
  pushed_at: z.iso.datetime(),
});
export type BundlePointer = z.infer<typeof BundlePointer>;

/** What is signed: the bundle's version and its object's hash, named for this use only. */
export const bundleSignedMessage = (pointer: Pick<BundlePointer, 'version' | 'sha256'>): Uint8Array =>
  new TextEncoder().encode(
    `approval-gateway configuration bundle\nversion ${pointer.version}\nsha256 ${pointer.sha256}\n`,
  );

/** What the table says is deployed: a signed pointer, or an item an older config:push wrote (the whole bundle, unsigned). */
export type DeployedBundle = { kind: 'signed'; pointer: BundlePointer } | { kind: 'unsigned'; version: string };

export const versionOf = (deployed: DeployedBundle): string =>
  deployed.kind === 'signed' ? deployed.pointer.version : deployed.version;

/** The configuration table's item naming the deployed bundle. */
export interface BundlePointerTable {
  read(): Promise<DeployedBundle | undefined>;
  /** Writes the pointer only if the deployed version is still `expectedVersion` (null: none yet); false if not. */
  write(pointer: BundlePointer, expectedVersion: string | null): Promise<boolean>;
}

/** The bucket of bundle objects, each push a new object version. */
export interface BundleObjects {
  put(key: string, bytes: Uint8Array): Promise<{ readonly versionId: string }>;
  get(key: string, versionId: string): Promise<Uint8Array>;
}

/** The signing key: config:push signs, the functions verify. */
export interface BundleSignatures {
  sign(message: Uint8Array): Promise<Uint8Array>;
  /** Whether the signature is the key's over the message. */
  verify(message: Uint8Array, signature: Uint8Array): Promise<boolean>;
}

export type PushResult =
  | { kind: 'pushed'; objectBytes: number }
  | { kind: 'unchanged' }
  | { kind: 'conflict'; current: string | null };

/** The deployed bundle: config:push pushes it, the functions read the pointer and load what it names. */
export interface ConfigBundleStore {
  deployed(): Promise<DeployedBundle | undefined>;
  /** The bundle the pointer names, refused unless its object matches the hash and the signature. */
  load(pointer: BundlePointer): Promise<BundleRead>;
  /**
   * Replaces the deployed bundle, only if the deployed version is still `expectedVersion` (null:
   * none yet). The same version is left as it is, unless `replaceSameVersion` (its MCP pins changed).
   */
  push(
    bundle: ConfigBundle,
    expectedVersion: string | null,
    options?: { readonly replaceSameVersion?: boolean },
  ): Promise<PushResult>;
}
