// What each function weighs, as the stack bundles it: the code loaded at cold start stays within
// its budget, and no function ships the parsers and compilers that belong to config:push and the
// local runtime. A dependency that grows, or an import that drags a parser onto the request path,
// fails here with the modules to blame. How the bundles start is checked here too: Node's built-ins
// and the AWS SDK required rather than imported, and Cedar's wasm compiled with the bundles' V8 settings.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleBudget, forbiddenInBundles } from '../../infra/bundling/budgets.js';
import {
  bundleFunction,
  cedarWasmFlags,
  coldStartFiles,
  coldStartInputs,
  coldStartParts,
  type FunctionBundle,
} from '../../infra/bundling/bundle-function.js';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';

/** Every function the stack deploys, and whether it decides (ships Cedar). */
const functions = {
  mcp: true,
  'held-call-steps': true,
  reconciler: true,
  'call-tool-socket': true,
  console: false,
  'resource-metadata': false,
  'agent-authorizer': false,
} as const;

let out: string;
const bundles = new Map<string, FunctionBundle>();

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'gateway-bundle-budget-'));
  for (const [name, cedar] of Object.entries(functions)) {
    bundles.set(name, await bundleFunction(name, join(out, name), { cedar }));
  }
}, 120_000);

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KiB`;

/** The heaviest inputs of the cold start, to say what to look at when the budget is exceeded. */
const heaviest = (bundle: FunctionBundle): string =>
  coldStartParts(bundle)
    .slice(0, 6)
    .map(({ part, bytes }) => `${part} ${kib(bytes)}`)
    .join(', ');

describe('the functions as the stack bundles them', () => {
  it.each(Object.keys(functions))(
    verifies('perf.bundle-budget', '%s loads no more code at cold start than its budget'),
    (name) => {
      const bundle = bundles.get(name);
      if (bundle === undefined) throw new Error(`${name} was not bundled`);
      expect(
        bundle.coldStartBytes,
        `${name}: ${kib(bundle.coldStartBytes)} at cold start, over ${kib(bundleBudget.coldStartBytes)}; heaviest: ${heaviest(bundle)}`,
      ).toBeLessThanOrEqual(bundleBudget.coldStartBytes);
      expect(bundle.shippedBytes).toBeGreaterThanOrEqual(bundle.coldStartBytes);
    },
  );

  it.each(Object.keys(functions))(
    verifies('perf.bundle-budget', '%s ships no OpenAPI parser, YAML parser, ajv compiler or undici'),
    (name) => {
      const bundle = bundles.get(name);
      if (bundle === undefined) throw new Error(`${name} was not bundled`);
      const inputs = Object.values(bundle.metafile.outputs).flatMap((output) => Object.keys(output.inputs));
      const found = forbiddenInBundles.flatMap((forbidden) =>
        inputs.filter((input) => forbidden.input.test(input)).map((input) => `${forbidden.what} (${input})`),
      );
      expect(found, `${name} ships what the request path must not load`).toEqual([]);
    },
  );

  it(
    verifies(
      'perf.bundle-budget',
      'keeps the MCP client and the WebSocket client out of the MCP function’s cold start',
    ),
    () => {
      const bundle = bundles.get('mcp');
      if (bundle === undefined) throw new Error('mcp was not bundled');
      const coldInputs = coldStartInputs(bundle).map(({ path }) => path);
      const shippedInputs = Object.values(bundle.metafile.outputs).flatMap((output) => Object.keys(output.inputs));
      for (const lazy of [/@modelcontextprotocol\/client\//, /node_modules\/ws\//]) {
        expect(
          shippedInputs.some((input) => lazy.test(input)),
          `${lazy} is shipped`,
        ).toBe(true);
        expect(coldInputs.filter((input) => lazy.test(input))).toEqual([]);
      }
    },
  );

  it(
    verifies(
      'perf.bundle-budget',
      'loads the KMS, Step Functions and EventBridge SDKs on first use, not when the MCP function starts',
    ),
    () => {
      const bundle = bundles.get('mcp');
      if (bundle === undefined) throw new Error('mcp was not bundled');
      const cold = coldStartFiles(bundle.metafile, relative(projectPath(), bundle.entry));
      // Loaded with the code that starts: imported or required by a cold-start file.
      const atStart = Object.entries(bundle.metafile.outputs).flatMap(([file, output]) =>
        cold.includes(file)
          ? output.imports
              .filter((entry) => entry.external && ['import-statement', 'require-call'].includes(entry.kind))
              .map((entry) => entry.path)
          : [],
      );
      // Required by a chunk the code loads on a call that needs it.
      const onDemandImports = Object.entries(bundle.metafile.outputs).flatMap(([file, output]) =>
        cold.includes(file) ? [] : output.imports.filter((entry) => entry.external).map((entry) => entry.path),
      );
      const onDemand = ['@aws-sdk/client-kms', '@aws-sdk/client-sfn', '@aws-sdk/client-eventbridge'];
      expect(atStart.filter((path) => onDemand.includes(path))).toEqual([]);
      expect(new Set(onDemandImports.filter((path) => onDemand.includes(path)))).toEqual(new Set(onDemand));
      expect(atStart).toContain('@aws-sdk/client-dynamodb');
    },
  );

  it.each(Object.keys(functions))(
    verifies('perf.zod-tree-shaken', '%s carries only the parts of zod its code uses, not zod’s namespace object'),
    (name) => {
      const bundle = bundles.get(name);
      if (bundle === undefined) throw new Error(`${name} was not bundled`);
      const zodInputs = Object.values(bundle.metafile.outputs).flatMap((output) =>
        Object.entries(output.inputs).filter(([input]) => /node_modules\/zod\//.test(input)),
      );
      expect(zodInputs.length, `${name} uses zod`).toBeGreaterThan(0);
      // The namespace object lists every export of zod, so building it keeps all of them: the
      // JSON Schema reader and the z.compile code generator among them, which the gateway never uses.
      const namespaceBytes = zodInputs
        .filter(([input]) => /node_modules\/zod\/v4\/classic\/external\.js$/.test(input))
        .reduce((sum, [, { bytesInOutput }]) => sum + bytesInOutput, 0);
      const unused = zodInputs
        .filter(
          ([input, { bytesInOutput }]) => bytesInOutput > 0 && /zod\/v4\/classic\/from-json-schema\.js$/.test(input),
        )
        .map(([input]) => input);
      expect(
        namespaceBytes,
        `${name} builds zod's namespace object: import zod as \`import * as z from 'zod'\`, never \`import { z }\``,
      ).toBe(0);
      expect(unused).toEqual([]);
    },
  );

  it.each(Object.keys(functions))(
    verifies('perf.bundle-requires', '%s requires Node built-ins and the AWS SDK, importing none statically'),
    (name) => {
      const bundle = bundles.get(name);
      if (bundle === undefined) throw new Error(`${name} was not bundled`);
      const imported = Object.entries(bundle.metafile.outputs).flatMap(([file, output]) =>
        output.imports
          .filter(
            (entry) =>
              entry.external &&
              entry.kind === 'import-statement' &&
              (isBuiltin(entry.path) || entry.path.startsWith('@aws-sdk/')),
          )
          .map((entry) => `${entry.path} (${file})`),
      );
      expect(imported).toEqual([]);
    },
  );

  it.each(Object.keys(functions))(
    verifies('perf.sdk-first-use-required', '%s requires an AWS SDK package it loads on first use, never import()s it'),
    (name) => {
      const bundle = bundles.get(name);
      if (bundle === undefined) throw new Error(`${name} was not bundled`);
      expect(relative(bundle.folder, bundle.entry), 'the handler module is the entry').toBe('index.mjs');
      const imported = Object.entries(bundle.metafile.outputs).flatMap(([file, output]) =>
        output.imports
          .filter((entry) => entry.external && entry.kind === 'dynamic-import' && entry.path.startsWith('@aws-sdk/'))
          .map((entry) => `${entry.path} (${file})`),
      );
      expect(imported).toEqual([]);
    },
  );

  it.each(Object.keys(functions))(
    verifies('perf.cold-start-sdk-store-only', "%s requires no AWS SDK package at cold start but DynamoDB's"),
    (name) => {
      const bundle = bundles.get(name);
      if (bundle === undefined) throw new Error(`${name} was not bundled`);
      const required = coldStartInputs(bundle)
        .map(({ path }) => /^gateway-required:(@aws-sdk\/.+)$/.exec(path)?.[1])
        .filter((pkg) => pkg !== undefined);
      expect(required.filter((pkg) => pkg !== '@aws-sdk/client-dynamodb' && pkg !== '@aws-sdk/lib-dynamodb')).toEqual(
        [],
      );
    },
  );

  /** The environment module of its own a function reads, beside environment.ts (none: environment.ts's only). */
  const ownEnvironment: Readonly<Record<string, string>> = {
    console: 'functions/commons/console-environment.ts',
    'agent-authorizer': 'functions/commons/token-environments.ts',
  };

  it.each(Object.keys(functions))(
    verifies('perf.own-environment-only', "%s's cold start builds no other function's environment schema"),
    (name) => {
      const bundle = bundles.get(name);
      if (bundle === undefined) throw new Error(`${name} was not bundled`);
      const environments = coldStartInputs(bundle)
        .map(({ path }) => path)
        .filter((path) => /^functions\/commons\/[a-z-]*environments?\.ts$/.test(path))
        .sort();
      expect(environments).toEqual(
        [
          'functions/commons/environment.ts',
          ...(Object.hasOwn(ownEnvironment, name) ? [ownEnvironment[name]] : []),
        ].sort(),
      );
    },
  );

  it(verifies('perf.console-oidc-on-first-use', "the console's cold start loads no OpenID Connect client"), () => {
    const bundle = bundles.get('console');
    if (bundle === undefined) throw new Error('console was not bundled');
    const oidc = coldStartParts(bundle)
      .map(({ part }) => part)
      .filter((part) => part === 'openid-client' || part === 'oauth4webapi');
    expect(oidc).toEqual([]);
  });

  const decide = Object.entries(functions)
    .filter(([, cedar]) => cedar)
    .map(([name]) => name);

  /** Where in the code that compiles Cedar's wasm the flag is set, and where the module is made. */
  const flagSet = async (name: string, flag: string): Promise<{ set: number; compiled: number }> => {
    const bundle = bundles.get(name);
    if (bundle === undefined) throw new Error(`${name} was not bundled`);
    expect(cedarWasmFlags).toContain(flag);
    const code = await Promise.all(
      (await readdir(bundle.folder))
        .filter((file) => file.endsWith('.mjs'))
        .map((file) => readFile(join(bundle.folder, file), 'utf8')),
    );
    const cedar = code.find((text) => text.includes('new WebAssembly.Module('));
    if (cedar === undefined) throw new Error(`${name} compiles no wasm`);
    return {
      set: cedar.indexOf(`setFlagsFromString(${JSON.stringify(flag)})`),
      compiled: cedar.indexOf('new WebAssembly.Module('),
    };
  };

  it.each(decide)(
    verifies('perf.cedar-wasm-tiering', '%s sets the wasm tiering budget before Cedar compiles its wasm'),
    async (name) => {
      const { set, compiled } = await flagSet(name, '--wasm-tiering-budget=390000000');
      expect(set, 'the budget is set in the code that compiles the wasm').toBeGreaterThanOrEqual(0);
      expect(set).toBeLessThan(compiled);
    },
  );

  it.each(decide)(
    verifies('perf.cedar-wasm-lazy-validation', '%s turns on lazy wasm validation before Cedar compiles its wasm'),
    async (name) => {
      const { set, compiled } = await flagSet(name, '--wasm-lazy-validation');
      expect(set, 'lazy validation is set in the code that compiles the wasm').toBeGreaterThanOrEqual(0);
      expect(set).toBeLessThan(compiled);
    },
  );
});
