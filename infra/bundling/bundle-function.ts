// The one way a gateway function is bundled for Lambda, used by the stack (GatewayFunction), the
// bundle tests and the bench alike: esbuild, ESM for Node 24, minified, external source maps
// without sources, @aws-sdk/* left to the Lambda runtime, and code split so modules a function
// loads only on some calls (an MCP server's client, the call-tool channel's WebSocket) stay out of
// its cold start. Two replacements keep dead weight out of every bundle: zod's table of locales
// (English only) and the MCP SDK's Node shims (no second copy of ajv). Node's built-ins and the
// SDK are required, not imported as ES modules, and Cedar's wasm is compiled with V8 settings
// for a short-lived process; it is copied beside the code of the functions that decide, and only
// those.
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { cedarRelease } from '../../shared/policy/cedar-release.js';
import { projectPath } from '../paths.js';

/** Cedar's WebAssembly, read by its Node build from the folder of the code that loads it. */
export const cedarWasm = projectPath('node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm_bg.wasm');
const cedarWasmName = 'cedar_wasm_bg.wasm';

/** CommonJS dependencies call require() and read files next to themselves: an ESM bundle needs both defined. */
const banner = [
  "import { createRequire as __gatewayCreateRequire } from 'node:module';",
  "import { fileURLToPath as __gatewayFileUrl } from 'node:url';",
  "import { dirname as __gatewayDirname } from 'node:path';",
  'const require = __gatewayCreateRequire(import.meta.url);',
  'const __dirname = __gatewayDirname(__gatewayFileUrl(import.meta.url));',
].join(' ');

const here = (file: string): string => projectPath('infra', 'bundling', file);

