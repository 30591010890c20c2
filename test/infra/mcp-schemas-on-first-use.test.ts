// The MCP SDK's protocol schemas as the bundles load them (mcpSchemasOnFirstUse, applied by the
// bundler to the SDK core's schema modules): loading a module builds none of its schemas; each is
// built when first used, and then accepts and refuses every message as the module loaded unchanged
// does.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { bundleFunction } from '../../infra/bundling/bundle-function.js';
import { mcpSchemasOnFirstUse } from '../../infra/bundling/mcp-schemas-on-first-use.js';
import { projectPath } from '../../infra/paths.js';
import { verifies } from '../support/requirements.js';
import { runProcess } from '../support/spawn.js';

const coreDist = projectPath('node_modules/@modelcontextprotocol/core/dist');

/** Messages and values each schema is asked about: valid ones of several kinds, and wrong ones. */
const corpus: readonly unknown[] = [
  {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'create_order', arguments: { sku: 'A-1', quantity: 2 }, _meta: { progressToken: 'p' } },
  },
  {
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: {} },
      clientInfo: { name: 'c', version: '1' },
    },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done' }], isError: false } },
  { jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'Invalid params' } },
  { tools: [{ name: 'create_order', inputSchema: { type: 'object' } }], nextCursor: 'abc' },
  {
    issuer: 'https://issuer.example',
    authorization_endpoint: 'https://issuer.example/authorize',
    token_endpoint: 'https://issuer.example/token',
    response_types_supported: ['code'],
  },
  { resource: 'https://gateway.example/mcp', authorization_servers: ['https://issuer.example'] },
  { access_token: 't', token_type: 'Bearer', expires_in: 3600 },
  { type: 'text', text: 'hello' },
  { name: 'x', version: '1.0.0' },
  { jsonrpc: '1.0', id: null, method: 7 },
  'tools/call',
  42,
  null,
  {},
  [],
];

/**
 * What a schema says about each value, and its kind: the same text for the same schema. (Not its
 * JSON Schema: zod's generator tells a schema by its identity, which a stand-in does not share;
 * the functions never ask for one of these schemas, see mcp-schemas-on-first-use.ts.)
 */
const answers = (schema: z.ZodType): string =>
  JSON.stringify([
    schema.def.type,
    corpus.map((value) => {
      const parsed = schema.safeParse(value);
      return parsed.success ? { data: parsed.data } : { issues: parsed.error.issues };
    }),
  ]);

let folder: string;
/** The SDK core's modules that build schemas at load, each as shipped and as the bundles load it. */
const modules: {
  name: string;
  shipped: Record<string, unknown>;
  bundled: Record<string, unknown>;
  builtAtLoad: number;
}[] = [];

/** Counts the zod schemas built while `load` runs (zod's constructor hook, called once per schema built). */
const schemasBuiltBy = async <T>(load: () => Promise<T>): Promise<{ value: T; built: number }> => {
  let built = 0;
  Reflect.set(globalThis, '__zod_globalConfig', {
    postProcessor: () => {
      built += 1;
    },
  });
  try {
    return { value: await load(), built };
  } finally {
    Reflect.deleteProperty(globalThis, '__zod_globalConfig');
  }
};

