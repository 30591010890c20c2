// The Lambda functions as deployed: each handler bundled with the esbuild options the stack's
// GatewayFunction gives NodejsFunction (ESM, node24, minified, external source map without
// sources, @aws-sdk/* left to the Lambda runtime, the require/__dirname banner), into a folder
// outside the project whose node_modules link resolves @aws-sdk/* as the runtime's copy would.
// Size is the bundle file alone (the source map and Cedar's wasm are shipped beside it). Import
// time is a fresh `node` process importing the bundle, with the function's environment
// (NODE_OPTIONS=--enable-source-maps as the stack sets it), minus a bare node start, both run
// interleaved.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { projectPath } from '../infra/paths.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { kilobytes, median, ms } from './stats.js';

const lambdaFunctions = [
  'mcp',
  'held-call-steps',
  'console',
  'reconciler',
  'resource-metadata',
  'call-tool-socket',
  'call-tool-authorizer',
] as const;
export type LambdaFunction = (typeof lambdaFunctions)[number];

const cedarWasm = projectPath('node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm_bg.wasm');

/** The banner GatewayFunction prepends: CommonJS dependencies inside an ESM bundle. */
const banner = [
  "import { createRequire as __gatewayCreateRequire } from 'node:module';",
  "import { fileURLToPath as __gatewayFileUrl } from 'node:url';",
  "import { dirname as __gatewayDirname } from 'node:path';",
  'const require = __gatewayCreateRequire(import.meta.url);',
  'const __dirname = __gatewayDirname(__gatewayFileUrl(import.meta.url));',
].join(' ');

export interface Bundle {
  readonly name: LambdaFunction;
  readonly file: string;
  readonly bytes: number;
  readonly withCedar: boolean;
  /** The packages (or project folders) that take the most room in the bundle, largest first. */
  readonly largest: readonly { readonly part: string; readonly bytes: number }[];
}

