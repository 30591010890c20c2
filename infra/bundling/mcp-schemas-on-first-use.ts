// The MCP SDK's protocol schemas as the bundles load them: each built when it is first used, not
// when the SDK is imported. The SDK's core module builds its whole schema set (some 1,070 zod
// schemas: every request, result and notification of the protocol, and the OAuth metadata) when it
// is loaded; the SDK's own wire layer builds the schemas of each revision on first use already,
// and a plain tools/call uses a few dozen of the core's. Each top-level schema of those modules
// becomes a stand-in that builds the schema on its first read and hands every read, write and
// `instanceof` on to it, so the schema, its methods and its parses are the SDK's own, once built.
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

/** The SDK core's modules that build schemas when they are loaded: the protocol's, OAuth's. */
const schemaModules = /@modelcontextprotocol[\\/]core[\\/]dist[\\/](?:schemas|auth)-[\w-]+\.mjs$/;

/**
 * The stand-in: a Proxy of an empty object whose traps read and write the schema, built by `make`
 * on the first trap. Methods are read with the schema as receiver, so they bind to the schema.
 */
const standIn = [
  'const __gatewaySchemaOnFirstUse = (make) => {',
  '  let schema;',
  '  const built = () => (schema ??= make());',
  '  return new Proxy({}, {',
  '    get: (_stand, key) => { const real = built(); return Reflect.get(real, key, real); },',
  '    set: (_stand, key, value) => { const real = built(); return Reflect.set(real, key, value, real); },',
  '    has: (_stand, key) => Reflect.has(built(), key),',
  '    getPrototypeOf: () => Reflect.getPrototypeOf(built()),',
  '    defineProperty: (_stand, key, descriptor) => Reflect.defineProperty(built(), key, descriptor),',
  '    deleteProperty: (_stand, key) => Reflect.deleteProperty(built(), key),',
  '  });',
  '};',
].join('\n');

/** A schema's statement starts at column 0 as `const <Name>Schema = …`; its lines after it are indented or close brackets. */
const schemaStatement = /^const (\w+Schema) = (.*)$/;
const continuation = /^[\t )\]}]/;

/** The module's source with each top-level schema made on first use (see standIn). */
export const mcpSchemasOnFirstUse = (source: string, path: string): string => {
  const lines = source.split('\n');
  const out: string[] = [standIn];
  let made = 0;
  for (let at = 0; at < lines.length; ) {
    const start = schemaStatement.exec(lines[at] ?? '');
    if (start === null) {
      out.push(lines[at] ?? '');
      at += 1;
      continue;
    }
    let end = at + 1;
    while (end < lines.length && continuation.test(lines[end] ?? '')) end += 1;
    const expression = [start[2] ?? '', ...lines.slice(at + 1, end)].join('\n').trimEnd();
    // An SDK release that writes its schemas another way fails the bundling rather than ship half of them eager.
    if (!expression.endsWith(';')) {
      throw new Error(`${path}: ${start[1]} does not end where the bundler expects; see mcpSchemasOnFirstUse`);
    }
    out.push(`const ${start[1]} = __gatewaySchemaOnFirstUse(() => (${expression.slice(0, -1)}));`);
    made += 1;
    at = end;
  }
  if (made === 0)
    throw new Error(`${path} no longer defines its schemas as the bundler expects; see mcpSchemasOnFirstUse`);
  return out.join('\n');
};

/** The SDK core's schema modules, loaded as mcpSchemasOnFirstUse makes them. */
export const mcpSchemasBuiltOnFirstUse: Plugin = {
  name: 'gateway-mcp-schemas-on-first-use',
  setup(plugin) {
    plugin.onLoad({ filter: schemaModules }, async (args) => ({
      contents: mcpSchemasOnFirstUse(await readFile(args.path, 'utf8'), args.path),
      loader: 'js',
    }));
  },
};
