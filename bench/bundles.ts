// The Lambda functions as deployed: each handler bundled by the stack's own bundler
// (infra/bundling) into a folder outside the project whose node_modules link resolves @aws-sdk/*
// as the runtime's copy would. Sizes are code only (source maps and Cedar's wasm ship beside it):
// what loads at cold start, and all that ships. Import time is a fresh `node` process importing
// the handler module, with the function's environment (NODE_OPTIONS=--enable-source-maps as the
// stack sets it), minus a bare node start. Each function is judged against the floor every one
// stands on, the cold-start floor (cold-start-floor.ts: the runtime's DynamoDB clients and
// Powertools Logger and Metrics, made as the functions make them), bundled the same way and timed
// the same way: a round starts the bare process, the floor and every function once each, in an
// order rotated from round to round. Each run leaves every function's esbuild metafile under
// .bench/metafiles/.
// Long: bundling, timing and the report share one record per function; split, each part would
// pass the others the same three shapes.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { bundleBudget } from '../infra/bundling/budgets.js';
import {
  bundleFunction,
  cedarWasm,
  coldStartInputs,
  coldStartParts,
  type FunctionBundle,
  writeMetafile,
} from '../infra/bundling/bundle-function.js';
import { projectPath } from '../infra/paths.js';
import { floorRow, overFloorRow } from './floor-ratios.js';
import type { Plan } from './plan.js';
import { heading, line, type Row, table, within } from './report.js';
import { kilobytes, median, ms, ratio, rotated } from './stats.js';

const lambdaFunctions = [
  'mcp',
  'held-call-steps',
  'console',
  'reconciler',
  'resource-metadata',
  'call-tool-socket',
  'agent-authorizer',
] as const;
export type LambdaFunction = (typeof lambdaFunctions)[number];

/** The functions that evaluate Cedar policies (their bundles ship its wasm). */
const decides: ReadonlySet<LambdaFunction> = new Set(['mcp', 'held-call-steps', 'reconciler', 'call-tool-socket']);

/** Where each run leaves every function's esbuild metafile, so a bundle's growth can be traced to a module. */
export const metafileFolder = projectPath('.bench', 'metafiles');

export interface Bundle {
  readonly name: LambdaFunction;
  /** The handler module Lambda imports. */
  readonly file: string;
  /** Code loaded at cold start: the handler module and the chunks it imports statically. */
  readonly coldStartBytes: number;
  /** All code shipped, chunks loaded on demand included (without source maps and the wasm). */
  readonly shippedBytes: number;
  readonly withCedar: boolean;
  /** The packages (or project folders) that take the most room in its cold start, largest first. */
  readonly largest: readonly { readonly part: string; readonly bytes: number }[];
  /** Whether its cold start requires the runtime's DynamoDB client (the store clients' floor applies). */
  readonly requiresStoreClient: boolean;
}

/** Whether the cold start requires `pkg` from the Lambda runtime (bundle-function.ts leaves @aws-sdk/* out). */
const requiresAtColdStart = (bundle: FunctionBundle, pkg: string): boolean =>
  coldStartInputs(bundle).some(({ path }) => path.endsWith(`:${pkg}`));

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
  /** The cold-start floor's import (cold-start-floor.ts), timed like a bundle. */
  readonly floorMs: number;
  readonly timings: readonly ImportTiming[];
}

export interface BundleWorkspace {
  readonly bundles: readonly Bundle[];
  /** The cold-start floor's bundled module (see ImportTimings.floorMs). */
  readonly floor: string;
  readonly cedarWasmBytes: number;
  timeImports(options: { runs: number; withoutSourceMaps: boolean }): Promise<ImportTimings>;
  remove(): Promise<void>;
}

const bundleOne = async (root: string, name: LambdaFunction): Promise<Bundle> => {
  const bundle = await bundleFunction(name, join(root, name), { cedar: decides.has(name) });
  await mkdir(metafileFolder, { recursive: true });
  await writeMetafile(bundle, join(metafileFolder, `${name}.json`));
  return {
    name,
    file: bundle.entry,
    coldStartBytes: bundle.coldStartBytes,
    shippedBytes: bundle.shippedBytes,
    withCedar: bundle.withCedar,
    largest: coldStartParts(bundle).slice(0, 4),
    requiresStoreClient: requiresAtColdStart(bundle, '@aws-sdk/client-dynamodb'),
  };
};