/** Bytes in the bundle per npm package (or per project folder), largest first. */
const largestParts = (metafile: Metafile): { part: string; bytes: number }[] => {
  const parts = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [path, input] of Object.entries(output.inputs)) {
      const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
      const part = inPackage ?? path.split('/').slice(0, 2).join('/');
      parts.set(part, (parts.get(part) ?? 0) + input.bytesInOutput);
    }
  }
  return [...parts]
    .map(([part, bytes]) => ({ part, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 4);
};

export interface ImportTiming {
  readonly name: LambdaFunction;
  /** Median wall time of a fresh process importing the bundle, minus a bare process's (as deployed). */
  readonly importMs: number;
  /** The same without --enable-source-maps; null when not measured. */
  readonly importWithoutSourceMapsMs: number | null;
  /** Median time of the import() itself, measured inside the process (as deployed). */
  readonly inProcessMs: number;
}

export interface ImportTimings {
  /** Median wall time of a bare node process (start, empty module, exit). */
  readonly baselineMs: number;
  readonly timings: readonly ImportTiming[];
}

export interface BundleWorkspace {
  readonly bundles: readonly Bundle[];
  readonly cedarWasmBytes: number;
  timeImports(options: { runs: number; withoutSourceMaps: boolean }): Promise<ImportTimings>;
  remove(): Promise<void>;
}

const bundleOne = async (root: string, name: LambdaFunction): Promise<Bundle> => {
  const folder = join(root, name);
  await mkdir(folder);
  const file = join(folder, 'index.mjs');
  const result = await build({
    entryPoints: [projectPath('functions', `${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    outfile: file,
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    external: ['@aws-sdk/*'],
    mainFields: ['module', 'main'],
    banner: { js: banner },
    logLevel: 'silent',
    metafile: true,
  });
  // GatewayFunction ships the wasm beside the functions that evaluate Cedar.
  const withCedar = (await readFile(file, 'utf8')).includes('cedar_wasm_bg.wasm');
  if (withCedar) await copyFile(cedarWasm, join(folder, 'cedar_wasm_bg.wasm'));
  return { name, file, bytes: (await stat(file)).size, withCedar, largest: largestParts(result.metafile) };
};

export const bundleFunctions = async (): Promise<BundleWorkspace> => {
  const root = await mkdtemp(join(tmpdir(), 'gateway-bench-bundles-'));
  try {
    await symlink(projectPath('node_modules'), join(root, 'node_modules'), 'dir');
    const bundles = await Promise.all(lambdaFunctions.map((name) => bundleOne(root, name)));
    return {
      bundles,
      cedarWasmBytes: (await stat(cedarWasm)).size,
      timeImports: (options) => timeImports(bundles, options),
      remove: () => rm(root, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
};

/** Imports the module named by argv[1] (none: a bare start) and prints how long import() took. */
const probe =
  'const started = performance.now(); if (process.argv[1]) await import(process.argv[1]); ' +
  'process.stdout.write(String(performance.now() - started));';

/** What a deployed function's process sees: region, table names, and the stack's NODE_OPTIONS. */
const functionEnvironment = (sourceMaps: boolean): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  AWS_REGION: 'eu-west-1',
  EXECUTIONS_TABLE: 'executions',
  CONFIG_TABLE: 'config',
  DATA_KEY_ID: 'alias/approval-gateway',
  POWERTOOLS_LOG_LEVEL: 'INFO',
  NODE_OPTIONS: sourceMaps ? '--enable-source-maps' : '',
});

interface ProbeRun {
  readonly wallMs: number;
  readonly inProcessMs: number;
}

const runProbe = (moduleUrl: string, sourceMaps: boolean): Promise<ProbeRun> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', probe, moduleUrl], {
      env: functionEnvironment(sourceMaps),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) reject(new Error(`importing ${moduleUrl || 'nothing'} failed (${code}): ${err.slice(0, 500)}`));
      else resolve({ wallMs, inProcessMs: Number(out) });
    });
  });

interface Samples {
  readonly deployed: number[];
  readonly inProcess: number[];
  readonly withoutSourceMaps: number[];
}

const timeImports = async (
  bundles: readonly Bundle[],
  options: { runs: number; withoutSourceMaps: boolean },
): Promise<ImportTimings> => {
  const baseline: number[] = [];
  const samples = new Map<LambdaFunction, Samples>(
    bundles.map((bundle) => [bundle.name, { deployed: [], inProcess: [], withoutSourceMaps: [] }]),
  );
  // Interleaved: each run starts a bare process, then each bundle (as deployed, then optionally
  // without source maps), so a busy moment of the machine weighs on all of them alike.
  for (let run = 0; run < options.runs; run += 1) {
    baseline.push((await runProbe('', true)).wallMs);
    for (const bundle of bundles) {
      const url = pathToFileURL(bundle.file).href;
      const entry = samples.get(bundle.name);
      if (entry === undefined) continue;
      const deployed = await runProbe(url, true);
      entry.deployed.push(deployed.wallMs);
      entry.inProcess.push(deployed.inProcessMs);
      if (options.withoutSourceMaps) entry.withoutSourceMaps.push((await runProbe(url, false)).wallMs);
    }
  }
  const baselineMs = median(baseline);
  return {
    baselineMs,
    timings: bundles.map((bundle) => {
      const entry = samples.get(bundle.name) ?? { deployed: [], inProcess: [], withoutSourceMaps: [] };
      return {
        name: bundle.name,
        importMs: median(entry.deployed) - baselineMs,
        importWithoutSourceMapsMs: options.withoutSourceMaps ? median(entry.withoutSourceMaps) - baselineMs : null,
        inProcessMs: median(entry.inProcess),
      };
    }),
  };
};

export const lambdaBundles = async (plan: Plan): Promise<Row[]> => {
  heading('Lambda bundles (esbuild as the stack configures NodejsFunction) and their import time');
  const workspace = await bundleFunctions();
  let imports: ImportTimings;
  try {
    imports = await workspace.timeImports({ runs: plan.importRuns, withoutSourceMaps: plan.importWithoutSourceMaps });
  } finally {
    await workspace.remove();
  }
  const importOf = (name: LambdaFunction) => imports.timings.find((timing) => timing.name === name);
  table([
    ['function', 'bundle', 'import', 'no source maps', 'import() alone', 'largest parts'],
    ...workspace.bundles.map((bundle) => {
      const timing = importOf(bundle.name);
      const withoutSourceMaps = timing?.importWithoutSourceMapsMs ?? null;
      return [
        `${bundle.name}.ts${bundle.withCedar ? ' *' : ''}`,
        kilobytes(bundle.bytes),
        ms(timing?.importMs ?? Number.NaN, 0),
        withoutSourceMaps === null ? '-' : ms(withoutSourceMaps, 0),
        ms(timing?.inProcessMs ?? Number.NaN, 0),
        bundle.largest.map((part) => `${part.part} ${kilobytes(part.bytes)}`).join(', '),
      ];
    }),
  ]);
  line(
    `import: a fresh node process with the function's environment (NODE_OPTIONS=--enable-source-maps), median of ` +
      `${plan.importRuns}, minus a bare node start (${ms(imports.baselineMs, 0)})`,
  );
  line(`* loads Cedar's wasm (${kilobytes(workspace.cedarWasmBytes)}, not counted) from its own folder when imported`);
  return workspace.bundles.flatMap((bundle): Row[] => {
    const importMs = importOf(bundle.name)?.importMs ?? Number.NaN;
    return [
      {
        what: `Lambda bundle ${bundle.name}.ts (minified, without the wasm)`,
        measured: kilobytes(bundle.bytes),
        target: '≤ 650 KB',
        mark: within(bundle.bytes <= 650 * 1024),
      },
      {
        what: '  import in a fresh process',
        measured: ms(importMs, 0),
        target: '≤ 100 ms',
        mark: within(importMs <= 100),
      },
    ];
  });
};