/** Modules replaced in every bundle: what imports them, what it asks for, and what it gets instead. */
const replacements: readonly { readonly importer: RegExp; readonly request: RegExp; readonly with: string }[] = [
  { importer: /node_modules\/zod\/v4\//, request: /(^|\/)locales\/index\.js$/, with: here('zod-locales.ts') },
  { importer: /./, request: /^@modelcontextprotocol\/server\/_shims$/, with: here('mcp-server-shims.ts') },
  { importer: /./, request: /^@modelcontextprotocol\/client\/_shims$/, with: here('mcp-client-shims.ts') },
];

/** What the Lambda runtime provides and the bundle leaves out: the AWS SDK. */
const providedByRuntime = /^@aws-sdk\//;

/**
 * Node's built-in modules and the runtime's AWS SDK, reached through require() rather than
 * imported as ES modules. The ES module of a built-in reads every one of its exports when it is
 * created, which loads the lazy ones (node:http's WebSocket and EventSource load Node's copy of
 * undici, node:tls its root certificates); importing a CommonJS package (the SDK) as an ES module
 * has Node scan its source for the names it exports. Through require() neither happens.
 */
const requiredNotImported: Plugin = {
  name: 'gateway-required-not-imported',
  setup(plugin) {
    plugin.onResolve({ filter: /^(node:|@aws-sdk\/)?[a-z0-9_-]+(\/[a-z0-9_-]+)?$/ }, (args) => {
      if (args.kind !== 'import-statement') return undefined;
      if (isBuiltin(args.path)) return { path: args.path.replace(/^(node:)?/, 'node:'), namespace: 'gateway-required' };
      return providedByRuntime.test(args.path) ? { path: args.path, namespace: 'gateway-required' } : undefined;
    });
    plugin.onLoad({ filter: /.*/, namespace: 'gateway-required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * V8 settings for Cedar's wasm (the only wasm the functions load), set before its module is
 * compiled.
 *
 * - Lazy validation: V8 compiles a wasm function only when it first runs, but checks every one of
 *   the module's functions when the module is made. A call runs a small part of Cedar's 4 MB, so
 *   each function is checked when it is compiled instead (some 10 ms less at import). The module
 *   is Cedar's own, shipped with the code: an invalid one would fail the first decision rather
 *   than the import.
 * - Tiering budget: V8 starts every wasm function on its baseline compiler and recompiles the ones
 *   that have run a while with its optimizing one. On the first call, parsing the policies and the
 *   schema runs enough of Cedar to send dozens of its functions to that second compiler: work the
 *   call waits for (some 60 to 90 ms of CPU), which the evaluations that follow barely gain from.
 *   Thirty times V8's default budget (13 000 000) before a function is recompiled leaves that
 *   work to the functions that stay hot.
 */
export const cedarWasmFlags: readonly string[] = ['--wasm-lazy-validation', '--wasm-tiering-budget=390000000'];

/** How Cedar's Node build makes its wasm when it is required: read, compiled and instantiated at once. */
const cedarWasmAtImport = [
  "const wasmBytes = require('fs').readFileSync(wasmPath);",
  'const wasmModule = new WebAssembly.Module(wasmBytes);',
  'let wasm = new WebAssembly.Instance(wasmModule, __wbg_get_imports()).exports;',
  'wasm.__wbindgen_start();',
].join('\n');

/**
 * What the bundles do instead: the file is read off the main thread, in one read started when the
 * module is required (it completes while the rest of the function's code is imported), and the
 * module is compiled and instantiated when Cedar is first used (the first decision, after the first
 * call has read its configuration). `wasm` stands for the instance until then: its first read makes
 * the instance from the bytes read, or from the file read there and then should the read not be
 * done. The wasm is compiled once per process, and no decision fails or waits on the read. A file
 * or module that fails fails there, with its error.
 */
const cedarWasmOnFirstUse = [
  "const wasmFs = require('node:fs');",
  'let wasmMade = false;',
  'let wasmBytes;',
  'const makeWasm = () => {',
  '  wasmMade = true;',
  '  const module = new WebAssembly.Module(wasmBytes ?? wasmFs.readFileSync(wasmPath));',
  '  wasmBytes = undefined;',
  '  wasm = new WebAssembly.Instance(module, __wbg_get_imports()).exports;',
  '  wasm.__wbindgen_start();',
  '  return wasm;',
  '};',
  'let wasm = new Proxy({}, { get: (_target, name) => makeWasm()[name] });',
  'try {',
  "  const file = wasmFs.openSync(wasmPath, 'r');",
  '  const bytes = Buffer.allocUnsafe(wasmFs.fstatSync(file).size);',
  '  wasmFs.read(file, bytes, 0, bytes.length, 0, (error, read) => {',
  '    wasmFs.close(file, () => {});',
  '    if (!error && read === bytes.length && !wasmMade) wasmBytes = bytes;',
  '  });',
  '} catch {}',
].join('\n');

/** Cedar's Node build (its source) as the bundles load it: V8's flags set first, its wasm made off the import. */
export const cedarWasmModule = (source: string, path: string): string => {
  // A Cedar release that makes its wasm another way fails the bundling rather than ship a bundle that blocks on it again.
  if (!source.includes(cedarWasmAtImport)) {
    throw new Error(`${path} no longer makes its wasm as the bundler expects; see cedarWasmOnFirstUse`);
  }
  return [
    ...cedarWasmFlags.map((flag) => `require('node:v8').setFlagsFromString(${JSON.stringify(flag)});`),
    source.replace(cedarWasmAtImport, cedarWasmOnFirstUse),
  ].join('\n');
};

/**
 * The functions take config:push's answers only from the Cedar release they name as their own
 * (cedarRelease): a Cedar of another release fails the bundling until that name is changed too.
 */
export const ownCedarRelease = async (packageFile: string): Promise<void> => {
  const { version } = JSON.parse(await readFile(packageFile, 'utf8'));
  if (version !== cedarRelease) {
    throw new Error(
      `Cedar ${String(version)} (${packageFile}) is not the release the code names (cedarRelease ${cedarRelease})`,
    );
  }
};

/** Cedar's Node build compiles its wasm when it is first required: it is loaded as cedarWasmModule makes it. */
const cedarWasmCompiled: Plugin = {
  name: 'gateway-cedar-wasm-flags',
  setup(plugin) {
    plugin.onLoad({ filter: /@cedar-policy[\\/]cedar-wasm[\\/]nodejs[\\/]cedar_wasm\.js$/ }, async (args) => {
      await ownCedarRelease(join(dirname(args.path), 'package.json'));
      return { contents: cedarWasmModule(await readFile(args.path, 'utf8'), args.path), loader: 'js' };
    });
  },
};

const replacing: Plugin = {
  name: 'gateway-replacements',
  setup(plugin) {
    for (const replacement of replacements) {
      plugin.onResolve({ filter: replacement.request }, (args) =>
        replacement.importer.test(args.importer.replaceAll('\\', '/')) ? { path: replacement.with } : undefined,
      );
    }
  },
};

export interface FunctionBundle {
  /** The folder Lambda is given: index.mjs, its chunks, their source maps, and Cedar's wasm if it decides. */
  readonly folder: string;
  /** The handler module's file. */
  readonly entry: string;
  readonly metafile: Metafile;
  /** Bytes of code loaded when the function starts: the entry and every chunk it imports statically. */
  readonly coldStartBytes: number;
  /** Bytes of all code shipped (chunks loaded on demand too), without source maps and the wasm. */
  readonly shippedBytes: number;
  readonly withCedar: boolean;
}

/** The output files the entry loads before its handler runs (static imports, followed through chunks). */
export const coldStartFiles = (metafile: Metafile, entry: string): string[] => {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imported of metafile.outputs[file]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(entry);
  return [...seen];
};

/**
 * Bundles `functions/<name>.ts` into `folder` (emptied first). `cedar` says whether the function
 * decides: its wasm is then shipped, and a bundle that loads Cedar without it (or the reverse) is
 * refused, so the stack cannot ship a function that would fail on its first decision. `entry`
 * bundles another namespace the same way (the bench's floors, timed beside the functions).
 */
export const bundleFunction = async (
  name: string,
  folder: string,
  options: { cedar: boolean; entry?: string },
): Promise<FunctionBundle> => {
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const entryFile = options.entry ?? projectPath('functions', `${name}.ts`);
  const result = await build({
    absWorkingDir: projectPath(),
    entryPoints: { index: entryFile },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    outdir: folder,
    outExtension: { '.js': '.mjs' },
    // Chunks beside the entry: a CommonJS dependency finds files next to it through __dirname.
    chunkNames: 'chunk-[hash]',
    minify: true,
    // Linked, so the functions' NODE_OPTIONS=--enable-source-maps turns a logged error's stack into
    // source files and lines (Node reads the maps at load: ADR 92 says what that costs).
    sourcemap: 'linked',
    sourcesContent: false,
    external: ['@aws-sdk/*'],
    mainFields: ['module', 'main'],
    banner: { js: banner },
    plugins: [replacing, requiredNotImported, cedarWasmCompiled],
    metafile: true,
    logLevel: 'silent',
  });
  const outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.mjs'));
  // Every module imported with import() is an entry point of its own chunk: the handler's is the one built from its entry.
  const entryPoint = relative(projectPath(), entryFile);
  const entry = outputs.find((file) => result.metafile.outputs[file]?.entryPoint === entryPoint);
  if (entry === undefined) throw new Error(`bundling ${name}: esbuild produced no entry module`);
  let loadsCedar = false;
  for (const file of await readdir(folder)) {
    if (file.endsWith('.mjs') && (await readFile(join(folder, file), 'utf8')).includes(cedarWasmName))
      loadsCedar = true;
  }
  if (loadsCedar !== options.cedar) {
    throw new Error(
      options.cedar
        ? `bundling ${name}: it is declared to decide but does not load Cedar`
        : `bundling ${name}: it loads Cedar, but is not declared to decide (its wasm would be missing)`,
    );
  }
  if (options.cedar) await copyFile(cedarWasm, join(folder, cedarWasmName));
  const bytesOf = async (files: readonly string[]): Promise<number> =>
    (await Promise.all(files.map(async (file) => (await stat(projectPath(file))).size))).reduce((a, b) => a + b, 0);
  return {
    folder,
    entry: projectPath(entry),
    metafile: result.metafile,
    coldStartBytes: await bytesOf(coldStartFiles(result.metafile, entry)),
    shippedBytes: await bytesOf(outputs),
    withCedar: options.cedar,
  };
};

/** The modules in the code a bundle loads at cold start, each with the bytes it puts there. */
export const coldStartInputs = (bundle: FunctionBundle): { readonly path: string; readonly bytes: number }[] => {
  const cold = new Set(coldStartFiles(bundle.metafile, relative(projectPath(), bundle.entry)));
  return Object.entries(bundle.metafile.outputs)
    .filter(([file]) => cold.has(file))
    .flatMap(([, output]) =>
      Object.entries(output.inputs).map(([path, input]) => ({ path, bytes: input.bytesInOutput })),
    );
};

/** The bytes of a bundle's cold start per npm package (or per project folder), largest first. */
export const coldStartParts = (bundle: FunctionBundle): { readonly part: string; readonly bytes: number }[] => {
  const parts = new Map<string, number>();
  for (const { path, bytes } of coldStartInputs(bundle)) {
    const part = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path.split('/').slice(0, 2).join('/');
    parts.set(part, (parts.get(part) ?? 0) + bytes);
  }
  return [...parts].map(([part, bytes]) => ({ part, bytes })).sort((a, b) => b.bytes - a.bytes);
};

/** Writes a bundle's esbuild metafile (what each module weighs), for inspection with esbuild's analyzer. */
export const writeMetafile = (bundle: FunctionBundle, file: string): Promise<void> =>
  writeFile(file, JSON.stringify(bundle.metafile));