export const bundleFunctions = async (): Promise<BundleWorkspace> => {
  const root = await mkdtemp(join(tmpdir(), 'gateway-bench-bundles-'));
  try {
    await symlink(projectPath('node_modules'), join(root, 'node_modules'), 'dir');
    const bundles = await Promise.all(lambdaFunctions.map((name) => bundleOne(root, name)));
    const floor = await bundleFunction('cold-start-floor', join(root, 'cold-start-floor'), {
      cedar: false,
      entry: projectPath('bench', 'cold-start-floor.ts'),
    });
    return {
      bundles,
      floor: floor.entry,
      cedarWasmBytes: (await stat(cedarWasm)).size,
      timeImports: (options) => timeImports(bundles, floor.entry, options),
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
  CONFIG_BUCKET: 'config-bundles',
  CONFIG_SIGNING_KEY_ID: 'arn:aws:kms:eu-west-1:111111111111:key/config-signing',
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

/** A module a round imports in fresh processes: the bare start (no module), the floor, each function. */
interface Probed {
  readonly name: 'bare start' | 'floor' | LambdaFunction;
  readonly url: string;
  readonly withoutSourceMaps: boolean;
}

const timeImports = async (
  bundles: readonly Bundle[],
  floor: string,
  options: { runs: number; withoutSourceMaps: boolean },
): Promise<ImportTimings> => {
  const probes: readonly Probed[] = [
    { name: 'bare start', url: '', withoutSourceMaps: false },
    { name: 'floor', url: pathToFileURL(floor).href, withoutSourceMaps: false },
    ...bundles.map((bundle) => ({
      name: bundle.name,
      url: pathToFileURL(bundle.file).href,
      withoutSourceMaps: options.withoutSourceMaps,
    })),
  ];
  const samples = new Map(probes.map((probe): [Probed['name'], Samples] => [probe.name, sampled()]));
  // Each round starts every process once, in an order rotated from round to round, so a busy
  // moment of the machine, or a place early or late in the round, weighs on all of them alike.
  for (let run = 0; run < options.runs; run += 1) {
    for (const probe of rotated(probes, run)) {
      const entry = samples.get(probe.name) ?? sampled();
      const deployed = await runProbe(probe.url, true);
      entry.deployed.push(deployed.wallMs);
      entry.inProcess.push(deployed.inProcessMs);
      if (probe.withoutSourceMaps) entry.withoutSourceMaps.push((await runProbe(probe.url, false)).wallMs);
    }
  }
  const baselineMs = median(samples.get('bare start')?.deployed ?? []);
  const net = (values: readonly number[] | undefined) => median(values ?? []) - baselineMs;
  return {
    baselineMs,
    floorMs: net(samples.get('floor')?.deployed),
    timings: bundles.map((bundle) => {
      const entry = samples.get(bundle.name);
      return {
        name: bundle.name,
        importMs: net(entry?.deployed),
        importWithoutSourceMapsMs: options.withoutSourceMaps ? net(entry?.withoutSourceMaps) : null,
        inProcessMs: median(entry?.inProcess ?? []),
      };
    }),
  };
};

const sampled = (): Samples => ({ deployed: [], inProcess: [], withoutSourceMaps: [] });

/** The summary's rows of this section (bench/run.ts says them too when it could not run). */
export const importFloorWhat = 'cold-start floor: DynamoDB clients, Powertools Logger and Metrics, import';
export const importWhat = '  import in a fresh process, against the cold-start floor';

export const lambdaBundles = async (plan: Plan): Promise<Row[]> => {
  heading('Lambda bundles (as the stack bundles them) and their import time');
  const workspace = await bundleFunctions();
  let imports: ImportTimings;
  try {
    imports = await workspace.timeImports({ runs: plan.importRuns, withoutSourceMaps: plan.importWithoutSourceMaps });
  } finally {
    await workspace.remove();
  }
  const importOf = (name: LambdaFunction) => imports.timings.find((timing) => timing.name === name);
  table([
    ['function', 'cold start', 'shipped', 'import', '× floor', 'no source maps', 'import() alone', 'largest parts'],
    ...workspace.bundles.map((bundle) => {
      const timing = importOf(bundle.name);
      const withoutSourceMaps = timing?.importWithoutSourceMapsMs ?? null;
      return [
        `${bundle.name}.ts${bundle.withCedar ? ' *' : ''}${bundle.requiresStoreClient ? ' †' : ''}`,
        kilobytes(bundle.coldStartBytes),
        kilobytes(bundle.shippedBytes),
        ms(timing?.importMs ?? Number.NaN, 0),
        ratio((timing?.importMs ?? Number.NaN) / imports.floorMs),
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
  line(
    `largest parts: of the cold start; every function's esbuild metafile is in ${relative(projectPath(), metafileFolder)}/`,
  );
  line(`* loads Cedar's wasm (${kilobytes(workspace.cedarWasmBytes)}, not counted) from its own folder when imported`);
  line(
    `floor: the runtime's DynamoDB clients and Powertools Logger and Metrics, made as the functions make them ` +
      `and nothing else, bundled and timed as the functions are: ${ms(imports.floorMs, 0)}; ` +
      `† requires the DynamoDB clients at cold start (a function without them can read below 1×)`,
  );
  return [
    floorRow(importFloorWhat, ms(imports.floorMs, 0)),
    ...workspace.bundles.flatMap((bundle): Row[] => [
      {
        what: `Lambda bundle ${bundle.name}.ts, code loaded at cold start`,
        measured: `${kilobytes(bundle.coldStartBytes)} (${kilobytes(bundle.shippedBytes)} shipped)`,
        target: `≤ ${kilobytes(bundleBudget.coldStartBytes)}`,
        mark: within(bundle.coldStartBytes <= bundleBudget.coldStartBytes),
      },
      overFloorRow(
        importWhat,
        { measuredMs: importOf(bundle.name)?.importMs ?? Number.NaN, floorMs: imports.floorMs },
        bundleBudget.importOverFloor,
      ),
    ]),
  ];
};
