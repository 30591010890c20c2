// The cloud assembly `cdk synth` makes of the real app (infra/app.ts with cdk.json's context, the
// default deployment: Cognito pools, no gRPC), functions bundled by esbuild as for `cdk deploy`.
// Synthesis takes about a minute on a busy machine, so the assembly is kept under the system's
// temporary folder, keyed by a hash of everything that goes into it (infra/, functions/, shared/,
// the lock file and cdk.json): every harness test file, and every run until a source changes,
// reads the same one. Two files synthesizing at once each write their own folder and the first
// rename wins. Assemblies of other sources (another checkout's, an older one) are removed once
// unused for a day, so checkouts side by side do not throw each other's away.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import * as z from 'zod';
import { projectPath } from '../../infra/paths.js';

export type Json = Record<string, unknown>;
/** Whether a template value is an object (not a list). */
export const isJson = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const Resource = z.object({ Type: z.string(), Properties: z.record(z.string(), z.unknown()).default({}) });
export type Resource = z.infer<typeof Resource>;
export const Template = z.object({ Resources: z.record(z.string(), Resource) }).loose();
export type Template = z.infer<typeof Template>;

const AssetsManifest = z.object({
  files: z.record(
    z.string(),
    z.object({
      source: z.object({ path: z.string(), packaging: z.string().optional() }),
      destinations: z.record(z.string(), z.object({ objectKey: z.string() })),
    }),
  ),
});

export interface Assembly {
  /** The cloud assembly's folder. */
  readonly directory: string;
  readonly stackName: string;
  readonly template: Template;
  /** The staged folder (or file) of an asset, by the S3 object key the template names. */
  assetPath(objectKey: string): string;
  /** How long synthesis took, when this call made the assembly; null when it was already there. */
  readonly synthMs: number | null;
}

export const stackName = 'ApprovalGateway';
const sourceRoots = ['infra', 'functions', 'shared'];
const sourceFiles = ['package-lock.json', 'cdk.json', 'tsconfig.json'];

const filesUnder = async (folder: string): Promise<string[]> => {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
};

/** A hash of every file synthesis reads from this project. */
export const sourceHash = async (): Promise<string> => {
  const files = [
    ...(await Promise.all(sourceRoots.map((root) => filesUnder(projectPath(root))))).flat(),
    ...sourceFiles.map((file) => projectPath(file)),
  ].sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(relative(projectPath(), file)).update('\0');
    hash.update(await readFile(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 24);
};

/** Runs infra/app.ts as the CDK CLI would (cdk.json's context, an output folder), with bundling. */
const synthesizeInto = async (outdir: string): Promise<void> => {
  const cdkJson = z.object({ context: z.record(z.string(), z.unknown()) }).loose();
  const { context } = cdkJson.parse(JSON.parse(await readFile(projectPath('cdk.json'), 'utf8')));
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('infra', 'app.ts')], {
    cwd: projectPath(),
    env: { ...process.env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify(context) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`cdk synth (infra/app.ts) failed with exit code ${code}:\n${stderr.slice(-4000)}`);
};

const cacheRoot = join(tmpdir(), 'approval-gateway-assemblies');
const dayMs = 24 * 3_600_000;

/** The synthesized assembly of the current sources: made once, then read from its cache folder. */
export const deployedAssembly = async (): Promise<Assembly> => {
  const key = await sourceHash();
  const directory = join(cacheRoot, key);
  let synthMs: number | null = null;
  const manifest = await readFile(join(directory, 'manifest.json'), 'utf8').catch(() => null);
  if (manifest === null) {
    await mkdir(cacheRoot, { recursive: true });
    const staging = join(cacheRoot, `${key}.staging-${randomBytes(4).toString('hex')}`);
    const started = performance.now();
    await synthesizeInto(staging);
    synthMs = Math.round(performance.now() - started);
    await writeFile(join(staging, 'harness-synth-ms'), String(synthMs));
    await rename(staging, directory).catch(() => rm(staging, { recursive: true, force: true }));
    for (const name of await readdir(cacheRoot)) {
      const used = await stat(join(cacheRoot, name, 'manifest.json')).catch(() => null);
      if (name !== key && !name.includes('.staging-') && (used === null || used.mtimeMs < Date.now() - dayMs))
        await rm(join(cacheRoot, name), { recursive: true, force: true });
    }
  }
  // Marks the assembly used now (see above).
  await utimes(join(directory, 'manifest.json'), new Date(), new Date());
  return readAssembly(directory, synthMs);
};

/** Reads an assembly folder (the cached one, or a copy a test changed). */
export const readAssembly = async (directory: string, synthMs: number | null = null): Promise<Assembly> => {
  const template = Template.parse(JSON.parse(await readFile(join(directory, `${stackName}.template.json`), 'utf8')));
  const assets = AssetsManifest.parse(JSON.parse(await readFile(join(directory, `${stackName}.assets.json`), 'utf8')));
  const byObjectKey = new Map<string, string>();
  for (const file of Object.values(assets.files)) {
    for (const destination of Object.values(file.destinations))
      byObjectKey.set(destination.objectKey, file.source.path);
  }
  return {
    directory,
    stackName,
    template,
    synthMs,
    assetPath: (objectKey) => {
      const path = byObjectKey.get(objectKey);
      if (path === undefined) throw new Error(`The assembly has no asset staged for the S3 object key ${objectKey}.`);
      return join(directory, path);
    },
  };
};