beforeAll(async () => {
  // Inside the project, so the modules' own `import … from "zod/v4"` finds the project's zod.
  folder = await mkdtemp(join(projectPath(), '.bundle-test-mcp-schemas-'));
  const names = (await readdir(coreDist)).filter((file) => /^(?:schemas|auth)-[\w-]+\.mjs$/.test(file));
  for (const name of names) {
    // Without its source map's comment: the map stays beside the module as shipped.
    const source = (await readFile(join(coreDist, name), 'utf8')).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
    await writeFile(join(folder, name), mcpSchemasOnFirstUse(source, name));
    const loaded = await schemasBuiltBy(() => import(pathToFileURL(join(folder, name)).href));
    const shipped: Record<string, unknown> = await import(pathToFileURL(join(coreDist, name)).href);
    modules.push({ name, shipped, bundled: loaded.value, builtAtLoad: loaded.built });
  }
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** The exports of a module that are zod schemas as shipped, by export name. */
const schemasOf = (exports: Record<string, unknown>): [string, z.ZodType][] =>
  Object.entries(exports).flatMap(([key, value]) => (value instanceof z.ZodType ? [[key, value]] : []));

describe('the MCP SDK’s protocol schemas, as the bundles load them', () => {
  it(
    verifies('perf.mcp-schemas-on-first-use', 'loading the SDK core’s schema modules builds none of their schemas'),
    () => {
      expect(modules.map(({ name }) => name.split('-')[0]).sort()).toEqual(['auth', 'schemas']);
      for (const { name, shipped, builtAtLoad } of modules) {
        expect(schemasOf(shipped).length, `${name} defines schemas`).toBeGreaterThan(10);
        expect(builtAtLoad, `${name} built schemas when it was loaded`).toBe(0);
      }
    },
  );

  it(verifies('perf.mcp-schemas-on-first-use', 'a schema is built when it is first read, once'), async () => {
    const schemas = modules.find(({ name }) => name.startsWith('schemas-'));
    const [key] = schemasOf(schemas?.shipped ?? {}).find(([name]) => name !== 'default') ?? [];
    const standIn = key === undefined ? undefined : schemas?.bundled[key];
    if (!(standIn instanceof z.ZodType)) throw new Error('no schema to read');
    const first = await schemasBuiltBy(async () => standIn.safeParse({}).success);
    const again = await schemasBuiltBy(async () => standIn.safeParse({}).success);
    expect(first.built).toBeGreaterThan(0);
    expect(again.built).toBe(0);
    expect(again.value).toBe(first.value);
  });

  it(
    verifies(
      'perf.mcp-schemas-on-first-use',
      'each schema, once used, accepts and refuses every message as the SDK’s own does',
    ),
    () => {
      for (const { name, shipped, bundled } of modules) {
        for (const [key, schema] of schemasOf(shipped)) {
          const standIn = bundled[key];
          expect(standIn instanceof z.ZodType, `${name} ${key} is a zod schema`).toBe(true);
          if (!(standIn instanceof z.ZodType)) continue;
          expect(answers(standIn), `${name} ${key}`).toBe(answers(schema));
        }
      }
    },
  );

  it(
    verifies('perf.mcp-schemas-on-first-use', 'refuses to bundle an SDK whose schema modules are written another way'),
    () => {
      expect(() => mcpSchemasOnFirstUse('const x = 1;\n', 'schemas.mjs')).toThrow(/no longer defines its schemas/);
      expect(() => mcpSchemasOnFirstUse('const ASchema = z.string()\nconst b = 2;\n', 'schemas.mjs')).toThrow(
        /ASchema does not end where the bundler expects/,
      );
    },
  );
});

/**
 * Imports the module named by argv[1] in a fresh process, counting the zod schemas built, then has
 * the SDK's classifier read a plain tools/call: how many were built by the import, and its verdict.
 */
const probe = `
let built = 0;
globalThis.__zod_globalConfig = { postProcessor: () => { built += 1; } };
const { classifyInboundRequest } = await import(process.argv[1]);
const atImport = built;
const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_order', arguments: {},
  _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } };
const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: '2026-07-28',
  mcpMethodHeader: 'tools/call', mcpNameHeader: 'read_order', body });
process.stdout.write(JSON.stringify({ atImport, route: route.kind, revision: route.classification?.revision }));
`;

const imported = async (module: string): Promise<{ atImport: number; route: string; revision: string }> => {
  const result = await runProcess(process.execPath, ['--input-type=module', '-e', probe, module], {
    cwd: projectPath(),
    env: { PATH: process.env.PATH ?? '' },
  });
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

describe('the MCP SDK in a bundle as the stack bundles functions', () => {
  it(
    verifies(
      'perf.mcp-schemas-on-first-use',
      'the bundled SDK builds a fraction of the schemas its import builds unbundled, and classifies a call alike',
    ),
    async () => {
      const entry = join(folder, 'classifier.ts');
      await writeFile(entry, "export { classifyInboundRequest } from '@modelcontextprotocol/server';\n");
      const bundle = await bundleFunction('classifier', join(folder, 'classifier'), { cedar: false, entry });
      const shipped = await imported('@modelcontextprotocol/server');
      const bundled = await imported(pathToFileURL(bundle.entry).href);
      expect(bundled.route).toBe(shipped.route);
      expect(bundled.revision).toBe(shipped.revision);
      expect(shipped.atImport, 'the SDK builds its protocol schemas when it is imported').toBeGreaterThan(1000);
      expect(bundled.atImport).toBeLessThan(shipped.atImport / 4);
    },
  );
});
